// The exercises' answer boxes: reading the number a reader types and comparing it with ffn's
// answer at the rounding the exercise states (data.py). Decimal arithmetic on BigInt digits
// (../_shared/read.js), never on doubles, so "0.66656" is compared digit by digit.
// tests/test_widget_answers.py holds checkAnswer to a Decimal oracle.
import {describeValue} from "../_shared/check.js";
import {readNumber} from "../_shared/read.js";

const pow10 = k => 10n ** BigInt(k);

/** |digits| · 10**exponent rounded to a multiple of 10**place, as BigInts at that place:
 * one candidate, or two at a tie (half up and half down both count as rounding to it). */
function roundAt(digits, exponent, place) {
  if (exponent >= place) return [digits * pow10(exponent - place)];
  const unit = pow10(place - exponent);
  const down = digits / unit, twice = 2n * (digits % unit);
  return twice < unit ? [down] : twice > unit ? [down + 1n] : [down, down + 1n];
}

function same(negA, a, expA, negB, b, expB) {
  if (a === 0n && b === 0n) return true;  // -0 is 0
  const place = Math.min(expA, expB);
  return negA === negB && a * pow10(expA - place) === b * pow10(expB - place);
}

/** What a reader typed, against the expected answer (a decimal string at the stated rounding)
 * and the rounding, {decimals: d}, {figures: n} or {exact: true} (a percentage adds
 * percent: true, and then a trailing "%" may be typed). The typed number is rounded to the
 * stated place ("0.666559" to five decimals is 0.66656), so more digits that round to the
 * answer are right, fewer are not. Returns {status: "right" | "wrong" | "unreadable"}, with
 * `reason` ("empty", "percent", "number") when unreadable. */
export function checkAnswer(typed, expected, rounding) {
  const want = checkExpected(expected);
  checkRounding(rounding);
  if (String(typed).trim() === "") return {status: "unreadable", reason: "empty"};
  const x = readNumber(typed);
  if (x === null) return {status: "unreadable", reason: "number"};
  if (x.percent && !rounding.percent) return {status: "unreadable", reason: "percent"};
  let place = null;
  if (rounding.decimals !== undefined) place = -Number(rounding.decimals);
  if (rounding.figures !== undefined) {
    place = x.digits.toString().length + x.exponent - Number(rounding.figures);
  }
  const candidates = place === null ? [[x.digits, x.exponent]]
    : roundAt(x.digits, x.exponent, place).map(d => [d, place]);
  const right = candidates.some(([d, e]) =>
    same(x.negative, d, e, want.negative, want.digits, want.exponent));
  return {status: right ? "right" : "wrong"};
}

/** The expected answer, read: a string holding a number (data.py's "-0.24721", "2.78e+12"),
 * else a TypeError naming `expected` (the page's data would be broken, not the reader's). */
function checkExpected(expected) {
  const want = typeof expected === "string" ? readNumber(expected) : null;
  if (want === null || want.percent) {
    throw new TypeError("expected must be a number written as a string (\"-0.24721\", "
                        + `"2.78e+12"), got ${describeValue(expected)}`);
  }
  return want;
}

/** The rounding: {decimals: d >= 0}, {figures: n >= 1} or {exact: true}, with percent a
 * boolean if given; else a TypeError naming `rounding`. */
function checkRounding(rounding) {
  const bad = why => new TypeError(`rounding must be {decimals: d}, {figures: n} or `
                                   + `{exact: true}${why}, got ${describeValue(rounding)}`);
  if (rounding === null || typeof rounding !== "object" || Array.isArray(rounding)) throw bad("");
  const kinds = ["decimals", "figures", "exact"].filter(k => rounding[k] !== undefined);
  if (kinds.length !== 1) throw bad(" (one of them)");
  const whole = v => Number.isSafeInteger(v) || typeof v === "bigint";
  if (kinds[0] === "decimals" && !(whole(rounding.decimals) && rounding.decimals >= 0)) {
    throw bad(": decimals a whole number >= 0");
  }
  if (kinds[0] === "figures" && !(whole(rounding.figures) && rounding.figures >= 1)) {
    throw bad(": figures a whole number >= 1");
  }
  if (kinds[0] === "exact" && rounding.exact !== true) throw bad(": exact true");
  if (rounding.percent !== undefined && typeof rounding.percent !== "boolean") {
    throw bad(": percent a boolean");
  }
}
