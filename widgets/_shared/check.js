// Argument checks for the lab's modules, as ffn/_validate.py makes them: run before any
// arithmetic, a bad argument is refused with a message naming it by ffn's name for it
// (d_model, top_k, ...) and saying what is allowed. TypeError where ffn raises TypeError,
// RangeError where it raises ValueError. Integers are BigInt (ffn's are Python ints): a
// Number is refused even when whole, as ffn refuses the float 8.0. tests/test_widgets_hostile.py
// feeds every exported function the wrong inputs ffn is fed and requires the same verdict.

/** A value's type and value for messages: "bigint 5", "number 2.5", 'string "yes"'. */
export function describeValue(value) {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return `array of ${value.length}`;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "object") return "object";
  return `${typeof value} ${String(value)}`;
}

/** An integer for a message: its digits, or for more than 24 of them how many there are. */
export function shortInt(value) {
  const digits = String(value);
  return digits.length <= 24 ? digits : `of ${digits.length} digits`;
}

/** `value` if it is a BigInt > 0 (>= 0 with zeroOk), else TypeError or RangeError. */
export function checkPositiveInt(value, name, zeroOk = false) {
  if (typeof value !== "bigint") {
    throw new TypeError(`${name} must be an int (a BigInt), got ${describeValue(value)}`);
  }
  if (value < (zeroOk ? 0n : 1n)) {
    throw new RangeError(`${name} must be ${zeroOk ? "non-negative" : "positive"}, got ${value}`);
  }
  return value;
}

/** topK if it is a BigInt in [1, nExperts] (ffn.moe's check_top_k). */
export function checkTopK(topK, nExperts) {
  checkPositiveInt(topK, "top_k");
  if (topK > BigInt(nExperts)) {
    throw new RangeError(`top_k must be at most n_experts = ${nExperts}, got ${topK}`);
  }
  return topK;
}

/** `value` if it is a boolean. */
export function checkBoolean(value, name) {
  if (typeof value !== "boolean") {
    throw new TypeError(`${name} must be a bool, got ${describeValue(value)}`);
  }
  return value;
}

/** `value` if it is one of the strings `valid`. */
export function checkChoice(value, name, valid) {
  if (typeof value !== "string") {
    throw new TypeError(`${name} must be a str, got ${describeValue(value)}`);
  }
  if (!valid.includes(value)) {
    throw new RangeError(`unknown ${name} ${JSON.stringify(value)}; valid: ${valid.join(", ")}`);
  }
  return value;
}

/** `value` (a Number, or a BigInt that a double holds) as a Number in [low, high], the ends
 * open with lowOpen / highOpen; NaN is refused. */
export function checkReal(value, name, low, high, highOpen, lowOpen = false) {
  const ends = `${lowOpen ? "(" : "["}${low}, ${high}${highOpen ? ")" : "]"}`;
  if (typeof value !== "number" && typeof value !== "bigint") {
    throw new TypeError(`${name} must be a real number, got ${describeValue(value)}`);
  }
  const number = Number(value);
  if (typeof value === "bigint" && !Number.isFinite(number)) {
    throw new RangeError(`${name} must be in ${ends}, got an int too large for a float`);
  }
  const above = lowOpen ? low < number : low <= number;
  if (!(above && (number < high || (number === high && !highOpen)))) {
    throw new RangeError(`${name} must be in ${ends}, got ${number}`);
  }
  return number;
}

/** One real value as ffn's float_array reads a scalar: a Number (NaN and infinities pass, as
 * in ffn), a boolean as 0 or 1, a BigInt converted (refused beyond the doubles). Anything
 * else (a string, null, an array: the lab's functions are scalar) is a TypeError. */
export function checkScalar(value, name) {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "bigint") {
    const number = Number(value);
    if (!Number.isFinite(number)) {
      throw new RangeError(`${name} holds an integer too large for a float (float64 reaches `
                           + "about 1.8e308)");
    }
    return number;
  }
  throw new TypeError(`${name} must be a real number, got ${describeValue(value)}`);
}

/** An array of `length` real values (as checkScalar reads each), as Numbers; `shape` names
 * the axis for the message ("(d_model,)"). */
export function checkVector(value, name, length = null, shape = "") {
  if (!Array.isArray(value)) {
    throw new TypeError(`${name} must be an array of numbers, got ${describeValue(value)}`);
  }
  if (length !== null && value.length !== length) {
    throw new RangeError(`${name} must have shape ${shape} = (${length},), got ${value.length} `
                         + "entries");
  }
  return value.map((v, i) => checkScalar(v, `${name}[${i}]`));
}
