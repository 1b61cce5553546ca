"""The chapters build with Zensical, Material for MkDocs' successor (Material reaches end of
life on 2027-05-05; see CONTRIBUTING, "Zensical").

Zensical reads mkdocs.yml and runs its Markdown extensions, mkdocstrings included, but no
MkDocs hooks or plugins such as mkdocs-jupyter and htmlproofer (it skips them silently).
It insists on site_dir and docs_dir inside the config file's directory and writes `.cache/`
there, so the build runs on a copy of mkdocs.yml (unchanged), docs/, overrides/ and ffn/ in a
temporary directory, which keeps the shared tree clean.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tooling.site import formulas, nav_pages

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 180  # seconds; the build takes about 10

# No chapter uses content tabs yet, so a page of our own checks that they render, with a
# highlighted fence and math inside them, as a chapter that uses them would.
PROBE = r'''# Probe

=== "Code"

    Inside a tab, \(x^2\):

    ```python
    print(1)
    ```

=== "Math"

    \[
    \frac{1}{2}
    \]
'''

# TeX that reached the reader: delimiters, commands, or $..$ with TeX inside
# (as in tests/browser/test_pages.py).
_RAW_TEX = re.compile(r"\\[()\[\]]|\\[A-Za-z]{2,}|\$\$|\$[^$\s][^$\n]*?[\\^_{}][^$\n]*?\$")
_FENCE = re.compile(r"^( *)(```|~~~).*?^\1\2", re.S | re.M)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Prose(HTMLParser):
    """The text of a page outside code, scripts and MathML: where raw TeX would show."""

    SKIP = frozenset({"pre", "code", "script", "style", "math", "svg"})

    def __init__(self, page: str) -> None:
        super().__init__()
        self.depth = 0
        self.parts: list[str] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.depth += tag in self.SKIP

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag in self.SKIP

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("zensical") is None:
        pytest.fail("zensical is not installed: it is a required test dependency (pyproject.toml, "
                    "group 'test'); ./scripts/test sets up .venv with it")
    project = tmp_path_factory.mktemp("zensical")
    shutil.copy(ROOT / "mkdocs.yml", project)
    for folder in ("docs", "overrides", "ffn"):  # ffn: the pages include its code (snippets)
        shutil.copytree(ROOT / folder, project / folder)
    (project / "docs" / "probe.md").write_text(PROBE, encoding="utf-8")
    # `-m` puts the copy, not the repository, first on sys.path: ffn_docs.mathml must come
    # from the install, as it does for the `zensical` console script.
    result = subprocess.run(
        [sys.executable, "-m", "zensical", "build", "--strict"],
        cwd=project, capture_output=True, text=True, timeout=TIMEOUT, check=False,
    )
    output = _ANSI.sub("", result.stdout + result.stderr)
    assert result.returncode == 0, f"zensical build --strict failed:\n{output}"
    return project / "site"


_SOURCE_VIEW = re.compile(r'<details class="[\w-]+">\s*<summary>Source code in.*?</details>', re.S)


def _chapters() -> list[tuple[Path, str]]:
    """(Markdown source, built page) of every Markdown page in the nav."""
    return [(ROOT / "docs" / p.src, f"{p.url}index.html")
            for p in nav_pages() if p.src.endswith(".md")]


def test_math_is_mathml(site: Path) -> None:
    problems = []
    for src, page in _chapters():
        built = (site / page).read_text(encoding="utf-8")
        prose = "".join(_Prose(built).parts)
        problems += [f"{page}: raw TeX {prose[max(m.start() - 30, 0):m.end() + 30]!r}"
                     for m in _RAW_TEX.finditer(prose)]
        if 'class="arithmatex"' in built:
            problems.append(f"{page}: arithmatex output not converted to MathML")
        if built.count("<math ") < formulas(src):
            problems.append(f"{page}: {formulas(src)} formulas in {src.name}, "
                            f"{built.count('<math ')} <math> in the page")
    assert not problems, "\n".join(problems)
    assert sum(formulas(src) for src, _ in _chapters()) > 0, "no math: is the check blind?"


def test_code_blocks_are_highlighted(site: Path) -> None:
    problems = []
    for src, page in _chapters():
        fences = _FENCE.findall(src.read_text(encoding="utf-8"))
        built = (site / page).read_text(encoding="utf-8")
        # mkdocstrings' "Source code in ..." blocks (docs/api.md) are not fences of the page.
        blocks = _SOURCE_VIEW.sub("", built).count('<div class="highlight">')
        if blocks != len(fences):
            problems.append(f"{page}: {len(fences)} fences in {src.name}, {blocks} code blocks")
        if fences and '<span class="n">' not in built:  # a Pygments token: a Python name
            problems.append(f"{page}: code blocks without syntax highlighting")
    assert not problems, "\n".join(problems)


def test_content_tabs(site: Path) -> None:
    built = (site / "probe" / "index.html").read_text(encoding="utf-8")
    assert '<div class="tabbed-set tabbed-alternate"' in built
    assert '<label for="__tabbed_1_1">Code</label><label for="__tabbed_1_2">Math</label>' in built
    tabs = built.split('<div class="tabbed-block">')[1:]
    assert len(tabs) == 2, "expected two tab panels"
    assert '<div class="highlight">' in tabs[0] and '<span class="nb">print</span>' in tabs[0]
    assert tabs[0].count("<math ") == 1 and tabs[1].count("<math ") == 1


def test_api_reference(site: Path) -> None:
    """mkdocstrings renders every `::: name` of docs/api.md as a heading with that id."""
    names = re.findall(r"^::: (\S+)", (ROOT / "docs" / "api.md").read_text(), re.M)
    built = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert names, "docs/api.md has no ::: entries"
    missing = [n for n in names if f'id="{n}"' not in built]
    assert not missing, f"not on the built API page: {missing}"
