// The FFN lab's key-value memory (ffn/feedforward.py's forward, one token), for the memory
// explorer on purpose.md. Pure functions, no DOM. tests/test_widget_memory.py holds
// memoryForward to ffn.FeedForward.forward_trace on 1,000 hypothesis-generated tokens for the
// page's block and 1,000 random blocks, within a bound it derives: each sum here is taken in a
// fixed order (j = 0, 1, ... then the bias), numpy's matmul may take another (BLAS), and both
// are within a few eps of the exact sum times the sum of the terms' sizes.
// The arguments are checked as ffn.FeedForward checks them, by its names (W1, b1, W2, b2,
// activation, x): shapes that do not fit are refused, never computed with fewer rows.
import {gelu, geluTanh, relu, relu2, silu} from "../activations/lab.js";
import {checkChoice, checkVector, describeValue} from "../_shared/check.js";

/** The activations a block may have, by ffn's names (ffn.ACTIVATIONS). */
export const MEMORY_ACTIVATIONS = {relu, gelu, gelu_tanh: geluTanh, silu, relu2};

/** A matrix as rows of numbers, `rows` x `cols` (null: any, set by the first row). */
function checkMatrix(value, name, axes, rows, cols) {
  if (!Array.isArray(value) || !value.every(Array.isArray)) {
    throw new TypeError(`${name} must be 2-D with shape (${axes}), rows of numbers, got `
                        + describeValue(value));
  }
  const width = cols ?? value[0]?.length ?? 0;
  if (value.length === 0 || width === 0) {
    throw new RangeError(`${name} has shape (${value.length}, ${width}): both dimensions of `
                         + `(${axes}) must be positive`);
  }
  if (rows !== null && value.length !== rows) {
    throw new RangeError(`${name} has ${value.length} rows but must be (${axes}) = `
                         + `(${rows}, ${width})`);
  }
  return value.map((row, r) => {
    if (row.length !== width) {
      throw new RangeError(`${name} row ${r} has ${row.length} numbers but must have ${width}: `
                           + `${name} is (${axes})`);
    }
    return checkVector(row, `${name}[${r}]`);
  });
}

/** One token through the block y = act(x W1 + b1) W2 + b2, unit by unit.
 * W1: d_model rows of d_ff numbers (column i is the key k_i); b1: d_ff numbers or null; W2:
 * d_ff rows of d_model numbers (row i is the value v_i); b2: d_model numbers or null; x:
 * d_model numbers. Returns {pre: x . k_i + b1_i, h: act(pre_i), y: sum_i h_i v_i + b2,
 * fires: the units whose pre_i > 0}. */
export function memoryForward(W1, b1, W2, b2, x, activation = "relu") {
  W1 = checkMatrix(W1, "W1", "d_model, d_ff", null, null);
  const dModel = W1.length, dFf = W1[0].length;
  b1 = b1 === null ? new Array(dFf).fill(0) : checkVector(b1, "b1", dFf, "(d_ff,)");
  W2 = checkMatrix(W2, "W2", "d_ff, d_model", dFf, dModel);
  b2 = b2 === null ? new Array(dModel).fill(0) : checkVector(b2, "b2", dModel, "(d_model,)");
  const act = MEMORY_ACTIVATIONS[checkChoice(activation, "activation",
                                             Object.keys(MEMORY_ACTIVATIONS))];
  if (Array.isArray(x) && x.length !== dModel) {
    throw new RangeError(`x has last dimension ${x.length} but d_model is ${dModel}`);
  }
  x = checkVector(x, "x");
  const pre = [], h = [], y = [], fires = [];
  for (let i = 0; i < dFf; i++) {
    let s = 0;
    for (let j = 0; j < dModel; j++) s += x[j] * W1[j][i];
    pre.push(s + b1[i]);
    h.push(act(pre[i]));
    if (pre[i] > 0) fires.push(i);
  }
  for (let k = 0; k < dModel; k++) {
    let s = 0;
    for (let i = 0; i < dFf; i++) s += h[i] * W2[i][k];
    y.push(s + b2[k]);
  }
  return {pre, h, y, fires};
}

/** Which units fire, in words: "units 2, 3, 4 and 5 fire", "unit 3 fires", "no unit fires". */
export function firingSentence(units) {
  if (units.length === 0) return "no unit fires";
  if (units.length === 1) return `unit ${units[0]} fires`;
  return `units ${units.slice(0, -1).join(", ")} and ${units[units.length - 1]} fire`;
}
