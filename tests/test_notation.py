"""The home page's notation table promises one meaning per symbol: these tests hold the pages to it.

index.md's "## Notation" table lists each symbol with its meaning. Here each of the symbols a
page could plausibly reuse for something else (single letters and Greek letters) has a *cue*,
words of its table meaning. Wherever a page *defines* one of them, in math (``s = ...``,
``N_d = ...`` at the start of a formula or after ``\\qquad``) or in prose ("for \\(N\\) weights",
"\\(s\\) bytes a value", "with \\(s\\) the ..."), the paragraph must carry its cue; otherwise the
page uses the symbol with another meaning. The few such uses the book keeps are listed in the
table itself, on the symbol's row, naming the page ("on the quantization page, ..."), and
here in ``EXCEPTIONS``; both lists must agree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_references import DOCS, paragraphs, prose

INDEX = DOCS / "index.md"

# symbol (as written in TeX) -> a regex of its table meaning's words
CUES: dict[str, str] = {
    "N": r"\btokens?\b|\brows?\b|residual",
    "s": r"standard deviation|variance|LayerNorm|RMSNorm",
    r"\mu": r"\bmean\b",
    r"\gamma": r"LayerNorm|RMSNorm|\bnorm\b|scale and shift",
    r"\beta": r"LayerNorm|RMSNorm|\bnorm\b|shift|Swish",
    r"\varepsilon": r"LayerNorm|RMSNorm|square root",
    "k": r"expert|top-",
    "D": r"device",
    "L": r"\blayers?\b|\bblocks?\b|\bloss\b|stack",
    r"\sigma": r"activation|ReLU|GELU|SiLU|gate",
    "P": r"\bweights?\b|\bparameters?\b",
    "q": r"\bbytes?\s+(?:a|per|each)\s+(?:stored\s+)?(?:value|number)",  # not just "bytes"
    "p": r"\bzeros?\b|dropout|\bdrop",
    "u": r"\bbias\b|update|balanc",
    r"\lambda": r"\bscale\b|route_scale|routed",
}

# (symbol, page) -> why the page keeps another meaning; the table's row for the symbol must
# name the page too.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("s", "quantization.md"): "a quantization scale, as LLM.int8() writes it",
    ("s", "moe-models.md"): "a router's sigmoid scores, as DeepSeek-V3 writes them",
    ("N", "parameters-flops.md"): "Kaplan et al.'s N, in their 6N, quoted in their notation",
    ("k", "parameters-flops.md"): "the inner dimension of a matrix product",
    (r"\varepsilon", "backward.md"): "the step of a finite difference",
    ("k", "architecture.md"): "a convolution's window width",
    ("q", "sparsity.md"): "q = 1 - p, the probability that a hidden unit is active",
    ("q", "quantization.md"): "a weight's integer code, q = round(w / s)",
    ("p", "moe.md"): "p = softmax(x R), the router's probabilities, as the MoE papers write them",
    ("p", "moe-models.md"): "the same p, for the Qwen routers",
    ("P", "moe.md"): "P_i, an expert's mean router probability, as Switch Transformer writes it",
    ("u", "gelu.md"): "the tanh form's inner argument",
    ("u", "gated.md"): "the up projection's pre-activation, beside the gate's g",
}


_MATH = re.compile(r"\\\((?P<inline>.+?)\\\)|\\\[(?P<display>.+?)\\\]", re.S)
_TEXT = re.compile(r"\\(?:text|operatorname|mathrm|textbf)\{[^{}]*\}")


def _symbol(tex: str) -> str:
    """A regex for the symbol as a token of TeX: not part of a longer name or command."""
    if tex.startswith("\\"):
        return re.escape(tex) + r"(?![A-Za-z])"
    return r"(?<![A-Za-z\\])" + re.escape(tex) + r"(?![A-Za-z])"


def math_spans(text: str) -> list[str]:
    return [_TEXT.sub(" ", m["inline"] or m["display"]) for m in _MATH.finditer(text)]


def definitions(text: str, tex: str) -> list[tuple[str, str]]:
    """The places in a paragraph that define ``tex``, as (where, what must carry the cue).

    In math, ``tex = ...`` at the start of a formula or after a separator: the paragraph must
    carry the cue. In prose, "for \\(tex\\) weights", ", \\(tex\\) bytes", "with \\(tex\\) the
    share": the word that names it must."""
    sym = _symbol(tex)
    found = []
    for span in math_spans(text):
        start = r"(?:^|\\qquad|\\quad|,|&|\\\\)\s*"
        for m in re.finditer(start + sym + r"(?:_\{?[^=\s]*\}?)?\s*=", span.strip()):
            found.append((f"\\({m.group(0).strip()} ...\\)", "paragraph"))
    inline = r"\\\(\s*" + sym + r"\s*\\\)"
    before = r"(?:\b(?:for|with|of|over|across|among|on|and)\s+|,\s*)"
    words = r"(?P<word>[a-z-]+)(?P<more>(?:\s+[a-z-]+){0,4})"  # the name: up to five words
    for m in re.finditer(before + inline + r"\s+(?:the\s+)?" + words, text):
        if m["word"] not in _NOT_A_NAME:
            found.append((m.group(0), m["word"] + m["more"]))
    return found


_NOT_A_NAME = {"and", "or", "of", "to", "in", "at", "on", "by", "for", "with", "from", "as",
               "that", "which", "than", "times", "is", "are", "be", "instead", "itself",
               "alone", "here", "then", "each", "every", "all", "its", "their", "so", "but",
               "if", "when", "gives", "give", "grows", "grow", "a", "an", "takes", "keeps",
               "stays", "sets", "makes", "changes", "moves"}


def table_rows() -> dict[str, str]:
    """Each symbol of the notation table -> its whole row's text."""
    section = INDEX.read_text("utf8").split("## Notation", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if not line.startswith("| \\("):
            continue
        first = line.split("|")[1]
        for m in re.finditer(r"\\\((.+?)\\\)", first):
            rows[m.group(1).strip()] = line
    return rows


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if p.name not in {"index.md", "references.md"})


def test_every_checked_symbol_is_in_the_table() -> None:
    rows = table_rows()
    missing = [tex for tex in CUES if tex not in rows]
    assert not missing, f"the notation table has no row for {missing}"


def test_the_exceptions_are_named_on_the_tables_rows() -> None:
    rows = table_rows()
    unlisted = [(tex, page) for tex, page in EXCEPTIONS if f"]({page}" not in rows[tex]]
    assert not unlisted, f"exceptions not named on the table's rows: {unlisted}"


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.name)
def test_no_page_gives_a_table_symbol_another_meaning(path: Path) -> None:
    page = path.relative_to(DOCS).as_posix()
    clashes = []
    found = paragraphs(prose(path))
    for n, (line, text) in enumerate(found):
        context = " ".join(t for _, t in found[max(0, n - 1):n + 1])  # and the one before
        for tex, cue in CUES.items():
            if (tex, page) in EXCEPTIONS:
                continue
            for where, named in definitions(text, tex):
                if not re.search(cue, context if named == "paragraph" else named):
                    clashes.append(f"line {line}: {where!r} defines {tex} without its meaning "
                                   f"({cue})")
    assert not clashes, (f"{page} uses symbols of the notation table with another meaning "
                         "(rename, or list the exception on the table's row and in "
                         "EXCEPTIONS):\n" + "\n".join(clashes))


def test_the_check_catches_a_clash() -> None:
    """The inference page once wrote "training costs about 6N FLOPs per token for N weights"
    and ", s bytes a value": definitions whose names are not N's or s's table meaning."""
    clash = [named for _, named in definitions(
        r"training costs about \(6N\) FLOPs per token for \(N\) weights", "N")]
    assert clash == ["weights"] and not re.search(CUES["N"], clash[0])
    assert [n for _, n in definitions(r"With \(P\) weights, \(s\) bytes a value", "s")] == [
        "bytes a value"]
    assert definitions(r"\(s = \max|w| / 127\)", "s") == [(r"\(s = ...\)", "paragraph")]
    assert definitions(r"\[ w_i = \gamma \cdot s_i \]", r"\gamma") == []  # a use only
    assert definitions(r"goes down by \(\gamma\) if the expert", r"\gamma") == []
    assert [n for _, n in definitions(r"for \(N\) tokens", "N")] == ["tokens"]
    assert re.search(CUES["N"], definitions(r"with \(N\) the number of residual layers",
                                            "N")[0][1])
    # the symbols added with the inference, sparsity and MoE pages' renames
    named = [n for _, n in definitions(r"with \(q\) the probability that a unit is on", "q")]
    assert named == ["probability that a unit is"] and not re.search(CUES["q"], named[0])
    assert re.search(CUES["q"], definitions(r"and \(q\) bytes a value", "q")[0][1])
    assert not re.search(CUES["q"], "the bytes read")  # a page about bytes is not enough
    assert not re.search(CUES["P"], definitions(r"for \(P\) tokens", "P")[0][1])
    assert definitions(r"\(u = \sqrt{2/\pi}\,x\)", "u") == [(r"\(u = ...\)", "paragraph")]
