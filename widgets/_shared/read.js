// A number as a reader types it, read exactly: the answer boxes compare it with ffn's answer
// (answers/lab.js), the sizer reads its integer fields with it (BigInt, however large).

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
  const match = s.length <= 80 ? NUMBER.exec(s) : null;
  if (!match) return null;
  const [, sign, whole, , fraction = "", expSign, expDigits = "0"] = match;
  const digits = whole.replace(/\D/g, "") + fraction;
  if (digits === "") return null;
  const power = Number(expDigits) * (expSign === "-" || expSign === "\u2212" ? -1 : 1);
  return {negative: sign !== "" && sign !== "+", digits: BigInt(digits),
          exponent: power - fraction.length, percent};
}
