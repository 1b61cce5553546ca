"""Committed figures are exactly what scripts/figures draws now, and drawing is repeatable."""

from __future__ import annotations

import ast
import functools
import html
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


def test_seed_data_is_what_the_pages_use() -> None:
    """Chapter 6 holds each example's inputs and no published array (it teaches, computed);
    the errata appendix holds the inputs and every published array; both equal _seed_data's."""
    chapter = _page_arrays(DOCS / "worked-example.md")
    appendix = _page_arrays(DOCS / "errata.md")
    for example in _seed_data.EXAMPLES:
        published = {stage.name for stage in example.stages}
        inputs = set(example.arrays) - published
        for page_name, on_page, names in (("worked-example.md", chapter, inputs),
                                          ("errata.md", appendix, set(example.arrays))):
            assert example.section in on_page, f"no '## {example.section}' on {page_name}"
            page = on_page[example.section]
            for name in sorted(names):
                assert name in page, f"{page_name}, {example.section}: no {name!r} on the page"
                assert np.array_equal(np.array(example.arrays[name]), np.array(page[name])), (
                    f"{page_name}, {example.section}: {name!r} differs from _seed_data.py")
        shown = published & set(chapter[example.section])
        assert not shown, (f"worked-example.md, {example.section}: published arrays "
                           f"{sorted(shown)} belong in errata.md")


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:[.,]\d+)*", text))


def test_diagrams_are_on_pages_and_their_alt_text_numbers_are_drawn() -> None:
    """Each diagram is shown (light and dark) with alt text, and every number in its alt text
    is one the diagram draws (in its narrow drawing too, if it has one: a phone shows that one
    under the same alt text), so alt text cannot drift from what ffn computes."""
    stems = {stem for module in DIAGRAM_MODULES
             for stem in module.FIGURES}
    images = [(alt, stem, dark)
              for page in sorted(DOCS.glob("*.md"))
              for alt, stem, dark in re.findall(r"!\[([^\]]*)\]\(figures/([\w-]+?)(-dark)?\.svg",
                                                page.read_text(encoding="utf-8"))]
    for stem in sorted(stems):
        shown = [(alt, dark) for alt, s, dark in images if s == stem]
        assert {dark for _, dark in shown} == {"", "-dark"}, f"{stem} is not shown in both themes"
        for drawing in (stem, f"{stem}-narrow"):
            path = DOCS / "figures" / f"{drawing}.svg"
            if drawing != stem and not path.exists():
                continue  # no narrow drawing: a phone shows the wide one
            svg = path.read_text(encoding="utf-8")
            drawn = _numbers(html.unescape(" ".join(re.findall(r"<text[^>]*>([^<]*)</text>",
                                                               svg))))
            for alt, _ in shown:
                assert len(alt) > 40, f"{stem}: alt text too short"
                missing = _numbers(alt) - drawn
                assert not missing, (f"{drawing}: alt text numbers {sorted(missing)} are not in "
                                     "the figure")
