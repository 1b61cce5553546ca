"""Committed figures are exactly what scripts/figures draws now, and drawing is repeatable."""

from __future__ import annotations

import ast
import functools
import html
import math
import re
from pathlib import Path

import numpy as np

from scripts.figures import _seed_data, advanced, build, diagrams, errata


@functools.cache
def first_drawing() -> dict[str, bytes]:
    """Every figure drawn once, shared by the two tests below (drawing takes half a minute)."""
    return build.render_all()


def test_committed_figures_are_current() -> None:
    problems = build.check(first_drawing())
    hint = "\nrun ./scripts/make-figures and commit docs/figures/"
    assert not problems, "\n".join(problems) + hint


def test_drawing_twice_gives_the_same_bytes() -> None:
    assert build.render_all() == first_drawing()


# --- the diagrams (scripts/figures/advanced.py, diagrams.py, errata.py) ---------------------

DOCS = Path(__file__).resolve().parents[1] / "docs"
DIAGRAM_MODULES = (advanced, diagrams, errata)


def _page_arrays(page: Path) -> dict[str, dict[str, object]]:
    """Per '## Example N' section of `page`: every `name = np.array(<literal>)` of its python
    blocks (first one wins) and the entries of a `published = {key: (<literal>, ...)}` dict."""
    found_all: dict[str, dict[str, object]] = {}
    for part in re.split(r"^## ", page.read_text(encoding="utf-8"), flags=re.M)[1:]:
        head = part.splitlines()[0]
        if not head.startswith("Example"):
            continue
        found: dict[str, object] = {}
        fences = r"^( *)```(?:python|\{\.python[^}]*\})[^\n]*\n(.*?)^\1```"
        for m in re.finditer(fences, part, re.M | re.S):
            code = "\n".join(line[len(m[1]):] for line in m[2].splitlines())
            for node in ast.walk(ast.parse(code)):
                if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Name)):
                    continue
                name, value = node.targets[0].id, node.value
                if (isinstance(value, ast.Call) and ast.unparse(value.func) == "np.array"
                        and len(value.args) == 1):
                    found.setdefault(name, ast.literal_eval(value.args[0]))
                elif name == "published" and isinstance(value, ast.Dict):
                    for key, entry in zip(value.keys, value.values, strict=True):
                        assert key is not None and isinstance(entry, ast.Tuple)
                        found.setdefault(ast.literal_eval(key), ast.literal_eval(entry.elts[0]))
        found_all[head.split(":")[0]] = found
    return found_all


def test_seed_data_is_what_the_worked_example_page_uses() -> None:
    seed_data = _seed_data
    on_page = _page_arrays(DOCS / "worked-example.md")
    for example in seed_data.EXAMPLES:
        assert example.section in on_page, f"no '## {example.section}' on worked-example.md"
        page = on_page[example.section]
        for name, value in example.arrays.items():
            assert name in page, f"{example.section}: {name!r} is no longer on the page"
            assert np.array_equal(np.array(value), np.array(page[name])), (
                f"{example.section}: {name!r} differs between the page and _seed_data.py")


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,]\d+)*", text))


def test_diagrams_are_on_pages_and_their_alt_text_numbers_are_drawn() -> None:
    """Each diagram is shown (light and dark) with alt text, and every number in its alt text
    is one the diagram draws, so alt text cannot drift from what ffn computes."""
    stems = {stem for module in DIAGRAM_MODULES
             for stem in module.FIGURES}
    images = [(alt, stem, dark)
              for page in sorted(DOCS.glob("*.md"))
              for alt, stem, dark in re.findall(r"!\[([^\]]*)\]\(figures/([\w-]+?)(-dark)?\.svg",
                                                page.read_text(encoding="utf-8"))]
    for stem in sorted(stems):
        shown = [(alt, dark) for alt, s, dark in images if s == stem]
        assert {dark for _, dark in shown} == {"", "-dark"}, f"{stem} is not shown in both themes"
        svg = (DOCS / "figures" / f"{stem}.svg").read_text(encoding="utf-8")
        drawn = _numbers(html.unescape(" ".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))))
        for alt, _ in shown:
            assert len(alt) > 40, f"{stem}: alt text too short"
            missing = _numbers(alt) - drawn
            assert not missing, f"{stem}: alt text numbers {sorted(missing)} are not in the figure"


# --- the prefill figure (scripts/figures/roofline.py) -----------------------------------------

def _gpt_oss_served_bytes(tokens_experts: int, tokens: int) -> int:
    """gpt-oss-120b's FFN bytes for ``tokens`` tokens reading ``tokens_experts`` experts a layer,
    counted from the checkpoint's layout (gpt-oss weights.py): each expert matrix stored as
    MXFP4, 16 bytes of packed 4-bit codes and 1 scale byte per 32 weights; the expert biases,
    the router's weight and bias and each token's x and y in bfloat16 (2 bytes)."""
    d, f, n_experts, layers = 2880, 2880, 128, 36
    weights = d * 2 * f + f * d  # mlp1_weight (W and V) and mlp2_weight, per expert
    assert weights % 32 == 0
    mxfp4 = weights // 32 * (16 + 1)
    biases = 2 * (2 * f + d)  # mlp1_bias and mlp2_bias
    router = 2 * (d + 1) * n_experts  # gate.weight and gate.bias
    return layers * (router + tokens_experts * (mxfp4 + biases) + 2 * 2 * d * tokens)


def test_prefill_figure_counts_gpt_oss_as_served_bytes() -> None:
    from scripts.figures import roofline

    oss = roofline.ffn.get_model("gpt-oss-120b")
    # 1 token reads its 4 experts; 8192 tokens read all 128 (experts_read gives 128.0 there)
    for tokens, experts in ((1, 4), (8192, 128)):
        expected = roofline.decode_flops(oss, tokens) / _gpt_oss_served_bytes(experts, tokens)
        # rel 1e-12: the page's count subtracts floats (bfloat16 bytes less MXFP4's saving)
        assert math.isclose(roofline.served_intensity(oss, tokens), expected, rel_tol=1e-12)


def test_prefill_figure_crossover_counts_up_to_critical_batch() -> None:
    from scripts.figures import roofline

    oss, gpu = roofline.ffn.get_model("gpt-oss-120b"), roofline.H100_SXM
    walked = roofline.first_reaching(lambda n: roofline.arithmetic_intensity(oss, n),
                                     gpu.ridge_point)
    assert walked == roofline.critical_batch(oss, gpu)  # ffn's bisection, another search
    served = roofline.first_reaching(lambda n: roofline.served_intensity(oss, n),
                                     gpu.ridge_point)
    assert roofline.served_intensity(oss, served - 1) < gpu.ridge_point
    assert roofline.served_intensity(oss, served) >= gpu.ridge_point
