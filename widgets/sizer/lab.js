// The FFN lab's counting: parameters, FLOPs and bytes as ffn counts them (ffn/counting.py,
// ffn/model_dims.py, ffn/inference.py), for the model sizer. Pure functions, no DOM.
// tests/test_widgets.py runs each one in Node on 1,000 hypothesis-generated inputs against ffn:
//   - counts (parameters, FLOPs, LLaMA's width) are BigInt and must equal ffn's ints exactly;
//   - ffnShare is correctly rounded, as Python's int / int, and decodeBytes does the same IEEE
//     double operations in the same order as ffn: both equal ffn's floats bit for bit.
// Every function checks its arguments as ffn does (_shared/check.js; tests/test_widgets_hostile.py).

import {
  checkBoolean, checkChoice, checkPositiveInt, checkReal, checkTopK, describeValue, shortInt,
} from "../_shared/check.js";
import {formatFixed, formatInt} from "../_shared/format.js";
import {FIELDS} from "./fields.js";

/** Parameters of one block: W1, W2 (and a gate's V) and their biases (count_parameters). */
export function countParameters(dModel, dFf, bias = true, gated = false) {
  checkPositiveInt(dModel, "d_model");
  checkPositiveInt(dFf, "d_ff");
  const nIn = checkBoolean(gated, "gated") ? 2n : 1n;  // matrices d_model -> d_ff
  const weights = (nIn + 1n) * dModel * dFf;
  return weights + (checkBoolean(bias, "bias") ? nIn * dFf + dModel : 0n);
}

/** FLOPs of the block's matrix products for nTokens tokens (count_flops). */
export function countFlops(dModel, dFf, nTokens = 1n, gated = false, backward = false) {
  checkPositiveInt(dModel, "d_model");
  checkPositiveInt(dFf, "d_ff");
  checkPositiveInt(nTokens, "n_tokens");
  const forward = (checkBoolean(gated, "gated") ? 3n : 2n) * 2n * nTokens * dModel * dFf;
  return checkBoolean(backward, "backward") ? 3n * forward : forward;
}

/** LLaMA's SwiGLU width (llama_d_ff): 8 d_model / 3, times the multiplier, rounded up. A
 * RangeError where ffn refuses: a multiplier not positive and finite, a product beyond the
 * doubles, a width that truncates to zero. */
export function llamaDff(dModel, multipleOf = 256n, multiplier = null) {
  checkPositiveInt(dModel, "d_model");
  checkPositiveInt(multipleOf, "multiple_of");
  let hidden = (8n * dModel) / 3n;  // BigInt division truncates, as Python's // for positives
  if (multiplier !== null) {
    const m = checkReal(multiplier, "ffn_dim_multiplier", 0, Infinity, true, true);
    // The one floating-point step: Number(hidden) rounds to nearest even, as Python's
    // int-to-float conversion does; the product is the same IEEE product; trunc as int().
    const widened = m * Number(hidden);
    if (!Number.isFinite(widened)) {
      throw new RangeError(`ffn_dim_multiplier ${m} times ${shortInt(hidden)} hidden units `
                           + `(d_model ${shortInt(dModel)}) is too large for a float`);
    }
    hidden = BigInt(Math.trunc(widened));
    if (hidden === 0n) {
      throw new RangeError(`ffn_dim_multiplier ${m} times ${(8n * dModel) / 3n} hidden units `
                           + "truncates to zero hidden units");
    }
  }
  return multipleOf * ((hidden + multipleOf - 1n) / multipleOf);
}

/** One attention sublayer's Q, K, V, O projections (count_attention_parameters). */
export function countAttentionParameters(dModel, bias = true, kvDim = null) {
  checkPositiveInt(dModel, "d_model");
  const kv = kvDim === null ? dModel : checkPositiveInt(kvDim, "kv_dim");
  return 2n * dModel * (dModel + kv) + (checkBoolean(bias, "bias") ? 2n * (dModel + kv) : 0n);
}

/** nExperts blocks and the router; with topK, those a token uses (count_moe_parameters). */
export function countMoeParameters(dModel, dFf, nExperts, topK = null, bias = true,
                                   gated = false) {
  checkPositiveInt(nExperts, "n_experts");
  const used = topK === null ? nExperts : checkTopK(topK, nExperts);
  return used * countParameters(dModel, dFf, bias, gated) + dModel * nExperts;
}

/** The router's product and the topK experts each token uses (count_moe_flops). */
export function countMoeFlops(dModel, dFf, nExperts, topK, nTokens = 1n, gated = false,
                              backward = false) {
  checkTopK(topK, checkPositiveInt(nExperts, "n_experts"));
  const experts = topK * countFlops(dModel, dFf, nTokens, gated, backward);
  const router = 2n * nTokens * dModel * nExperts;  // d_model, n_tokens checked by countFlops
  return experts + (backward ? 3n * router : router);
}

// ModelDims and its parts: each one's fields, defaults and the fields that hold a part are
// fields.js's, generated from the dataclasses. A model is their nested form: d_ff a BigInt or
// a LlamaWidth's {multipleOf, ffnDimMultiplier}; moe null or {nExperts, topK, shared: null or
// {dFf, gate}, routerBias, dense: null or {first, dFf, moeEvery}, zeroExperts, hashLayers,
// expertFormat: null or a format's name};
// linearAttention null or {sublayers, perLayer}.
const NORMS = ["layer", "rms"];  // ModelDims.norm: LayerNorm (scale and shift) or RMSNorm
// The int fields of ModelDims in the order its __post_init__ checks them: [field, zero ok];
// one whose default is null may be null.
const INT_FIELDS = [
  ["dModel", false], ["nLayers", false], ["other", true], ["nAttention", false],
  ["vocabSize", false], ["nPositions", false], ["kvDim", false], ["attentionPerLayer", false],
  ["normsPerLayer", true], ["extraAttention", true],
];

/** `m`'s fields of the dataclass `cls` (fields.js's name), a field left out or undefined at
 * its default; a TypeError naming `what` for a value that is no object. */
function withDefaults(m, cls, what) {
  if (m === null || typeof m !== "object") {
    throw new TypeError(`${what} must be an object of ${cls}' fields, got ${describeValue(m)}`);
  }
  const {names, defaults} = FIELDS[cls];
  const d = {};
  for (const key of Object.keys(names)) {
    d[key] = m[key] === undefined && key in defaults ? defaults[key] : m[key];
  }
  return d;
}

/** Each part checked as its dataclass's __post_init__ checks it, in its order. */
const CHECK_PART = {
  LlamaWidth(d) {
    checkPositiveInt(d.multipleOf, "multiple_of");
    if (d.ffnDimMultiplier !== null) {
      checkReal(d.ffnDimMultiplier, "ffn_dim_multiplier", 0, Infinity, true, true);
    }
  },
  LinearAttention(d) {
    checkPositiveInt(d.sublayers, "sublayers");
    checkPositiveInt(d.perLayer, "per_layer");
  },
  SharedExperts(d) {
    checkPositiveInt(d.dFf, "d_ff");
    checkBoolean(d.gate, "gate");
  },
  DenseLayers(d) {
    for (const key of ["first", "dFf", "moeEvery"]) {
      checkPositiveInt(d[key], FIELDS.DenseLayers.names[key]);
    }
  },
  MoEDims(d) {
    checkPositiveInt(d.nExperts, "n_experts");
    checkPositiveInt(d.zeroExperts, "zero_experts", true);
    checkPositiveInt(d.hashLayers, "hash_layers", true);
    checkTopK(d.topK, d.nExperts);
    checkBoolean(d.routerBias, "router_bias");
    if (d.expertFormat !== null) checkChoice(d.expertFormat, "expert_format", weightFormats());
  },
};

/** A part `m` of the dataclass `cls` with its defaults, its own parts first (as Python makes
 * them first), then checked as its __post_init__ checks it. */
function part(m, cls, what) {
  const d = withDefaults(m, cls, what);
  for (const [key, inner] of Object.entries(FIELDS[cls].parts)) {
    if (d[key] !== null) d[key] = part(d[key], inner, FIELDS[cls].names[key]);
  }
  CHECK_PART[cls](d);
  return d;
}

/** A model's dimensions checked as ffn.ModelDims and its parts check them, with their
 * defaults (a field left out or undefined), in the nested form above, integers as BigInt. A
 * TypeError or RangeError naming the field (by ffn's name) for dimensions ffn refuses. */
export function modelDims(m) {
  if (m === null || typeof m !== "object") {
    throw new TypeError(`dims must be an object of ModelDims' fields, got ${describeValue(m)}`);
  }
  const d = withDefaults(m, "ModelDims", "dims");
  if (d.name === undefined) d.name = "custom";  // the sizer's name for a model typed in
  const rule = d.dFf !== null && typeof d.dFf === "object";  // LLaMA's rule, not a width
  if (rule) d.dFf = part(d.dFf, "LlamaWidth", "d_ff");
  const {names, parts, defaults} = FIELDS.ModelDims;
  for (const key of ["linearAttention", "moe"]) {
    if (d[key] !== null) d[key] = part(d[key], parts[key], names[key]);
  }
  if (typeof d.name !== "string" || d.name === "") {
    throw new TypeError(`name must be a non-empty str, got ${describeValue(d.name)}`);
  }
  for (const [key, zeroOk] of INT_FIELDS) {
    if (!(defaults[key] === null && d[key] === null)) {
      checkPositiveInt(d[key], names[key], zeroOk);
    }
  }
  if (rule) {  // the rule refuses a d_model too wide for its multiplier
    llamaDff(d.dModel, d.dFf.multipleOf, d.dFf.ffnDimMultiplier);
  } else {
    checkPositiveInt(d.dFf, "d_ff");
  }
  for (const key of ["gated", "bias", "tiedHead"]) checkBoolean(d[key], names[key]);
  checkChoice(d.norm, "norm", NORMS);
  if (d.moe !== null && d.moe.dense !== null && d.moe.dense.first > d.nLayers) {
    throw new RangeError(`moe.dense.first must be at most n_layers = ${d.nLayers}, got `
                         + `${d.moe.dense.first}`);
  }
  if (d.extraAttention && d.attentionPerLayer === null) {
    throw new RangeError("extra_attention adds to a counted sublayer: give "
                         + "attention_per_layer");
  }
  if (d.moe !== null && d.moe.hashLayers > moeLayers(d)) {
    throw new RangeError(`moe.hash_layers must be at most the ${moeLayers(d)} MoE layers, got `
                         + `${d.moe.hashLayers}`);
  }
  if (d.linearAttention !== null && d.linearAttention.sublayers > attentionSublayers(d)) {
    throw new RangeError("linear_attention.sublayers must be at most the "
                         + `${attentionSublayers(d)} attention sublayers, got `
                         + `${d.linearAttention.sublayers}`);
  }
  return d;
}

/** ModelDims.moe_layers: after the leading dense layers, one MoE layer in every moe_every
 * (len(range(first, n_layers, moe_every))); 0 without experts. */
export function moeLayers(m) {
  if (m.moe === null) return 0n;
  const dense = m.moe.dense;
  if (dense === null) return m.nLayers;
  if (dense.first >= m.nLayers) return 0n;
  return (m.nLayers - dense.first + dense.moeEvery - 1n) / dense.moeEvery;
}

/** ModelDims.router_parameters for a model with experts: the (d_model, n_experts +
 * zero_experts) matrix and its bias with router_bias. */
function routerParameters(m) {
  const rows = m.moe.nExperts + m.moe.zeroExperts;
  return m.dModel * rows + (m.moe.routerBias ? rows : 0n);
}

/** ModelDims.attention_sublayers: n_attention, or n_layers when not given. */
export function attentionSublayers(m) {
  return m.nAttention ?? m.nLayers;
}

/** Why ModelDims would refuse these dimensions (modelDims' message), or null. */
export function dimsProblem(m) {
  try {
    modelDims(m);
    return null;
  } catch (error) {
    if (error instanceof TypeError || error instanceof RangeError) return error.message;
    throw error;
  }
}

/** ModelDims.resolved_d_ff: d_ff, or the width LLaMA's rule gives. */
export function resolvedDff(m) {
  return typeof m.dFf === "bigint" ? m.dFf
    : llamaDff(m.dModel, m.dFf.multipleOf, m.dFf.ffnDimMultiplier);
}

/** ModelDims.ffn_parameters_per_layer: one FFN, or one MoE layer (active: a token's part). */
export function ffnParametersPerLayer(m, active = false) {
  const moe = m.moe;
  if (moe === null) return countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const routerBias = moe.routerBias ? moe.nExperts : 0n;  // every token uses the router
  // the router scores the zero experts too: a row each, and a bias with router_bias
  const zeroRows = moe.zeroExperts * (m.dModel + (moe.routerBias ? 1n : 0n));
  return countMoeParameters(m.dModel, resolvedDff(m), moe.nExperts, active ? moe.topK : null,
                            m.bias, m.gated) + sharedParameters(m) + routerBias + zeroRows;
}

/** ModelDims.shared_parameters: one MoE layer's shared experts and their gate. */
export function sharedParameters(m) {
  const shared = m.moe?.shared ?? null;
  if (shared === null) return 0n;
  return countParameters(m.dModel, shared.dFf, m.bias, m.gated) + (shared.gate ? m.dModel : 0n);
}

/** ModelDims.dense_ffn_parameters: the FFN of one of a mixture's dense layers. */
export function denseFfnParameters(m) {
  const dense = m.moe?.dense ?? null;
  return dense === null ? 0n : countParameters(m.dModel, dense.dFf, m.bias, m.gated);
}

/** ModelDims.ffn_parameters: all the model's FFNs (active: those one token uses); with
 * experts, the layers that are not MoE layers have a dense FFN. */
export function ffnParameters(m, active = false) {
  if (m.moe === null) return m.nLayers * ffnParametersPerLayer(m);
  const moe = moeLayers(m);
  return (m.nLayers - moe) * denseFfnParameters(m) + moe * ffnParametersPerLayer(m, active);
}

/** ModelDims.attention_parameters: all attention sublayers, the linear-attention ones
 * (linear_attention.sublayers) counted at linear_attention.per_layer. */
export function attentionParameters(m) {
  const perLayer = m.attentionPerLayer ?? countAttentionParameters(m.dModel, m.bias, m.kvDim);
  const total = attentionSublayers(m) * perLayer + m.extraAttention;
  const linear = m.linearAttention;
  return linear === null ? total : total + linear.sublayers * (linear.perLayer - perLayer);
}

/** a / b for BigInts a, b > 0, correctly rounded to a Number as Python's int / int is (for a
 * ratio in the doubles' normal range). Below 2**53 both convert exactly and one IEEE division
 * rounds once; above, a quotient of at least 56 bits with a sticky bit for the remainder
 * rounds once in Number() (nearest, ties to even), then an exact scaling by a power of two. */
export function exactRatio(a, b) {
  if (a < 2n ** 53n && b < 2n ** 53n) return Number(a) / Number(b);
  const bits = v => v.toString(2).length;
  const k = 56 + bits(b) - bits(a);  // a * 2**k / b >= 2**55 (k < 0: a far above b)
  const [num, den] = k >= 0 ? [a << BigInt(k), b] : [a, b << BigInt(-k)];
  const q = num / den;
  const sticky = q * den === num ? 0n : 1n;
  let x = Number((q << 1n) | sticky);  // 2 * (a * 2**k / b), rounded once
  // then times 2**-(k + 1), exact (Infinity where Python's int / int overflows)
  for (let e = k + 1; e > 0; e -= Math.min(e, 1000)) x /= 2 ** Math.min(e, 1000);
  for (let e = -(k + 1); e > 0; e -= Math.min(e, 1000)) x *= 2 ** Math.min(e, 1000);
  return x;
}

/** ModelDims.ffn_share: FFN parameters over FFN plus attention, a Number, correctly rounded
 * as Python's int / int. */
export function ffnShare(m) {
  const ffn = ffnParameters(m);
  return exactRatio(ffn, ffn + attentionParameters(m));
}

/** ModelDims.ffn_parts: the FFN parameters by part, as [ffn's name, count] in its order:
 * the dense FFNs, and in the MoE layers the routers, the shared experts, the routed experts a
 * token uses and those it skips. */
export function ffnParts(m) {
  if (m.moe === null) {
    return [["dense FFNs", ffnParameters(m)], ["router", 0n], ["shared experts", 0n],
            ["experts, active", 0n], ["experts, idle", 0n]];
  }
  const moe = moeLayers(m), {nExperts, topK} = m.moe;
  const expert = countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const router = routerParameters(m);
  return [["dense FFNs", (m.nLayers - moe) * denseFfnParameters(m)], ["router", moe * router],
          ["shared experts", moe * sharedParameters(m)],
          ["experts, active", moe * topK * expert],
          ["experts, idle", moe * (nExperts - topK) * expert]];
}

/** ModelDims.parameter_parts: the whole model's parameters by part, [ffn's name, count] in its
 * order (FFN, attention, embeddings, norms, head, other); null where ffn refuses the count,
 * for a model without a vocab_size. */
export function parameterParts(m) {
  if (m.vocabSize === null) return null;
  const perNorm = m.norm === "layer" ? 2n * m.dModel : m.dModel;  // gamma and beta, or gamma
  return [["FFN", ffnParameters(m)], ["attention", attentionParameters(m)],
          ["embeddings", (m.vocabSize + (m.nPositions ?? 0n)) * m.dModel],
          ["norms", (m.normsPerLayer * m.nLayers + 1n) * perNorm],
          ["head", m.tiedHead ? 0n : m.vocabSize * m.dModel], ["other", m.other]];
}

/** ModelDims.ffn_flops_per_token: all FFN matrix products for one token. */
export function ffnFlopsPerToken(m, backward = false) {
  if (m.moe === null) {
    return m.nLayers * countFlops(m.dModel, resolvedDff(m), 1n, m.gated, backward);
  }
  const {nExperts, topK, shared, dense: denseLayers} = m.moe;
  let perLayer = countMoeFlops(m.dModel, resolvedDff(m), nExperts, topK, 1n, m.gated, backward);
  perLayer += (backward ? 6n : 2n) * m.dModel * m.moe.zeroExperts;  // the router's zero columns
  if (shared !== null) {
    perLayer += countFlops(m.dModel, shared.dFf, 1n, m.gated, backward);
    perLayer += (backward ? 6n : 2n) * m.dModel * (shared.gate ? 1n : 0n);
  }
  const moe = moeLayers(m);
  const dense = denseLayers === null ? 0n
    : (m.nLayers - moe) * countFlops(m.dModel, denseLayers.dFf, 1n, m.gated, backward);
  return dense + moe * perLayer;
}

// ffn.inference.BYTES_PER_VALUE: the bytes a value of each format takes, block scales
// included, as [numerator, denominator]: MXFP4 17 bytes per 32 values (4.25 bits), NVFP4 9
// per 16 (4.5 bits; its 4-byte scale per tensor left out, as ffn leaves it out).
const BYTES_PER_VALUE = {
  float32: [4n, 1n], bfloat16: [2n, 1n], int8: [1n, 1n], e4m3: [1n, 1n],
  mxfp4: [17n, 32n], nvfp4: [9n, 16n],
};

/** The names of ffn.inference.BYTES_PER_VALUE, in its order. */
export function weightFormats() {
  return Object.keys(BYTES_PER_VALUE);
}

/** decode_bytes' bytes_per_value: a positive BigInt, a positive finite Number (0.53125, 4.25 /
 * 8: its exact binary value, as ffn's Fraction(float)) or a format's name ("mxfp4"), as the
 * exact fraction {numerator, denominator} ffn reads it as, with `fraction`: whether ffn holds
 * it as a Fraction (a Number, mxfp4, nvfp4; then the bytes are a float) or an int. */
/** The smallest bytes_per_value taken, as ffn.inference.SMALLEST_SIZE: float64's smallest
 * normal number. */
export const SMALLEST_SIZE = 2.2250738585072014e-308;

export function weightBytes(value) {
  if (typeof value === "string") {
    const [numerator, denominator] = BYTES_PER_VALUE[
      checkChoice(value, "bytes_per_value", weightFormats())];
    return {numerator, denominator, fraction: denominator !== 1n};
  }
  if (typeof value === "number") {  // NaN, 0, negatives and infinities refused by name
    let x = checkReal(value, "bytes_per_value", 0, Infinity, true, true), k = 0n;
    if (x < SMALLEST_SIZE) {  // ffn.inference.SMALLEST_SIZE: below it the bytes lose digits
      throw new RangeError("bytes_per_value must be at least 2.2e-308 (float64's smallest "
                           + `normal number, what the bytes are counted in), got ${x}`);
    }
    while (!Number.isInteger(x)) {  // x * 2 is exact: a double that is no integer is < 2**52
      x *= 2;
      k += 1n;
    }
    return {numerator: BigInt(x), denominator: 2n ** k, fraction: true};  // lowest terms
  }
  const numerator = checkPositiveInt(value, "bytes_per_value");
  return {numerator, denominator: 1n, fraction: false};
}

/** ffn.decode_bytes(m, batch=1, bytesPerValue, expertBytesPerValue): bytes the FFNs move for
 * one decoded token; expertBytesPerValue (null: bytesPerValue) prices the routed experts'
 * weight matrices alone (DeepSeek-V4's 4-bit experts).
 * A BigInt for one FFN per layer at a whole number of bytes a value (ffn: an int); else a
 * Number (ffn: a float), by the same double operations in the same order: a Fraction's
 * float is its correctly rounded quotient (Python's int / int, as exactRatio). */
export function decodeBytes(m, bytesPerValue = 2n, expertBytesPerValue = null) {
  const {numerator: size, denominator: per, fraction} = weightBytes(bytesPerValue);
  // expert_bytes_per_value: the routed experts' matrices alone (null: bytesPerValue)
  const experts = expertBytesPerValue === null ? {numerator: size, denominator: per, fraction}
    : weightBytes(expertBytesPerValue);
  const batch = 1n;
  const activations = 2n * batch * m.dModel;  // x read, y written
  const tooLarge = () => new RangeError(
    `decode_bytes: with bytes_per_value = ${typeof bytesPerValue === "string" ? bytesPerValue
      : shortInt(bytesPerValue)} the bytes of ${m.name} pass the doubles' 1.8e308`);
  if (m.moe === null) {
    const exact = m.nLayers * size * (ffnParametersPerLayer(m) + activations);
    if (!fraction) return exact;
    const bytes = exactRatio(exact, per);  // float(Fraction)
    if (!Number.isFinite(bytes)) throw tooLarge();
    return bytes;
  }
  const expert = countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const {nExperts, topK} = m.moe;
  const router = routerParameters(m);
  const float = v => {  // Python's int + float converts the int first: OverflowError
    const x = Number(v);
    if (!Number.isFinite(x)) {
      throw new RangeError(`decode_bytes: a count of ${m.name} ${shortInt(v)} (from d_model, `
                           + "d_ff, n_experts ...) is too large for a float");
    }
    return x;
  };
  // An int or a Fraction meeting a float: converted first, rounded once (the same double).
  const toFloat = v => fraction ? exactRatio(v, per) : float(v);
  float(nExperts);  // ffn converts it first: refused beyond the doubles
  // experts_read at batch 1: n (1 - (1 - k/n)**1) is top_k exactly, rounded once. ffn computes
  // that exactly for n_experts up to 2**64; above, it takes n * -expm1(log1p(-k/n)), whose
  // last bit depends on the C library's log1p and expm1 (V8's differ from glibc's at about
  // 1 input in 1,000): no engine can pin that, the exact value can (issue 39 item 20).
  const read = float(topK);
  const moe = moeLayers(m);  // the dense FFNs: the leading ones and, with moe_every, between
  // Python adds the ints to the float one at a time, each converted to a double first.
  let weights, own = 0;
  if (experts.numerator * per === size * experts.denominator) {  // one size for every value
    weights = float(router) + read * float(expert) + float(sharedParameters(m));
  } else {  // the experts' matrices at their own size; biases, router, shared experts not
    const matrices = countParameters(m.dModel, resolvedDff(m), false, m.gated);
    weights = float(router) + read * float(expert - matrices) + float(sharedParameters(m));
    const expertsAt = moe * experts.numerator;  // Python's moe_layers * expert_size
    own = (experts.fraction ? exactRatio(expertsAt, experts.denominator) : float(expertsAt))
      * read * float(matrices);
  }
  const dense = (m.nLayers - moe) * size * (denseFfnParameters(m) + activations);
  const bytes = toFloat(moe * size) * (weights + float(activations)) + own + toFloat(dense);
  if (!Number.isFinite(bytes)) throw tooLarge();
  return bytes;
}

/** Every number the model sizer shows, from dimensions modelDims has checked: the counts
 * (BigInt), the share and the bytes as above, and the bytes in GB, a Number as Python's
 * `bytes / 1e9` (an int too large for a double: refused, as Python's OverflowError). */
export function sizeModel(m, bytesPerValue = 2n, expertBytesPerValue = null) {
  const bytes = decodeBytes(m, bytesPerValue, expertBytesPerValue);
  const gigabytes = Number(bytes) / 1e9;
  if (!Number.isFinite(gigabytes)) {
    throw new RangeError(`decode_bytes: the bytes of ${m.name}, ${shortInt(bytes)}, pass the `
                         + "doubles' 1.8e308");
  }
  return {
    dFf: resolvedDff(m),
    perLayer: ffnParametersPerLayer(m),
    perLayerActive: m.moe === null ? null : ffnParametersPerLayer(m, true),
    share: ffnShare(m),
    total: ffnParameters(m),
    totalActive: m.moe === null ? null : ffnParameters(m, true),
    flops: ffnFlopsPerToken(m),
    flopsTraining: ffnFlopsPerToken(m, true),
    bytes,
    gigabytes,
    ffnParts: ffnParts(m),
    parts: parameterParts(m),
  };
}

/** The sizer's breakdown, where the whole model's parameters go: ffn's parameter_parts with
 * the FFN split into ffn_parts, as [key, count]: attention, the FFN's parts, embeddings, head,
 * norms, other; null for a model without a vocab_size (ffn counts no whole model then). */
export function breakdown(m) {
  const parts = parameterParts(m);
  if (parts === null) return null;
  const count = Object.fromEntries(parts);
  const ffn = Object.fromEntries(ffnParts(m));
  return [["attention", count.attention], ["denseFfn", ffn["dense FFNs"]],
          ["router", ffn.router], ["shared", ffn["shared experts"]],
          ["expertsActive", ffn["experts, active"]], ["expertsIdle", ffn["experts, idle"]],
          ["embeddings", count.embeddings], ["head", count.head], ["norms", count.norms],
          ["other", count.other]];
}

/** The breakdown as the sizer prints it (widgets/sizer/data.py's breakdown_numbers prints
 * ffn's): each part's count with commas and its share of the total as Python's f"{p / t:.1%}"
 * (the ratio correctly rounded, times 100 in doubles, to one decimal); the total, and the
 * parameters one token uses with their share ("" without experts); null without a vocab_size. */
export function breakdownNumbers(m) {
  const parts = breakdown(m);
  if (parts === null) return null;
  const total = parts.reduce((sum, [, n]) => sum + n, 0n);
  const percent = n => formatFixed(exactRatio(n, total) * 100, 1) + "%";
  const shown = {total: formatInt(total), active: "", activeShare: ""};
  for (const [key, n] of parts) {
    shown[key] = formatInt(n);
    shown[`${key}Share`] = percent(n);
  }
  if (m.moe !== null) {
    const active = total - Object.fromEntries(parts).expertsIdle;
    shown.active = formatInt(active);
    shown.activeShare = percent(active);
  }
  return shown;
}

/** What the sizer prints for checked dimensions, as widgets/sizer/data.py's sizer_numbers
 * prints ffn's numbers: ints with commas, the share to 4 decimals, bytes that are a float
 * (experts, or a fraction of a byte a weight) to none, GB to 3; "" where a row is hidden
 * (the active counts of a model without experts). */
export function sizerNumbers(m, bytesPerValue = 2n, expertBytesPerValue = null) {
  const size = sizeModel(m, bytesPerValue, expertBytesPerValue);
  return {
    dFf: size.dFf.toString(),
    perLayer: formatInt(size.perLayer),
    perLayerActive: size.perLayerActive === null ? "" : formatInt(size.perLayerActive),
    share: formatFixed(size.share, 4),
    total: formatInt(size.total),
    totalActive: size.totalActive === null ? "" : formatInt(size.totalActive),
    flops: formatInt(size.flops),
    flopsTraining: formatInt(size.flopsTraining),
    bytes: typeof size.bytes === "bigint" ? formatInt(size.bytes)
      : formatFixed(size.bytes, 0, true),
    gigabytes: formatFixed(size.gigabytes, 3),
  };
}
