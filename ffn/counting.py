"""Every count in one room: parameters and FLOPs of a feed-forward block, of a mixture of
experts and its router, and of the attention sublayers beside them (plain, grouped heads, latent,
Gated DeltaNet), plus LLaMA's width rule and Llama 4's vision tower.

Each public function checks its own arguments once, at its start (a TypeError or ValueError
naming the argument); ``ModelDims`` and ``ffn.inference`` ask these functions, never a twin.
"""

from __future__ import annotations

from ffn import _validate as check


def count_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False) -> int:
    """Trainable parameters of a block: ``W1``, ``W2`` (and a gate's ``V``), and their biases."""
    d_model = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    gated = check.boolean(gated, "gated")
    bias = check.boolean(bias, "bias")
    n_in = 2 if gated else 1  # matrices d_model -> d_ff
    weights = (n_in + 1) * d_model * d_ff  # the input matrices and W2
    biases = n_in * d_ff + d_model if bias else 0
    return weights + biases


def count_flops(d_model: int, d_ff: int, n_tokens: int = 1, gated: bool = False,
                backward: bool = False) -> int:
    """FLOPs of the block's matrix products for ``n_tokens`` tokens (``backward``: plus backward).

    An ``(n, k) @ (k, m)`` product costs ``2 n k m`` (a multiply and an add per term); backward
    does two per weight (for the input and the weight). Biases and activations are left out:
    about ``d_model`` times smaller.
    """
    d_model, d_ff = check.positive_int(d_model, "d_model"), check.positive_int(d_ff, "d_ff")
    n_tokens = check.positive_int(n_tokens, "n_tokens")
    gated, backward = check.boolean(gated, "gated"), check.boolean(backward, "backward")
    n_matrices = 3 if gated else 2
    forward = n_matrices * 2 * n_tokens * d_model * d_ff
    return 3 * forward if backward else forward


def largest_d_ff(budget: int, d_model: int, bias: bool = True, gated: bool = False) -> int:
    """The largest ``d_ff`` with ``count_parameters(d_model, d_ff, bias, gated) <= budget``.

    A ValueError if even ``d_ff = 1`` is over the budget.
    """
    budget = check.positive_int(budget, "budget")
    smallest = count_parameters(d_model, 1, bias, gated)  # and checks the other arguments
    per_unit = count_parameters(d_model, 2, bias, gated) - smallest  # the cost of each d_ff unit
    if budget < smallest:
        raise ValueError(
            f"budget {budget} is below the {smallest} parameters of a block with d_ff = 1")
    return 1 + (budget - smallest) // per_unit


def llama_d_ff(d_model: int, multiple_of: int = 256,
               ffn_dim_multiplier: float | None = None) -> int:
    """LLaMA's SwiGLU hidden width, by the steps of Meta's reference code (``FeedForward``).

    Two thirds of ``4 * d_model``, truncated; then, for LLaMA 2 and 3, times
    ``ffn_dim_multiplier`` and truncated again; then rounded up to a multiple of ``multiple_of``.
    All of it is integer arithmetic except the multiplier: floating point enters only there, in
    ``int(ffn_dim_multiplier * hidden)``, a float product truncated as Meta's code truncates it
    (``int(0.29 * 200)`` is 57, not 58). Meta computes the two thirds in floating point too,
    ``int(2 * hidden / 3)``; ffn's floor division is the mathematically right value, and the
    two agree for every ``d_model`` up to ``3 * 2**49``. From ``d_model = 3 * 2**49 + 1`` on,
    ``8 * d_model / 3`` is beyond 2**52, a float has no fractions left, ``n + 2/3`` rounds up,
    and Meta's formula gives one more hidden unit for every third ``d_model`` (before rounding
    up to ``multiple_of``); past 2**53 the float's spacing grows and so does the difference.

    A ValueError unless the multiplier is positive and finite, for a width that truncates to
    zero (where Meta's code returns 0), and for a multiplier beside a width too large for a
    float.
    """
    d_model = check.positive_int(d_model, "d_model")
    multiple_of = check.positive_int(multiple_of, "multiple_of")
    multiplier = None if ffn_dim_multiplier is None else check.real(
        ffn_dim_multiplier, "ffn_dim_multiplier", 0.0, float("inf"), high_open=True,
        low_open=True)
    if multiplier is not None and (8 * d_model // 3).bit_length() > 1023:  # float() overflows
        raise ValueError(f"d_model must be at most 3.3e307 with an ffn_dim_multiplier (its "
                         "8 * d_model // 3 hidden units are multiplied as a float), got an "
                         f"int of {d_model.bit_length()} bits")
    return _llama_d_ff(d_model, multiple_of, multiplier)


def _llama_d_ff(d_model: int, multiple_of: int, multiplier: float | None) -> int:
    """``llama_d_ff`` of checked arguments; a ValueError where the widened width is inf or 0."""
    # Two thirds of 4 * d_model: three gated matrices hold what two ungated ones would. Meta
    # writes int(2 * (4 * d_model) / 3), a float division: the same up to d_model = 3 * 2**49.
    hidden = 8 * d_model // 3
    if multiplier is not None:
        widened = multiplier * hidden  # the one floating-point step, truncated like Meta's
        if widened == float("inf"):  # int() would raise OverflowError
            raise ValueError(f"ffn_dim_multiplier {multiplier!r} times {hidden} hidden units is "
                             "too large for a float")
        hidden = int(widened)
        if hidden == 0:  # Meta's code would round 0 up to 0: a block without hidden units
            raise ValueError(f"ffn_dim_multiplier {multiplier!r} times {8 * d_model // 3} "
                             "hidden units truncates to zero hidden units")
    return multiple_of * -(-hidden // multiple_of)  # ceiling division


# A mixture of experts: the router, and the experts a token uses.


def router_parameters(d_model: int, n_experts: int, bias: bool = False) -> int:
    """A router's ``(d_model, n_experts)`` matrix, and with ``bias`` one number per expert
    (gpt-oss); every token uses all of it."""
    d_model = check.positive_int(d_model, "d_model")
    n_experts = check.positive_int(n_experts, "n_experts")
    return d_model * n_experts + (n_experts if check.boolean(bias, "bias") else 0)


def count_moe_parameters(d_model: int, d_ff: int, n_experts: int, top_k: int | None = None,
                         bias: bool = True, gated: bool = False,
                         router_bias: bool = False) -> int:
    """Parameters of ``n_experts`` blocks and their router (``top_k <= n_experts``: a token's).

    ``bias``: the experts' biases; ``router_bias``: the router's (gpt-oss).
    """
    n_experts = check.positive_int(n_experts, "n_experts")
    used = n_experts if top_k is None else check.top_k(top_k, n_experts)
    expert = count_parameters(d_model, d_ff, bias, gated)  # and checks those four
    return used * expert + router_parameters(d_model, n_experts, router_bias)


def shared_expert_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False,
                             gate: bool = False) -> int:
    """Shared experts of width ``d_ff`` together, which every token uses, as one block; with
    ``gate``, Qwen's sigmoid gate on them, a ``(d_model, 1)`` matrix."""
    block = count_parameters(d_model, d_ff, bias, gated)  # and checks those four
    return block + (d_model if check.boolean(gate, "gate") else 0)


def shared_expert_flops(d_model: int, d_ff: int, n_tokens: int = 1, gated: bool = False,
                        gate: bool = False, backward: bool = False) -> int:
    """FLOPs of the shared experts' matrix products, and of their gate's ``(d_model, 1)``
    product with ``gate`` (``backward``: three times as many, as ``count_flops``)."""
    block = count_flops(d_model, d_ff, n_tokens, gated, backward)  # and checks those five
    gate_forward = 2 * n_tokens * d_model if check.boolean(gate, "gate") else 0
    return block + (3 * gate_forward if backward else gate_forward)


def count_moe_flops(d_model: int, d_ff: int, n_experts: int, top_k: int, n_tokens: int = 1,
                    gated: bool = False, backward: bool = False) -> int:
    """FLOPs of the router's product and of the ``top_k`` experts each token uses."""
    n_experts = check.positive_int(n_experts, "n_experts")
    top_k = check.top_k(top_k, n_experts)
    experts = top_k * count_flops(d_model, d_ff, n_tokens, gated, backward)  # checks the rest
    router = 2 * n_tokens * d_model * n_experts  # (n_tokens, d_model) @ (d_model, n_experts)
    return experts + (3 * router if backward else router)


# Attention beside the FFN: plain, grouped heads, latent (DeepSeek), Gated DeltaNet (Qwen3-Next);
# and Llama 4's vision tower.


def count_attention_parameters(d_model: int, bias: bool = True, kv_dim: int | None = None) -> int:
    """Parameters of one attention sublayer's query, key, value and output projections.

    Heads split the ``d_model`` columns, so their number does not matter; with grouped-query
    attention, key and value are ``(d_model, kv_dim)``.
    """
    d_model = check.positive_int(d_model, "d_model")
    kv = d_model if kv_dim is None else check.positive_int(kv_dim, "kv_dim")
    biases = 2 * (d_model + kv) if check.boolean(bias, "bias") else 0
    return 2 * d_model * (d_model + kv) + biases


def head_attention_parameters(d_model: int, n_heads: int, n_kv_heads: int, head_dim: int,
                              bias: bool = False, sinks: bool = False, qk_norm: bool = False,
                              output_gate: bool = False, k_eq_v: bool = False) -> int:
    """One attention sublayer whose heads are not ``d_model`` wide together (gpt-oss, Qwen3).

    Q is ``(d_model, n_heads * head_dim)``, K and V ``(d_model, n_kv_heads * head_dim)``, O
    back to ``d_model``; ``bias``: all four have biases (gpt-oss); ``sinks``: one learned
    logit per head (gpt-oss's attention sinks); ``qk_norm``: an RMSNorm scale of ``head_dim``
    on queries and one on keys (Qwen3); ``output_gate``: Q is twice as wide, its second half a
    sigmoid gate on the heads' output (Qwen3-Next's gated attention); ``k_eq_v``: the keys
    are the values too, so there is no V projection (Gemma 4's full-attention layers). The
    sizes are positive ints, the flags bools (a TypeError or ValueError naming the argument
    otherwise).
    """
    d_model, n_heads, n_kv_heads, head_dim = _counts(d_model=d_model, n_heads=n_heads,
                                                     n_kv_heads=n_kv_heads, head_dim=head_dim)
    bias, sinks, qk_norm, output_gate, k_eq_v = (check.boolean(v, k) for k, v in (
        ("bias", bias), ("sinks", sinks), ("qk_norm", qk_norm), ("output_gate", output_gate),
        ("k_eq_v", k_eq_v)))
    q, kv = n_heads * head_dim, n_kv_heads * head_dim
    kv_projections = 1 if k_eq_v else 2  # K, and V unless K serves as both
    weights = (d_model * q * (2 if output_gate else 1) + kv_projections * d_model * kv
               + q * d_model)
    biases = q * (2 if output_gate else 1) + kv_projections * kv + d_model if bias else 0
    return weights + biases + (n_heads if sinks else 0) + (2 * head_dim if qk_norm else 0)


def latent_attention_parameters(d_model: int, n_heads: int, q_rank: int, kv_rank: int,
                                nope_dim: int, rope_dim: int, v_dim: int) -> int:
    """One multi-head latent attention sublayer (DeepSeek-V2 and V3): projections and norms.

    Queries and keys-with-values each pass through a low-rank bottleneck (``q_rank``,
    ``kv_rank``) with an RMSNorm; each head's query and key has ``nope_dim`` plain and
    ``rope_dim`` rotary dimensions, the rotary key shared by all heads. Every argument is a
    positive int (a TypeError or ValueError naming it otherwise).
    """
    d_model, n_heads, q_rank, kv_rank, nope_dim, rope_dim, v_dim = _counts(
        d_model=d_model, n_heads=n_heads, q_rank=q_rank, kv_rank=kv_rank, nope_dim=nope_dim,
        rope_dim=rope_dim, v_dim=v_dim)
    q = d_model * q_rank + q_rank + q_rank * n_heads * (nope_dim + rope_dim)  # down, norm, up
    kv = d_model * (kv_rank + rope_dim) + kv_rank + kv_rank * n_heads * (nope_dim + v_dim)
    return q + kv + n_heads * v_dim * d_model  # and the output projection


def gated_deltanet_parameters(d_model: int, n_key_heads: int, n_value_heads: int,
                              key_dim: int, value_dim: int, conv_kernel: int) -> int:
    """One Gated DeltaNet sublayer (Qwen3-Next's linear attention), as transformers builds it.

    One input product makes queries and keys (``n_key_heads * key_dim`` each), values and an
    output gate (``n_value_heads * value_dim`` each); another the per-value-head decay and
    write strengths (two numbers a head). A depthwise causal convolution of ``conv_kernel``
    taps runs over queries, keys and values; each value head has a decay rate and a time-step
    bias; an RMSNorm of ``value_dim`` scales the output before the output projection. Every
    argument is a positive int (a TypeError or ValueError naming it otherwise).
    """
    d_model, n_key_heads, n_value_heads, key_dim, value_dim, conv_kernel = _counts(
        d_model=d_model, n_key_heads=n_key_heads, n_value_heads=n_value_heads, key_dim=key_dim,
        value_dim=value_dim, conv_kernel=conv_kernel)
    keys, values = n_key_heads * key_dim, n_value_heads * value_dim
    inputs = d_model * (2 * keys + 2 * values) + d_model * 2 * n_value_heads
    conv = (2 * keys + values) * conv_kernel  # one filter per channel, no bias
    return inputs + conv + 2 * n_value_heads + value_dim + values * d_model


def compressed_attention_parameters(d_model: int, n_heads: int, head_dim: int, q_rank: int,
                                    o_groups: int, o_rank: int, compress_rate: int = 0,
                                    index_heads: int = 0, index_head_dim: int = 0) -> int:
    """One DeepSeek-V4 attention sublayer, as transformers' ``DeepseekV4Attention`` builds it.

    Every kind has the same core: queries through a low-rank bottleneck (``d_model -> q_rank``,
    an RMSNorm, ``q_rank -> n_heads * head_dim``); one key-value head of ``head_dim``, read as
    both key and value, with its RMSNorm; a sink logit per head; and the grouped output
    projection: the heads split into ``o_groups`` groups, each mapped to ``o_rank``, then all
    ``o_groups * o_rank`` mixed back to ``d_model``. ``compress_rate`` 0 is a sliding-window
    layer, nothing more. Otherwise a compressor squeezes every ``compress_rate`` tokens into
    one key-value entry: a key-value and a gate projection, a learned bias per position in the
    window, an RMSNorm. With ``index_heads`` (compressed sparse attention, CSA) the compressor
    keeps two overlapping series, so its projections are twice as wide, and a Lightning
    Indexer picks the entries each query reads: its own compressor at ``index_head_dim``, a
    query projection from the query bottleneck, and a weight per indexer head. Without it
    (heavily compressed attention, HCA) there is no indexer.

    The sizes are positive ints, ``compress_rate``, ``index_heads`` and ``index_head_dim``
    non-negative, and ``o_groups`` divides ``n_heads * head_dim`` (a TypeError or ValueError
    naming the argument otherwise); the indexer's two sizes go together and need a
    compressor.
    """
    d, heads, hd, q_rank, groups, o_rank = _counts(
        d_model=d_model, n_heads=n_heads, head_dim=head_dim, q_rank=q_rank, o_groups=o_groups,
        o_rank=o_rank)
    rate, i_heads, i_dim = (check.positive_int(value, name, zero_ok=True) for name, value in (
        ("compress_rate", compress_rate), ("index_heads", index_heads),
        ("index_head_dim", index_head_dim)))
    if heads * hd % groups:
        raise ValueError(f"o_groups must divide n_heads * head_dim = {heads * hd}, got {groups}")
    if bool(i_heads) != bool(i_dim):
        raise ValueError(f"index_heads and index_head_dim go together, got {i_heads} and "
                         f"{i_dim}")
    if i_heads and not rate:
        raise ValueError("an indexer (index_heads) picks compressed entries: give a "
                         "compress_rate")
    query = d * q_rank + q_rank + q_rank * heads * hd  # down, norm, up
    key_value = d * hd + hd  # the one shared head and its norm
    output = o_rank * heads * hd + groups * o_rank * d  # per group to o_rank, then mixed
    core = heads + query + key_value + output  # and a sink per head
    if not rate:
        return core
    series = 2 if i_heads else 1  # CSA keeps two overlapping series per token
    compressor = 2 * d * series * hd + rate * series * hd + hd  # kv and gate, positions, norm
    indexer = 0
    if i_heads:
        indexer = (2 * d * 2 * i_dim + rate * 2 * i_dim + i_dim  # its compressor, as CSA's
                   + q_rank * i_heads * i_dim + d * i_heads)  # its queries, its head weights
    return core + compressor + indexer


def hyper_connection_parameters(d_model: int, n_streams: int, n_sublayers: int) -> int:
    """Parameters of DeepSeek-V4's manifold-constrained hyper-connections (mHC).

    The residual stream is ``n_streams`` copies of width ``d_model``. Before each of the
    ``n_sublayers`` sublayers (attention and FFN, two a layer), one matrix reads all the
    streams (``n_streams * d_model``) and gives ``n_streams`` weights to collapse them,
    ``n_streams`` to expand the output, and an ``n_streams x n_streams`` mix, each number with
    a bias, plus three scales. After the last layer a head collapses the streams once more:
    ``n_streams`` weights, their biases and one scale. Every argument is a positive int (a
    TypeError or ValueError naming it otherwise).
    """
    d, n, sublayers = _counts(d_model=d_model, n_streams=n_streams, n_sublayers=n_sublayers)
    mixes = (2 + n) * n  # collapse, expand, and the n x n mix
    per_sublayer = mixes * n * d + mixes + 3
    head = n * n * d + n + 1
    return sublayers * per_sublayer + head


def llama4_vision_parameters(d_model: int, n_layers: int, d_ff: int, image_size: int,
                             patch_size: int, d_out: int, d_text: int, channels: int = 3) -> int:
    """Parameters of Llama 4's vision tower and of its projector into the text model.

    The tower (transformers' ``Llama4VisionModel``) is a ViT: each image patch of
    ``patch_size**2 * channels`` pixels goes through a matrix without bias to ``d_model``; a
    class token and a position per patch and for the class token are learned; ``n_layers``
    layers hold attention with four biased ``d_model`` projections, a biased GELU FFN of width
    ``d_ff`` and two LayerNorms; one LayerNorm before them and one after. Its adapter merges
    2 x 2 neighbouring patches (pixel shuffle 0.5) and maps them through two matrices without
    bias, ``4 d_model -> d_out -> d_out``; the projector maps ``d_out -> d_text``, without bias.
    ``d_out`` is the released config's ``projector_input_dim``, ``projector_output_dim`` and
    ``vision_output_dim``, which the forward pass needs equal.
    """
    d, layers, hidden, size, patch, out, text, rgb = _counts(
        d_model=d_model, n_layers=n_layers, d_ff=d_ff, image_size=image_size,
        patch_size=patch_size, d_out=d_out, d_text=d_text, channels=channels)
    if patch > size:
        raise ValueError(f"patch_size must be at most image_size {size}, got {patch}")
    positions = (size // patch) ** 2 + 1  # every patch and the class token
    per_layer = (count_attention_parameters(d, bias=True) + count_parameters(d, hidden)
                 + 2 * 2 * d)  # two LayerNorms, scale and shift
    embedding = rgb * patch * patch * d + d + positions * d  # patches, class token, positions
    adapter = 4 * d * out + out * out
    return embedding + 2 * 2 * d + layers * per_layer + adapter + out * text


def _counts(**sizes: object) -> list[int]:
    """Each size checked as a positive int (not a bool), in the order given."""
    return [check.positive_int(value, name) for name, value in sizes.items()]
