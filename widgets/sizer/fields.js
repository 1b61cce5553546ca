// Generated from ffn.ModelDims and its parts by widgets/sizer/data.py (fields_js): do not edit;
// `python -m widgets.sizer.data` writes it, tests/test_widgets.py checks it.

/** Each dataclass: its fields' names as ffn spells them, the fields without a default,
 * the others' defaults, and the fields that hold a part (by class). */
export const FIELDS = {
  ModelDims: {
    names: {
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
      attentionPerLayer: "attention_per_layer",
      linearAttention: "linear_attention",
      moe: "moe",
      normsPerLayer: "norms_per_layer",
      extraAttention: "extra_attention",
    },
    required: ["name", "dModel", "dFf", "nLayers", "gated", "bias"],
    defaults: {
      nAttention: null,
      vocabSize: null,
      nPositions: null,
      tiedHead: true,
      norm: "layer",
      other: 0n,
      kvDim: null,
      attentionPerLayer: null,
      linearAttention: null,
      moe: null,
      normsPerLayer: 2n,
      extraAttention: 0n,
    },
    parts: {dFf: "LlamaWidth", linearAttention: "LinearAttention", moe: "MoEDims"},
  },
  LlamaWidth: {
    names: {
      multipleOf: "multiple_of",
      ffnDimMultiplier: "ffn_dim_multiplier",
    },
    required: [],
    defaults: {
      multipleOf: 256n,
      ffnDimMultiplier: null,
    },
    parts: {},
  },
  LinearAttention: {
    names: {
      sublayers: "sublayers",
      perLayer: "per_layer",
    },
    required: ["sublayers", "perLayer"],
    defaults: {
    },
    parts: {},
  },
  MoEDims: {
    names: {
      nExperts: "n_experts",
      topK: "top_k",
      shared: "shared",
      routerBias: "router_bias",
      dense: "dense",
      zeroExperts: "zero_experts",
      hashLayers: "hash_layers",
      expertFormat: "expert_format",
    },
    required: ["nExperts", "topK"],
    defaults: {
      shared: null,
      routerBias: false,
      dense: null,
      zeroExperts: 0n,
      hashLayers: 0n,
      expertFormat: null,
    },
    parts: {shared: "SharedExperts", dense: "DenseLayers"},
  },
  SharedExperts: {
    names: {
      dFf: "d_ff",
      gate: "gate",
    },
    required: ["dFf"],
    defaults: {
      gate: false,
    },
    parts: {},
  },
  DenseLayers: {
    names: {
      first: "first",
      dFf: "d_ff",
      moeEvery: "moe_every",
    },
    required: ["first", "dFf"],
    defaults: {
      moeEvery: 1n,
    },
    parts: {},
  },
};
