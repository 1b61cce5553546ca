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
4. When mkdocs-jupyter's cache is on (`./scripts/serve` turns it on; the tests' builds and CI
   run without it), its entries go under `cache_dir/<code key>`, cache_dir taken from the
   project's root (mkdocs.yml's directory), not the current one. mkdocs-jupyter keys an entry
   on the notebook's bytes and its own settings only, so after a change in `ffn/` it would
   serve outputs of the old code; the code key is a hash of every file of `ffn/`,
   requirements.lock and the Python version, computed at every (re)build.
5. Under `mkdocs serve --dirty` (./scripts/serve), which rebuilds only the pages whose source
   changed, a change in that key or in mkdocs.yml rebuilds every page: the API page and the
   notebooks show the new code, and every page the new nav.
6. mkdocs-jupyter inlines ~590 KB of JupyterLab CSS in `<style>` blocks in every notebook
   page's body. ffn_docs/notebook_css.py takes those blocks out and keeps what the notebook
   pages use; the hook writes it to one stylesheet, `assets/notebooks/jupyter.<hash>.css`,
   which the page links from its `<head>` (overrides/main.html, `page.meta.notebook_css`):
   18 KB (3 KB gzipped), one file cached across notebook pages; the pages render pixel for
   pixel as before in both schemes.
"""

from __future__ import annotations

import hashlib
import html
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from ffn_docs import notebook_css

_MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
_MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid.*?</script>', re.S)
_REMOTE = re.compile(r"""(?:\bsrc\s*=\s*|\bimport\s*\(\s*|\burl\(\s*)["']?(?:https?:)?//""")
_NO_ALT = 'alt="No description has been provided for this image"'
_ALT_COMMENT = re.compile(r"^[ \t]*# alt: (.+(?:\n[ \t]*#[ \t]{2,}.+)*)", re.M)
_CONTINUATION = re.compile(r"\s*\n[ \t]*#\s*")
_CSS_DIR = "assets/notebooks"


def _external_css(content: str, page: Page, config: MkDocsConfig) -> str:
    """Move the page's `<style>` blocks to a pruned, cached stylesheet (item 6 above)."""
    content, css = notebook_css.take_out(content)
    name = f"{_CSS_DIR}/jupyter.{hashlib.sha256(css.encode()).hexdigest()[:8]}.css"
    path = Path(config.site_dir) / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'@charset "UTF-8";\n{css}\n', encoding="utf-8")
    page.meta["notebook_css"] = name
    return content


def _alt_texts(cells: list[Any]) -> list[str]:
    return [_CONTINUATION.sub(" ", alt).strip() for cell in cells if cell.cell_type == "code"
            for alt in _ALT_COMMENT.findall(cell.source)]


def _code_key(root: Path) -> str:
    """A hash of what a notebook's outputs depend on besides the notebook itself."""
    digest = hashlib.sha256(sys.version.encode())
    files = sorted(p for p in (root / "ffn").rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)  # .pyc: made from the .py
    for path in [*files, root / "requirements.lock"]:
        digest.update(f"\0{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# What one `mkdocs serve --dirty` remembers between rebuilds (MkDocs loads a hook once per
# process): --dirty rebuilds only the pages whose source changed, so after a change in ffn/
# (the API page, the notebooks) or in mkdocs.yml (nav, settings) every page is rebuilt.
_serve: dict[str, Any] = {"dirty": False, "state": None, "stale": False}


def on_startup(*, command: str, dirty: bool) -> None:
    _serve["dirty"] = command == "serve" and dirty
    if _serve["dirty"]:
        # MkDocs warns at every --dirty build that other pages' nav may be stale, and
        # `strict: true` makes that a failure. The nav's titles are all in mkdocs.yml, and a
        # change there rebuilds every page (on_files), so the warning is dropped.
        logging.getLogger("mkdocs.commands.build").addFilter(
            lambda record: "'dirty' build is being performed" not in record.getMessage())


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    root = Path(config.config_file_path).parent
    key = _code_key(root)
    state = (key, Path(config.config_file_path).read_bytes())
    _serve["stale"] = _serve["state"] not in (None, state)
    _serve["state"] = state
    jupyter = config.plugins.get("mkdocs-jupyter")
    if jupyter is None or not jupyter.config["cache"]:
        return config
    # mkdocs-jupyter reads a relative cache_dir from the current directory; this project's
    # cache is under its root, so a `mkdocs serve` started elsewhere prunes no other cache.
    base = root / jupyter.config["cache_dir"]  # an absolute cache_dir stays as it is
    jupyter.config["cache_dir"] = str(base / key)
    # Entries under another key can never be used again (that code is gone): drop them.
    if base.is_dir():
        for old in base.iterdir():
            if old.name != key:
                if old.is_dir():
                    shutil.rmtree(old)
                else:
                    old.unlink()
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if _serve["dirty"] and _serve["stale"]:
        for file in files.documentation_pages():  # --dirty rebuilds a page older than its source
            if os.path.isfile(file.abs_dest_path):
                os.utime(file.abs_dest_path, (0, 0))
    return files


def on_page_content(content: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
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
    return _external_css(content, page, config)
