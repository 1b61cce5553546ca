"""MkDocs hook for notebook pages (mkdocs-jupyter): nothing from another host, real alt text.

1. mkdocs-jupyter 0.26.3 puts two script blocks from nbconvert's template on every notebook
   page, and no plugin option removes them: MathJax (a `<script src="">` unless
   `custom_mathjax_url` names a CDN) and a Mermaid loader that imports Mermaid from
   cdnjs.cloudflare.com when a cell shows a diagram. Our notebooks use neither (their
   Markdown cells hold no math), and the site must work offline: both blocks are removed,
   and the build fails if a notebook page still loads a script or an image from another host.
2. nbconvert gives every plot the alt text "No description has been provided for this
   image". A code cell that shows a plot says what it shows in a comment, `# alt: Loss
   curves of ...` (continued on lines that start with `#` and two or more spaces); the n-th
   such comment in the notebook becomes the alt text of the n-th plot on the page. The build
   fails when the counts differ.
3. A notebook page has no front matter, so its meta description comes from the notebook's
   own metadata, `"description"` (the build fails without one).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import nbformat
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid.*?</script>', re.S)
_REMOTE = re.compile(r"""(?:\bsrc\s*=\s*|\bimport\s*\(\s*|\burl\(\s*)["']?(?:https?:)?//""")
_NO_ALT = 'alt="No description has been provided for this image"'
_ALT_COMMENT = re.compile(r"^[ \t]*# alt: (.+(?:\n[ \t]*#[ \t]{2,}.+)*)", re.M)
_CONTINUATION = re.compile(r"\s*\n[ \t]*#\s*")


def _alt_texts(cells: list[Any]) -> list[str]:
    return [_CONTINUATION.sub(" ", alt).strip() for cell in cells if cell.cell_type == "code"
            for alt in _ALT_COMMENT.findall(cell.source)]


def on_page_content(content: str, page: Page, **_: Any) -> str:
    if not page.file.src_uri.endswith(".ipynb"):
        return content
    name = page.file.src_uri
    content = _MERMAID.sub("", _MATHJAX.sub("", content, count=1), count=1)
    if match := _REMOTE.search(content):
        snippet = content[match.start() : match.start() + 120]
        raise PluginError(f"{name}: the notebook page loads from another host: {snippet!r}")

    notebook = nbformat.read(Path(page.file.abs_src_path or ""), as_version=4)
    if not notebook.metadata.get("description"):
        raise PluginError(f"{name}: set a one-sentence \"description\" in the notebook's metadata")
    page.meta["description"] = notebook.metadata["description"]  # Material's <meta> tag
    alts = _alt_texts(notebook.cells)
    if content.count(_NO_ALT) != len(alts):
        raise PluginError(
            f"{name} shows {content.count(_NO_ALT)} plots but has {len(alts)} '# alt: ...' "
            "comments: give each plot a comment saying what it shows, in the cell that "
            "shows it"
        )
    for alt in alts:
        content = content.replace(_NO_ALT, f'alt="{html.escape(alt)}"', 1)
    return content
