// The FFN lab's key-value memory (ffn/feedforward.py's forward, one token), for the memory
// explorer on purpose.md. Pure functions, no DOM. tests/test_widget_memory.py holds
// memoryForward to ffn.FeedForward.forward_trace on 1,000 hypothesis-generated tokens for the
// page's block and 1,000 random blocks, within a bound it derives: each sum here is taken in a
// fixed order (j = 0, 1, ... then the bias), numpy's matmul may take another (BLAS), and both
// are within a few eps of the exact sum times the sum of the terms' sizes.
import {gelu, relu} from "./activations.js";

/** The activations the explorer offers, by ffn's names. */
export const MEMORY_ACTIVATIONS = {relu, gelu};

/** One token through the block y = act(x W1 + b1) W2 + b2, unit by unit.
 * W1: d_model rows of d_ff numbers (column i is the key k_i); b1: d_ff numbers; W2: d_ff rows
 * of d_model numbers (row i is the value v_i); b2: d_model numbers; x: d_model numbers.
 * Returns {pre: x . k_i + b1_i, h: act(pre_i), y: sum_i h_i v_i + b2, fires: the units whose
 * pre_i > 0}. */
export function memoryForward(W1, b1, W2, b2, x, activation = "relu") {
  const act = MEMORY_ACTIVATIONS[activation];
  if (act === undefined) throw new Error(`unknown activation ${activation}`);
  const dModel = x.length, dFf = b1.length;
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
