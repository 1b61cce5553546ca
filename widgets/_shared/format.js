// Numbers printed as Python prints them: formatInt is f"{n:,}", formatFixed is
// f"{x:.{digits}f}" (with grouping, f"{x:,.{digits}f}"), ties to even included, so a widget
// shows the very strings the chapters print (tests/test_widgets.py).

function group(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** An integer (BigInt) with thousands separators: Python's f"{n:,}". */
export function formatInt(n) {
  const s = BigInt(n).toString();
  return s.startsWith("-") ? "-" + group(s.slice(1)) : group(s);
}

/** Python's f"{x:.{digits}f}" (with commas if `grouping`): toFixed rounds a tie away from
 * zero, Python to even; a tie is exact, so toFixed(100) shows it as 5 then zeros (a double
 * near but off a tie differs from it far above 1e-100). From 1e21 up toFixed writes an
 * exponent ("1.72052e+21") where Python writes every digit: such a double is an integer,
 * and BigInt holds it exactly. */
export function formatFixed(x, digits, grouping = false) {
  digits = Number(digits);
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const a = Math.abs(x);
  if (a >= 1e21) {
    const whole = BigInt(a).toString();
    return sign + (grouping ? group(whole) : whole) + (digits ? "." + "0".repeat(digits) : "");
  }
  let s = a.toFixed(digits);
  const exact = a.toFixed(100);
  const point = exact.indexOf(".");
  if (/^50*$/.test(exact.slice(point + 1 + digits))) {  // an exact tie
    const down = exact.slice(0, digits ? point + 1 + digits : point);
    if (Number(down[down.length - 1]) % 2 === 0) s = down;
  }
  if (grouping) {
    const [whole, fraction] = s.split(".");
    s = group(whole) + (fraction === undefined ? "" : "." + fraction);
  }
  return sign + s;
}
