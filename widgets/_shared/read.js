// A number as a reader types it, read exactly: the answer boxes compare it with ffn's answer
// (answers/lab.js), the sizer and the router explorer read their integer fields with it
// (BigInt, however large: ffn's ints have no limit, so neither has the text read here; the
// pattern runs in time linear in the text, a million characters in milliseconds).

const NUMBER = new RegExp(
  "^([+\\-\u2212]?)\\s*"  // a sign: plus, hyphen-minus or the minus sign
  + "(\\d{1,3}(?:([,\\s])\\d{3})(?:\\3\\d{3})*|\\d*)"  // digits, maybe grouped by 3 (, or space)
  + "(?:\\.(\\d*))?"  // a fraction
  + "(?:[eE]([+\\-\u2212]?)(\\d{1,4}))?$");  // a power of ten

/** A typed number as {negative, digits (BigInt), exponent, percent}: the value is
 * ±digits · 10**exponent; null when it is not a number (empty, letters, commas not in
 * thousands places). */
export function readNumber(text) {
  let s = String(text).trim();
  const percent = s.endsWith("%");
  if (percent) s = s.slice(0, -1).trimEnd();
  const match = NUMBER.exec(s);
  if (!match) return null;
  const [, sign, whole, , fraction = "", expSign, expDigits = "0"] = match;
  const digits = whole.replace(/\D/g, "") + fraction;
  if (digits === "") return null;
  const power = Number(expDigits) * (expSign === "-" || expSign === "\u2212" ? -1 : 1);
  return {negative: sign !== "" && sign !== "+", digits: BigInt(digits),
          exponent: power - fraction.length, percent};
}

/** A typed whole number as a BigInt: "4096", "1e3" (1000), "2.0" and "20e-1" (2), "-5" (a
 * check by ffn's rule refuses it by name); null for text that is no number, a fraction
 * ("2.5") or a percentage. */
export function readInteger(text) {
  const x = readNumber(text);
  if (x === null || x.percent) return null;
  const unit = x.exponent >= 0 ? 1n : 10n ** BigInt(-x.exponent);
  if (x.digits % unit !== 0n) return null;
  const whole = x.exponent >= 0 ? x.digits * 10n ** BigInt(x.exponent) : x.digits / unit;
  return x.negative ? -whole : whole;
}
