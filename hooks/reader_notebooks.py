"""MkDocs hook: every page with code as a notebook a reader can run, and `ffn` as a wheel.

1. `ffn-<version>-py3-none-any.whl` (ffn_docs/wheel.py: hatchling, offline) is a file at
   the site's root. The home page's `<!-- ffn-wheel -->` becomes a link to it with its
   sha256 beside it.
2. Each Markdown page whose python blocks the doc-tests run becomes `<page>.ipynb` next to
   its page (`gelu/gelu.ipynb`; the home page's is `home.ipynb`), made by
   ffn_docs/reader_notebook.py; its first code cell installs the wheel from site_url. The
   page gets a "Run this page" button beside its title that downloads it
   (overrides/partials/actions.html, `page.meta.ffn_notebook`); hooks/pdf.py drops it, with
   the other title buttons, from the print page and the PDF.
3. `mkdocs serve` rebuilds often: a notebook is made again only when its page (or
   harness/tables.py) changed, the wheel only when `ffn/` or pyproject.toml did.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import nbformat
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from ffn_docs import reader_notebook, wheel
from harness import page as pages

WHEEL_MARK = "<!-- ffn-wheel -->"
_TITLE = re.compile(r"^# (.+)$", re.M)
_cache: dict[str, Any] = {}  # key -> wheel or notebook text, across `mkdocs serve` rebuilds
_notebooks: dict[str, str] = {}  # page source -> its notebook's file name
_state: dict[str, wheel.Wheel] = {}


def _digest(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"\0{path}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _wheel(root: Path) -> wheel.Wheel:
    sources = sorted(p for p in (root / "ffn").rglob("*.py"))
    key = "wheel " + _digest(root / "pyproject.toml", *sources)
    if key not in _cache:
        _cache[key] = wheel.build(root)
    built: wheel.Wheel = _cache[key]
    return built


def notebook_name(src: str) -> str:
    """`gelu.md` -> `gelu.ipynb`; the home page (`index.md`) -> `home.ipynb`."""
    stem = src.rsplit("/", 1)[-1].removesuffix(".md")
    return "home.ipynb" if stem == "index" else f"{stem}.ipynb"


@event_priority(100)  # before htmlproofer's on_files, so that links to these files check
def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = Path(config.config_file_path).parent
    built = _state["wheel"] = _wheel(root)
    files.append(File.generated(config, built.name, content=built.data))

    def page_url(src: str) -> str:
        target = files.get_file_from_path(src)
        if target is None:
            raise PluginError(f"a link to {src}, which is not a page of the site")
        if src.endswith(".ipynb"):  # mkdocs-jupyter makes it a page only after this hook
            return src.removesuffix(".ipynb") + "/"
        return target.url.removeprefix("./")

    _notebooks.clear()
    for file in list(files.documentation_pages()):
        if not file.abs_src_path or not file.src_uri.endswith(".md"):
            continue  # generated (print/) or a notebook page
        path = Path(file.abs_src_path)
        text = path.read_text(encoding="utf-8")
        if not pages.block_starts(text):
            continue
        key = "notebook " + _digest(path, reader_notebook.TABLES) + config.site_url + built.name
        if key not in _cache:
            title = m[1].strip() if (m := _TITLE.search(text)) else file.src_uri
            try:
                notebook = reader_notebook.build(path, file.src_uri, title, config.site_url,
                                                 built.name, page_url)
            except ValueError as exc:
                raise PluginError(str(exc)) from None
            _cache[key] = nbformat.writes(notebook) + "\n"
        name = notebook_name(file.src_uri)
        where = file.dest_uri.rsplit("/", 1)[0] + "/" if "/" in file.dest_uri else ""
        files.append(File.generated(config, where + name, content=_cache[key]))
        _notebooks[file.src_uri] = name
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    if page.file.src_uri in _notebooks:
        page.meta["ffn_notebook"] = _notebooks[page.file.src_uri]
    if WHEEL_MARK in markdown:
        built = _state["wheel"]
        markdown = markdown.replace(
            WHEEL_MARK, f"[`{built.name}`]({built.name}) (sha256 `{built.sha256}`)")
    return markdown
