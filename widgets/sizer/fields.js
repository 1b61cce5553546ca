// Generated from ffn.ModelDims' fields by widgets/sizer/data.py (fields_js): do not edit;
// `python -m widgets.sizer.data` writes it, tests/test_widgets.py checks it.

/** Each field's name as ffn spells it. */
export const FIELD_NAMES = {
  name: "name",
  dModel: "d_model",
  dFf: "d_ff",
  nLayers: "n_layers",
  gated: "gated",
  bias: "bias",
  nAttention: "n_attention",
  vocabSize: "vocab_size",
  nPositions: "n_positions",
  tiedHead: "tied_head",
  norm: "norm",
  other: "other",
  kvDim: "kv_dim",
  nExperts: "n_experts",
  topK: "top_k",
  multipleOf: "multiple_of",
  ffnDimMultiplier: "ffn_dim_multiplier",
  sharedDff: "shared_d_ff",
  sharedGate: "shared_gate",
  denseLayers: "dense_layers",
  denseDff: "dense_d_ff",
  attentionPerLayer: "attention_per_layer",
  routerBias: "router_bias",
  moeEvery: "moe_every",
  nLinearAttention: "n_linear_attention",
  linearAttentionPerLayer: "linear_attention_per_layer",
};
/** The fields without a default. */
export const REQUIRED = ["name", "dModel", "dFf", "nLayers", "gated", "bias"];
/** The others' defaults. */
export const DEFAULTS = {
  nAttention: null,
  vocabSize: null,
  nPositions: null,
  tiedHead: true,
  norm: "layer",
  other: 0n,
  kvDim: null,
  nExperts: null,
  topK: null,
  multipleOf: 256n,
  ffnDimMultiplier: null,
  sharedDff: 0n,
  sharedGate: false,
  denseLayers: 0n,
  denseDff: null,
  attentionPerLayer: null,
  routerBias: false,
  moeEvery: 1n,
  nLinearAttention: 0n,
  linearAttentionPerLayer: null,
};
