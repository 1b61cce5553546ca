"""The knock-out widget ("Knock out a layer", docs/trained-ffn.md): SmolLM2-135M's top 5 next
tokens on a few prompts, clean and with one layer's FFN output or attention output set to zero,
all computed by ffn.smollm2.

The table is 61 forwards a prompt (the clean run, 30 FFN and 30 attention knock-outs): about
a minute on one thread, and several on a busy machine with BLAS's threads fighting over its
cores (measured here: 0.16 s of CPU a forward on one thread, 2.6 s with the default threads),
too slow for every site build. So it is generated once and committed
(knockout.json, beside this file) with what it was computed from: the model file's sha256, the
prompts, the dtype and TOP. tests/test_smollm2_knockout.py checks that record against the
installed file and recomputes some rows with ffn and with transformers; regenerate with

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD .venv/bin/python -m widgets.knockout.data

The build (render) only reads the JSON: it needs neither the model nor gguf.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from widgets._shared import fallback

HERE = Path(__file__).resolve().parent
TABLE = HERE / "knockout.json"
PROMPTS = {  # the widget's choice, by kind: a fact, counting, code
    "fact": "The capital of France is",
    "counting": "one, two, three,",
    "code": "def add(a, b):\n    return",
}
KINDS = {"ffn": "ffn_out", "attn": "attn_out"}  # what a knock-out zeroes: ffn.smollm2's site
KIND_LABELS = {"ffn": "FFN", "attn": "attention"}
TOP = 5  # next tokens shown
DTYPE = "float32"  # smollm2.load()'s default, as the chapter runs it
DIGITS = 1  # decimals of a percentage shown: "77.3%"


def token_label(text: str) -> str:
    """A token as the widget shows it: quoted, a leading space kept, a newline or tab written
    as \\n or \\t, so " Paris" and "Paris" differ on the page."""
    return '"' + text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t") + '"'


def percent(p: float, digits: int = DIGITS) -> str:
    """A probability as a percentage: 0.77254 -> "77.3%"."""
    return f"{100 * float(p):.{digits}f}%"


def row(table: dict[str, Any], prompt: str, kind: str, layer: int | None) -> dict[str, Any]:
    """The table's row for a prompt (its name) and a knock-out: ``kind`` "none" (the clean run,
    ``layer`` None) or "ffn" / "attn" with ``layer`` from 0 to n_layers - 1 (lab.js's
    knockoutRow)."""
    entry = next(e for e in table["prompts"] if e["name"] == prompt)
    if kind == "none":
        clean: dict[str, Any] = entry["clean"]
        return clean
    if layer is None:
        raise ValueError(f"layer is needed for kind {kind!r}")
    chosen: dict[str, Any] = entry[kind][layer]
    return chosen


def change_sentence(table: dict[str, Any], prompt: str, kind: str, layer: int | None) -> str:
    """What a knock-out does to the clean run's first token, in words (lab.js's
    changeSentence)."""
    clean = row(table, prompt, "none", None)
    watched = f"P({token_label(clean['texts'][0])})"
    if kind == "none":
        return f"With nothing zeroed, {watched} is {percent(clean['p'][0])}."
    return (f"With layer {layer}'s {KIND_LABELS[kind]} zeroed, {watched} is "
            f"{percent(row(table, prompt, kind, layer)['watch'])} ({percent(clean['p'][0])} "
            "with nothing zeroed).")


def layer_profile(table: dict[str, Any], prompt: str, kind: str) -> list[float]:
    """P(the clean run's first token) with each layer's ``kind`` output zeroed, layer 0 first
    (lab.js's layerProfile)."""
    return [row(table, prompt, kind, i)["watch"] for i in range(table["n_layers"])]


def top(model: Any, tokens: list[int], patch: dict[tuple[str, int], float] | None,
        watch: int | None) -> dict[str, Any]:
    """One run's top TOP next tokens ({"ids", "texts", "p"}), and the probability of the
    token ``watch`` (the clean run's first), under ``patch``."""
    p = model.run(tokens, patch=patch, record=False).probabilities()  # (vocab_size,)
    best = np.argsort(-p, kind="stable")[:TOP]  # (TOP,)
    ids = [int(i) for i in best]
    row: dict[str, Any] = {"ids": ids, "texts": [model.decode([i]) for i in ids],
                           "p": [float(p[i]) for i in ids]}
    row["watch"] = float(p[ids[0] if watch is None else watch])
    return row


def compute(model: Any, prompts: dict[str, str] = PROMPTS) -> dict[str, Any]:
    """The widget's table from ``model`` (an ffn.smollm2.SmolLM2): per prompt, the clean run
    and each layer's FFN and attention knock-out."""
    out: dict[str, Any] = {"top": TOP, "dtype": str(model.dtype), "n_layers":
                           model.config.n_layers, "prompts": []}
    for name, text in prompts.items():
        tokens = model.encode(text)
        clean = top(model, tokens, None, None)
        entry = {"name": name, "text": text, "tokens": tokens, "clean": clean}
        for kind, site in KINDS.items():
            entry[kind] = [top(model, tokens, {(site, i): 0.0}, clean["ids"][0])
                           for i in range(model.config.n_layers)]
        out["prompts"].append(entry)
    return out


def load_table() -> dict[str, Any]:
    """The committed table (knockout.json)."""
    table: dict[str, Any] = json.loads(TABLE.read_text(encoding="utf-8"))
    return table


def write_table() -> dict[str, Any]:
    """Recompute the table with the installed model and write knockout.json."""
    from ffn import smollm2
    from ffn.smollm2 import cache

    model = smollm2.load(np.dtype(DTYPE))
    file = smollm2.model_file()
    table = {"model": {"file": file.name, "sha256": cache.sha256(file)}, **compute(model)}
    TABLE.write_text(json.dumps(table, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return table


def widget_data(table: dict[str, Any]) -> dict[str, Any]:
    """The JSON the page carries: prompts with their rows (texts and probabilities, no ids)."""
    def row(r: dict[str, Any]) -> dict[str, Any]:
        return {"texts": r["texts"], "p": r["p"], "watch": r["watch"]}

    return {"top": table["top"], "n_layers": table["n_layers"], "digits": DIGITS,
            "kinds": KIND_LABELS,
            "prompts": [{"name": e["name"], "text": e["text"], "clean": row(e["clean"]),
                         **{k: [row(r) for r in e[k]] for k in KINDS}}
                        for e in table["prompts"]]}


def cells(r: dict[str, Any]) -> list[str]:
    """A row of the fallback table: the top tokens with their percentages, then P(watched)."""
    return [", ".join(f"{token_label(t)} {percent(p)}" for t, p in zip(r["texts"], r["p"],
                                                                       strict=True)),
            percent(r["watch"])]


def render() -> str:
    """The fallback tables (one per prompt: clean, then each layer's FFN and attention
    knock-out) and the widget's data."""
    table = load_table()
    regions = []
    for e in table["prompts"]:
        first = token_label(e["clean"]["texts"][0])
        head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in [
            "run", f"top {table['top']} next tokens", f"P({first})"])
        rows = [["clean (nothing zeroed)", *cells(e["clean"])]]
        for kind, label in KIND_LABELS.items():
            rows += [[f"layer {i} {label} zeroed", *cells(r)] for i, r in enumerate(e[kind])]
        body = "".join("<tr>" + f'<th scope="row">{html.escape(r[0])}</th>'
                       + "".join(f"<td>{html.escape(c)}</td>" for c in r[1:]) + "</tr>"
                       for r in rows)
        caption = html.escape(
            f"SmolLM2-135M on {token_label(e['text'])}: the {table['top']} most likely next "
            f"tokens, with nothing zeroed and with one layer's FFN output or attention output "
            f"set to zero, computed by ffn ({table['dtype']}) when the table was made.")
        regions.append(fallback.region(caption, f"<thead><tr>{head}</tr></thead>"
                                       f"<tbody>{body}</tbody>", "ffn-knockout__fallback"))
    return fallback.widget("".join(regions), widget_data(table))


WIDGETS = {"knockout": render}

if __name__ == "__main__":
    written = write_table()
    print(f"wrote {TABLE} ({len(written['prompts'])} prompts, model {written['model']['sha256']})")
