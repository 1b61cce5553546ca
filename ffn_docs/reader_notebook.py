"""A chapter as a Jupyter notebook a reader can run: its prose as Markdown cells, its blocks
as code cells in page order, each with the output the page shows under it.

The page is read as the doc-tests read it (markdown_page.py): the same blocks, options and
output fences. One kernel runs the cells top to bottom, so a `continuation` block continues
the names of the blocks above it, as the harness runs it. A `torch` block (a PyTorch tab)
becomes an optional cell: it says it needs PyTorch and, without it, prints that it was
skipped instead of raising, so that "Run all" goes on. What the blocks import from the book
(`ffn`, and `ffn.tables.markdown_table` for the tables they print) is in the wheel the first
code cell installs: no helper code is pasted into the notebook.

Each code cell carries its block's first line on the page (``metadata.ffn.line``, 1-based,
the line of the opening fence, as the harness's messages count it), so a test can hold what
a cell prints to the page's output at that line.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat import v4 as nbf

from ffn_docs import markdown_page as pages
from ffn_docs.containers import flatten_containers


def how_to_run(wheel_url: str, notebook: str, extras: tuple[str, ...] = ()) -> str:
    """The three steps, first in every notebook (docs/index.md says the same)."""
    install = " ".join(["pip install", wheel_url, *extras])
    return (
        "To run it:\n\n"
        f"1. Download this file, `{notebook}`, with the page's **Run this page** button "
        "(done, if you are reading it in Jupyter).\n"
        f"2. Install `ffn` with numpy and scipy, in one line: `{install}`. Or run the first "
        "code cell below, which does the same.\n"
        f"3. Open it in Jupyter (`jupyter lab {notebook}`), or upload it to any hosted "
        "Jupyter, and run all cells. Every output should come out as the page shows it.\n\n"
        "Offline, in a checkout of the book's repository: run `pip install .` there instead "
        "of step 2, and skip that cell.")


TORCH_NOTE = ("# Optional: the page's PyTorch tab. It needs PyTorch (`%pip install torch`); "
              "without it\n# this cell only says so, and the cells after it do not need it.\n")

# Packages a page's code imports beside ffn, numpy and scipy: its first cell installs them too.
EXTRAS = ("ml_dtypes",)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_HEADER = re.compile(r'^(?P<indent> *)(?P<kind>!!!|\?\?\?\+?|===) *(?P<type>[\w-]*) *'
                     r'(?:"(?P<title>[^"]*)")?')
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_INLINE_MATH = re.compile(r"\\\((.+?)\\\)", re.S)
_DISPLAY_MATH = re.compile(r"\\\[(.+?)\\\]", re.S)
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_LINK = re.compile(r"(?P<lead>\]\(\s*)(?P<url><[^>\n]*>|[^)\s]+)")
_REFERENCE = re.compile(r"^(?P<lead> {0,3}\[[^\]\n]+\]:\s*)(?P<url>\S+)", re.M)
_HTML_URL = re.compile(r"""(?P<lead>\b(?:href|src)=")(?P<url>[^"]*)""")
_ATTRIBUTES = re.compile(r"(?<=\))\{[^}\n]*\}")  # attr_list after an image or link
# A dark-scheme copy of a figure (`#only-dark`): the notebook keeps the light one only.
_DARK_IMAGE = re.compile(r"!\[[^\]]*\]\([^)\s]*#only-dark\)(?:\{[^}\n]*\})?\n?")
_FENCE_LINE = re.compile(r"^ *(`{3,}|~{3,})")


def absolute(url: str, page_src: str, site_url: str, page_url: Callable[[str], str]) -> str:
    """A link of the page made absolute to ``site_url``; ``page_url`` maps a page's docs/
    source ("gelu.md", "notebooks/training.ipynb") to its site-relative URL ("gelu/").
    External links stay as they are."""
    bare = url.strip("<>")
    if not bare or re.match(r"^[a-z][a-z0-9+.-]*:|^//", bare, re.I):
        return url
    if bare.startswith("/"):
        raise ValueError(f"{page_src}: absolute path link {bare!r} (mkdocs.yml warns on these)")
    path, _, fragment = bare.partition("#")
    target = page_src if not path else _join(page_src, path)
    if target.endswith((".md", ".ipynb")):  # a page (a notebook page too): its URL
        target = page_url(target)
    return site_url + target + (f"#{fragment}" if fragment else "")


def _join(page_src: str, path: str) -> str:
    parts = page_src.split("/")[:-1]
    for part in path.split("/"):
        if part == "..":
            if not parts:
                raise ValueError(f"{page_src}: link {path!r} leaves docs/")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) + ("/" if path.endswith("/") else "")


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """``change`` applied to the text outside fences and inline code spans."""
    out, prose, fence = [], [], ""
    for line in text.split("\n"):
        f = _FENCE_LINE.match(line)
        if fence:
            out.append(line)
            if re.fullmatch(rf" *{fence[0]}{{{len(fence)},}} *", line):
                fence = ""
        elif f:
            out.append(change("\n".join(prose)))
            prose = []
            out.append(line)
            fence = f[1]
        else:
            prose.append(line)
    out.append(change("\n".join(prose)))
    text = "\n".join(out)
    return text


def _prose(text: str, change: Callable[[str], str]) -> str:
    """``change`` applied to prose only: not to code, fenced or inline."""
    def outside_spans(chunk: str) -> str:
        pieces, last = [], 0
        for m in _INLINE_CODE.finditer(chunk):
            pieces += [change(chunk[last:m.start()]), m.group()]
            last = m.end()
        return "".join([*pieces, change(chunk[last:])])
    return _outside_code(text, outside_spans)


def flatten(lines: list[str]) -> list[str]:
    """The page's lines with admonition and tab headers as bold titles and their bodies
    unindented (containers.py's flattening), line for line."""
    flat = flatten_containers("\n".join(lines)).split("\n")
    for n, line in enumerate(lines):
        m = _HEADER.match(line)
        if m and not flat[n].strip():  # flatten_containers blanked it: it was a header
            title = m["title"] if m["title"] is not None else m["type"].capitalize()
            flat[n] = f"**{title}**" if title else ""
    return flat


def markdown(lines: list[str], page_src: str, site_url: str,
             page_url: Callable[[str], str]) -> str:
    """Flattened prose lines (no executed blocks, no outputs) for a Markdown cell: links
    absolute, math in Jupyter's `$...$` and `$$...$$`, HTML comments (prose ties) dropped."""
    def links(chunk: str) -> str:
        def fix(m: re.Match[str]) -> str:
            return m["lead"] + absolute(m["url"], page_src, site_url, page_url)
        chunk = _DARK_IMAGE.sub("", chunk).replace("#only-light)", ")")
        chunk = _ATTRIBUTES.sub("", chunk)
        for pattern in (_LINK, _REFERENCE, _HTML_URL):
            chunk = pattern.sub(fix, chunk)
        return chunk

    def math(chunk: str) -> str:
        chunk = chunk.replace("$", "\\$")  # a dollar in prose is no math delimiter here
        chunk = _DISPLAY_MATH.sub(lambda m: f"$${m[1]}$$", chunk)
        return _INLINE_MATH.sub(lambda m: f"${m[1].strip()}$", chunk)

    text = _prose("\n".join(lines), lambda chunk: math(links(_COMMENT.sub("", chunk))))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _torch_cell(code: str) -> str:
    return (TORCH_NOTE + "import importlib.util\n\n"
            'if importlib.util.find_spec("torch") is None:\n'
            '    print("PyTorch is not installed: this optional cell was skipped.")\n'
            "else:\n" + textwrap.indent(code, "    ", lambda line: True))


def _output(page: pages.Page, block: pages.Block) -> list[NotebookNode]:
    out = block.output
    if out is None:
        return []
    shown = [ln[len(out.indent):] for ln in page.lines[out.start:out.end]]
    while shown and not shown[-1].strip():
        shown.pop()
    while shown and not shown[0].strip():
        shown.pop(0)
    if not shown:
        return []
    return [nbf.new_output("stream", name="stdout", text="\n".join(shown) + "\n")]


def build(path: Path, page_src: str, title: str, site_url: str, wheel: str,
          page_url: Callable[[str], str], notebook: str,
          marks: Mapping[str, str] | None = None) -> NotebookNode:
    """The notebook ``notebook`` (its file name) of the page at ``path`` (``page_src`` under
    docs/), installing ``wheel`` (a file name at the site's root) in its first code cell.
    ``marks`` maps HTML comments of the page to the Markdown the site shows in their place
    (hooks/reader_notebooks.py's `<!-- ffn-wheel -->`), so that the notebook shows it too."""
    page = pages.load(path)
    if not page.blocks:
        raise ValueError(f"{page.name}: no python block runs: no notebook")
    lines = list(page.lines)
    if m := _FRONT_MATTER.match("\n".join(lines).removeprefix(pages.BOM)):
        skip = m.group().count("\n")
        lines[:skip] = [""] * skip  # blank: the blocks' line numbers stay valid
    for mark, text in (marks or {}).items():
        lines = [line.replace(mark, text) for line in lines]  # within a line: numbers stay
    lines = flatten(lines)
    url = site_url + page_url(page_src)
    extras = [name for name in EXTRAS if any(
        re.search(rf"^\s*(import|from) {name}\b", b.code, re.M) for b in page.blocks)]
    also = "".join(f"\n# This page's code also imports {name}, installed here too."
                   for name in extras)
    install = [site_url + wheel, *extras]
    cells = [
        nbf.new_markdown_cell(f"This notebook is the page [{title}]({url}) of "
                              f"[FFN by the Numbers]({site_url}). "
                              + how_to_run(install[0], notebook, tuple(extras))),
        nbf.new_code_cell(
            "# Step 2: ffn from the book's site, with numpy and scipy as its dependencies.\n"
            "# Offline: in a checkout of the repository, `pip install .` there, and skip "
            f"this cell.{also}\n%pip install " + " ".join(install)),
    ]
    done = 0
    for block in page.blocks:
        opening = block.start - 1
        prose = markdown(lines[done:opening], page_src, site_url, page_url)
        if prose:
            cells.append(nbf.new_markdown_cell(prose))
        code = block.code.rstrip("\n")
        cell = nbf.new_code_cell(_torch_cell(code) if block.torch else code)
        cell.metadata["ffn"] = {"line": block.start, "torch": block.torch}
        cell.outputs = _output(page, block)
        cells.append(cell)
        # What comes after the fence up to `after` (code annotations) is prose; the
        # output under it is in the cell.
        annotations = lines[block.end:block.after]
        done = block.output.last if block.output is not None else block.after
        note = markdown(annotations, page_src, site_url, page_url) if annotations else ""
        if note:
            cells.append(nbf.new_markdown_cell(note))
    rest = markdown(lines[done:], page_src, site_url, page_url)
    if rest:
        cells.append(nbf.new_markdown_cell(rest))
    for n, cell in enumerate(cells):
        cell["id"] = f"cell-{n}"  # stable ids: the same page gives the same file
    notebook = nbf.new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
        "ffn": {"page": page_src, "url": url},
    })
    nbformat.validate(notebook)
    return notebook
