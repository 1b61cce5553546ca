// The FFN lab's counting: parameters, FLOPs and bytes as ffn counts them (ffn/counting.py,
// ffn/moe.py, ffn/models.py, ffn/inference.py), for the model sizer. Pure functions, no DOM.
// tests/test_widgets.py runs each one in Node on 1,000 hypothesis-generated inputs against ffn:
//   - counts (parameters, FLOPs, LLaMA's width) are BigInt and must equal ffn's ints exactly;
//   - ffnShare and decodeBytes do the same IEEE double operations in the same order as ffn,
//     so they must equal its floats bit for bit (the share only while both counts are below
//     2**53, where converting them to a Number is exact; above, within 1 ulp).

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
  return countMoeParameters(m.dModel, resolvedDff(m), m.nExperts, active ? m.topK : null,
                            m.bias, m.gated) + sharedParameters(m);
}

/** ModelDims.shared_parameters: one MoE layer's shared experts and their gate. */
export function sharedParameters(m) {
  const shared = m.sharedDff ? countParameters(m.dModel, m.sharedDff, m.bias, m.gated) : 0n;
  return shared + (m.sharedGate ? m.dModel : 0n);
}

/** ModelDims.dense_ffn_parameters: the FFN of one of the leading dense layers. */
export function denseFfnParameters(m) {
  return m.denseDff === null ? 0n : countParameters(m.dModel, m.denseDff, m.bias, m.gated);
}

/** ModelDims.ffn_parameters: all the model's FFNs (active: those one token uses). */
export function ffnParameters(m, active = false) {
  return m.denseLayers * denseFfnParameters(m)
    + (m.nLayers - m.denseLayers) * ffnParametersPerLayer(m, active);
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
  const activations = 2n * batch * m.dModel;  // x read, y written
  if (m.nExperts === null) {
    return m.nLayers * bytesPerValue * (ffnParametersPerLayer(m) + activations);
  }
  const expert = countParameters(m.dModel, resolvedDff(m), m.bias, m.gated);
  const router = m.dModel * m.nExperts;
  const n = Number(m.nExperts);
  // experts_read: n * (1 - (1 - k/n) ** batch); with batch 1, y ** 1 is y in both languages.
  const read = n * (1.0 - (1.0 - Number(m.topK) / n));
  // Python adds the ints to the float one at a time, each converted to a double first.
  const weights = Number(router) + read * Number(expert) + Number(sharedParameters(m));
  const moeLayers = m.nLayers - m.denseLayers;
  const dense = m.denseLayers * bytesPerValue * (denseFfnParameters(m) + activations);
  return Number(moeLayers * bytesPerValue) * (weights + Number(activations)) + Number(dense);
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

