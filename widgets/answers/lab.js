// The exercises' answer boxes: reading the number a reader types and comparing it with ffn's
// answer at the rounding the exercise states (data.py). Decimal arithmetic on BigInt digits
// (../_shared/read.js), never on doubles, so "0.66656" is compared digit by digit.
// tests/test_widget_answers.py holds checkAnswer to a Decimal oracle.
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
  if (String(typed).trim() === "") return {status: "unreadable", reason: "empty"};
  const x = readNumber(typed);
  if (x === null) return {status: "unreadable", reason: "number"};
  if (x.percent && !rounding.percent) return {status: "unreadable", reason: "percent"};
  const want = readNumber(expected);
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
