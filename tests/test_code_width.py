"""Every code block and printed output of every page fits its column on a laptop (issue 41).

At 1366x900, with both of Material's sidebars, a code block's text box is 656 px wide, and the
code font (DejaVu Sans Mono here, Menlo's metrics; SF Mono and Consolas are narrower) is
13.6 px, 8.18 px a character: 80 characters fit. The pages' python blocks are formatted by
`ruff format --line-length 79` (PEP 8's 79 leaves one character to spare), and what they
print is kept as narrow. Blocks inside admonitions get a smaller font and room to spare.
tests/browser/test_cut_off.py checks the same thing in Chromium, on the built site.

Run the formatter over a page's blocks (then read the diff and re-run the page):
`.venv/bin/ruff format --line-length 79` on each block, or by hand.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from ffn_docs.markdown_page import PYTHON_LANGS, fence_info, parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
LINE = 79  # characters: see the module's docstring
# A block that shows a section of ffn's own code (pymdownx.snippets, dedented as mkdocs.yml's
# `dedent_subsections` does): `--8<-- "ffn/feedforward.py:forward"`.
SNIPPET = re.compile(r'^--8<-- "(?P<path>[^":]+):(?P<section>[^"]+)"$')


def snippet(path: str, section: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    match = re.search(rf"--8<-- \[start:{re.escape(section)}\]\n(.*?)\n[^\n]*--8<-- "
                      rf"\[end:{re.escape(section)}\]", text, re.S)
    assert match, f"{path}: no section {section!r}"
    return textwrap.dedent(match[1])


def long_lines(path: Path) -> list[str]:
    """Each line of a python or text fence of the page longer than LINE characters, not
    counting the indentation that puts the fence in an admonition or a tab."""
    text = path.read_text(encoding="utf-8")
    found = []
    for tok in parser().parse(text):
        info = fence_info(tok.info) if tok.type == "fence" else []
        if not tok.map or not info or info[0] not in (*PYTHON_LANGS, "text"):
            continue
        # tok.content is the block without its fence's indentation (parser() flattens them)
        content, where = tok.content, f"{path.name}:{{n}}"
        included = SNIPPET.match(content.strip())
        if included:
            content = snippet(included["path"], included["section"])
            where = f"{path.name}:{tok.map[0] + 2} ({included['path']}, line {{n}} of the section)"
        for n, line in enumerate(content.split("\n"), start=tok.map[0] + 2 if not included else 1):
            if len(line) > LINE:
                found.append(f"{where.format(n=n)}: {len(line)} characters: {line.strip()[:60]}")
    return found


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_code_and_outputs_fit_a_laptop_column(path: Path) -> None:
    found = long_lines(path)
    assert not found, (f"lines longer than {LINE} characters (a code block's width at "
                       "1366x900):\n" + "\n".join(found))


def test_the_check_sees_a_long_line(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("!!! note\n\n    ```python\n    x = 1\n    y = '" + "a" * LINE + "'\n"
                    "    ```\n\n```text\nok\n```\n", encoding="utf-8")
    assert [f.split(":")[1] for f in long_lines(page)] == ["5"]
