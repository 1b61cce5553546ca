// The FFN lab's arithmetic: what ffn computes, in JavaScript, for the widgets beside the
// chapters (widgets.js). Pure functions, no DOM. tests/test_widgets.py runs each one in Node on
// thousands of hypothesis-generated inputs and compares it with ffn:
//   - counts (parameters, FLOPs, LLaMA's width) are BigInt and must equal ffn's ints exactly;
//   - ffnShare and decodeBytes do the same IEEE double operations in the same order as ffn,
//     so they must equal its floats bit for bit (the share only while both counts are below
//     2**53, where converting them to a Number is exact; above, within 1 ulp);
//   - the activations are within the tolerances stated in tests/test_widgets.py (erfc here is
//     a series and a continued fraction, not scipy's; Math.exp and Math.tanh are V8's, not
//     glibc's), and formatFixed prints exactly what Python's f"{x:,.{d}f}" prints.

// ---- Counting (ffn/counting.py, ffn/moe.py, ffn/models.py, ffn/inference.py) ----

/** Parameters of one block: W1, W2 (and a gate's V) and their biases (count_parameters). */
export function countParameters(dModel, dFf, bias = true, gated = false) {
  const nIn = gated ? 2n : 1n;  // matrices d_model -> d_ff
  const weights = (nIn + 1n) * dModel * dFf;
  return weights + (bias ? nIn * dFf + dModel : 0n);
}

/** FLOPs of the block's matrix products for nTokens tokens (count_flops). */
export function countFlops(dModel, dFf, nTokens = 1n, gated = false, backward = false) {
  const forward = (gated ? 3n : 2n) * 2n * nTokens * dModel * dFf;
  return backward ? 3n * forward : forward;
}

/** LLaMA's SwiGLU width (llama_d_ff): 8 d_model / 3, times the multiplier, rounded up. */
export function llamaDff(dModel, multipleOf = 256n, multiplier = null) {
  let hidden = (8n * dModel) / 3n;  // BigInt division truncates, as Python's // for positives
  if (multiplier !== null) {
    // The one floating-point step: Number(hidden) rounds to nearest even, as Python's
    // int-to-float conversion does; the product is the same IEEE product; trunc as int().
    hidden = BigInt(Math.trunc(multiplier * Number(hidden)));
  }
  return multipleOf * ((hidden + multipleOf - 1n) / multipleOf);
}

/** One attention sublayer's Q, K, V, O projections (count_attention_parameters). */
export function countAttentionParameters(dModel, bias = true, kvDim = null) {
  const kv = kvDim === null ? dModel : kvDim;
  return 2n * dModel * (dModel + kv) + (bias ? 2n * (dModel + kv) : 0n);
}

/** nExperts blocks and the router; with topK, those a token uses (count_moe_parameters). */
export function countMoeParameters(dModel, dFf, nExperts, topK = null, bias = true,
                                   gated = false) {
  const used = topK === null ? nExperts : topK;
  return used * countParameters(dModel, dFf, bias, gated) + dModel * nExperts;
}

/** The router's product and the topK experts each token uses (count_moe_flops). */
export function countMoeFlops(dModel, dFf, nExperts, topK, nTokens = 1n, gated = false,
                              backward = false) {
  const experts = topK * countFlops(dModel, dFf, nTokens, gated, backward);
  const router = 2n * nTokens * dModel * nExperts;
  return experts + (backward ? 3n * router : router);
}

/** A model's dimensions as ffn.ModelDims holds them, with its defaults; integers as BigInt.
 * `m` has the fields of ModelDims in camelCase (dModel, dFf, nLayers, ...). */
export function modelDims(m) {
  const big = v => (v === null || v === undefined ? null : BigInt(v));
  return {
    name: m.name ?? "custom", dModel: big(m.dModel), dFf: big(m.dFf), nLayers: big(m.nLayers),
    gated: Boolean(m.gated), bias: Boolean(m.bias), nAttention: big(m.nAttention),
    kvDim: big(m.kvDim), nExperts: big(m.nExperts), topK: big(m.topK),
    multipleOf: big(m.multipleOf ?? 256), ffnDimMultiplier: m.ffnDimMultiplier ?? null,
    sharedDff: big(m.sharedDff ?? 0), sharedGate: Boolean(m.sharedGate),
    denseLayers: big(m.denseLayers ?? 0), denseDff: big(m.denseDff),
    attentionPerLayer: big(m.attentionPerLayer),
  };
}

/** Why ModelDims would refuse these dimensions, or null (the checks the widget can hit). */
export function dimsProblem(m) {
  for (const [value, name] of [[m.dModel, "d_model"], [m.nLayers, "layers"],
                               [m.multipleOf, "multiple_of"]]) {
    if (value === null || value < 1n) return `${name} must be a positive integer`;
  }
  if (m.dFf !== null && m.dFf < 1n) return "d_ff must be a positive integer";
  if (m.dFf === null && m.ffnDimMultiplier !== null
      && !(m.ffnDimMultiplier > 0 && Number.isFinite(m.ffnDimMultiplier))) {
    return "the multiplier must be positive";
  }
  if (resolvedDff(m) < 1n) return "the width comes out as 0: raise the multiplier";
  if (m.nExperts !== null) {
    if (m.nExperts < 1n || m.topK === null || m.topK < 1n) {
      return "experts and top-k must be positive integers";
    }
    if (m.topK > m.nExperts) return `top-k must be at most the ${m.nExperts} experts`;
  }
  if (m.denseLayers > m.nLayers) return `the ${m.denseLayers} dense layers exceed the layers`;
  return null;
}

export function resolvedDff(m) {
  return m.dFf !== null ? m.dFf : llamaDff(m.dModel, m.multipleOf, m.ffnDimMultiplier);
}

/** ModelDims.ffn_parameters_per_layer: one FFN, or one MoE layer (active: a token's part). */
export function ffnParametersPerLayer(m, active = false) {
  if (m.nExperts === null) return countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const shared = m.sharedDff ? countParameters(m.dModel, m.sharedDff, m.bias, m.gated) : 0n;
  const gate = m.sharedGate ? m.dModel : 0n;
  return countMoeParameters(m.dModel, resolvedDff(m), m.nExperts, active ? m.topK : null,
                            m.bias, m.gated) + shared + gate;
}

/** ModelDims.ffn_parameters: all the model's FFNs (active: those one token uses). */
export function ffnParameters(m, active = false) {
  const dense = m.denseDff === null ? 0n
    : m.denseLayers * countParameters(m.dModel, m.denseDff, m.bias, m.gated);
  return dense + (m.nLayers - m.denseLayers) * ffnParametersPerLayer(m, active);
}

/** ModelDims.attention_parameters: all attention sublayers. */
export function attentionParameters(m) {
  const perLayer = m.attentionPerLayer ?? countAttentionParameters(m.dModel, m.bias, m.kvDim);
  return (m.nAttention ?? m.nLayers) * perLayer;
}

/** ModelDims.ffn_share: FFN parameters over FFN plus attention, a Number. Python's int / int
 * is correctly rounded; so is Number / Number when both are exact (below 2**53). */
export function ffnShare(m) {
  const ffn = ffnParameters(m);
  return Number(ffn) / Number(ffn + attentionParameters(m));
}

/** ModelDims.ffn_flops_per_token: all FFN matrix products for one token. */
export function ffnFlopsPerToken(m, backward = false) {
  let perLayer;
  if (m.nExperts === null) {
    perLayer = countFlops(m.dModel, resolvedDff(m), 1n, m.gated, backward);
  } else {
    perLayer = countMoeFlops(m.dModel, resolvedDff(m), m.nExperts, m.topK, 1n, m.gated,
                             backward);
    if (m.sharedDff) perLayer += countFlops(m.dModel, m.sharedDff, 1n, m.gated, backward);
    perLayer += (backward ? 6n : 2n) * m.dModel * (m.sharedGate ? 1n : 0n);
  }
  const dense = m.denseDff === null ? 0n
    : m.denseLayers * countFlops(m.dModel, m.denseDff, 1n, m.gated, backward);
  return dense + (m.nLayers - m.denseLayers) * perLayer;
}

/** ffn.decode_bytes(m, batch=1, bytesPerValue): bytes the FFNs move for one decoded token.
 * A BigInt for one FFN per layer (ffn: an int); a Number for a mixture of experts (ffn: a
 * float), by the same double operations in the same order. */
export function decodeBytes(m, bytesPerValue = 2n) {
  const batch = 1n;
  if (m.nExperts === null) {
    return m.nLayers * bytesPerValue * (ffnParametersPerLayer(m) + 2n * batch * m.dModel);
  }
  const expert = countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const router = m.dModel * m.nExperts;
  const n = Number(m.nExperts);
  // experts_read: n * (1 - (1 - k/n) ** batch); with batch 1, y ** 1 is y in both languages.
  const read = n * (1.0 - (1.0 - Number(m.topK) / n));
  const weights = Number(router) + read * Number(expert);
  return Number(m.nLayers * bytesPerValue) * (weights + Number(2n * batch * m.dModel));
}

/** Every number the model sizer shows, from one ModelDims-like object. */
export function sizeModel(m, bytesPerValue = 2n) {
  return {
    dFf: resolvedDff(m),
    perLayer: ffnParametersPerLayer(m),
    perLayerActive: m.nExperts === null ? null : ffnParametersPerLayer(m, true),
    share: ffnShare(m),
    total: ffnParameters(m),
    totalActive: m.nExperts === null ? null : ffnParameters(m, true),
    flops: ffnFlopsPerToken(m),
    flopsTraining: ffnFlopsPerToken(m, true),
    bytes: decodeBytes(m, bytesPerValue),
  };
}

// ---- Activations (ffn/activations.py), float64 ----

const SQRT2 = Math.SQRT2;
const SQRT_PI = Math.sqrt(Math.PI);
const S = Math.sqrt(2.0 / Math.PI), C = 0.044715;  // the tanh approximation's constants

/** erfc(z), complementary error function, to about 1e-15 relative for |z| <= 6.
 * |z| < 2: 1 - erf(z), erf by its series of positive terms (no cancellation),
 *   erf(z) = 2/sqrt(pi) exp(-z^2) sum_n z (2 z^2)^n / (1 3 5 ... (2n+1));
 * z >= 2: the continued fraction erfc(z) = exp(-z^2)/sqrt(pi) / (z + (1/2)/(z + (2/2)/(z + ...))),
 *   200 levels, evaluated from the bottom up; z < 0: erfc(z) = 2 - erfc(-z).
 * Both lose what exp(-z^2) loses when z^2 is rounded (about z^2 ulp), as scipy's erfc does. */
export function erfc(z) {
  if (Number.isNaN(z)) return z;
  if (z < 0) return 2 - erfc(-z);
  if (z < 2) {
    const twoZ2 = 2 * z * z;
    let term = z, sum = z;
    for (let n = 1; term > 1e-17 * sum; n++) {
      term *= twoZ2 / (2 * n + 1);
      sum += term;
    }
    return 1 - (2 / SQRT_PI) * Math.exp(-z * z) * sum;
  }
  if (z > 27) return 0;  // exp(-z^2) underflows
  let f = z;
  for (let n = 200; n >= 1; n--) f = z + (n / 2) / f;
  return Math.exp(-z * z) / SQRT_PI / f;
}

/** The standard normal CDF, as ffn's Phi: erfc(-x / sqrt 2) / 2. */
export function Phi(x) { return 0.5 * erfc(-x / SQRT2); }
/** The standard normal density. */
export function phi(x) { return Math.exp(-0.5 * x * x) / Math.sqrt(2.0 * Math.PI); }
/** The logistic function, stable both ways (as scipy's expit). */
export function sigmoid(x) {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

export function relu(x) { return Number.isNaN(x) ? x : Math.max(x, 0); }
export function reluGrad(x) { return Number.isNaN(x) ? x : (x > 0 ? 1 : 0); }
export function gelu(x) { x = Math.max(x, -40); return x * Phi(x); }
export function geluGrad(x) {
  x = Math.min(Math.max(x, -40), 40);
  return Phi(x) + x * phi(x);
}
export function geluTanh(x) {
  x = Math.max(x, -10);
  return 0.5 * x * (1 + Math.tanh(S * (x + C * x ** 3)));
}
export function geluTanhGrad(x) {
  x = Math.min(Math.max(x, -10), 10);
  const t = Math.tanh(S * (x + C * x ** 3));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t) * (1 + t) * S * (1 + 3 * C * x * x);
}
export function silu(x) { x = Math.max(x, -800); return x * sigmoid(x); }
export function siluGrad(x) {
  x = Math.min(Math.max(x, -800), 800);
  const s = sigmoid(x);
  return s * (1 + x * (1 - s));
}
export function relu2(x) { const r = Math.max(x, 0); return r * r; }
export function relu2Grad(x) { return 2 * Math.max(x, 0); }

/** The activations the explorer shows: name -> [label, f, f']. */
export const ACTIVATIONS = {
  relu: ["ReLU", relu, reluGrad],
  gelu: ["GELU, exact", gelu, geluGrad],
  gelu_tanh: ["GELU, tanh", geluTanh, geluTanhGrad],
  silu: ["SiLU", silu, siluGrad],
  relu2: ["Squared ReLU", relu2, relu2Grad],
};

// ---- Printing as Python prints ----

function group(digits) {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** An integer (BigInt) with thousands separators: Python's f"{n:,}". */
export function formatInt(n) {
  const s = BigInt(n).toString();
  return s.startsWith("-") ? "-" + group(s.slice(1)) : group(s);
}

/** Python's f"{x:.{digits}f}" (with commas if `grouping`) for |x| < 1e21: toFixed rounds a
 * tie away from zero, Python to even; a tie is exact, so toFixed(100) shows it as 5 then zeros
 * (a double near but off a tie differs from it far above 1e-100). */
export function formatFixed(x, digits, grouping = false) {
  digits = Number(digits);
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const sign = x < 0 || Object.is(x, -0) ? "-" : "";
  const a = Math.abs(x);
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
