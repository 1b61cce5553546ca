"""MkDocs hook: every page with code as a notebook a reader can run, and `ffn` as a wheel.

1. `ffn-<version>-py3-none-any.whl` (ffn_docs/wheel.py: hatchling, offline; the version
   ends in a hash of `ffn/`, so its name changes with its content) is a file at the site's
   root. On the home page, `<!-- ffn-wheel -->` becomes a link to it with its sha256 beside
   it, and `<!-- ffn-pip -->` the one line that installs it (in its notebook too).
2. Each Markdown page whose python blocks the doc-tests run becomes `<page>.ipynb` next to
   its page (`gelu/gelu.ipynb`; the home page's is `home.ipynb`), made by
   ffn_docs/reader_notebook.py; its first code cell installs the wheel from site_url. The
   page gets a "Run this page" button beside its title that downloads it
   (overrides/partials/actions.html, `page.meta.ffn_notebook`); hooks/pdf.py drops it, with
   the other title buttons, from the print page and the PDF.
3. The notebook pages (docs/notebooks/*.ipynb, mkdocs-jupyter) install what they need in
   their first code cell, the wheel from `"FFN_WHEEL_URL"`: the site builds, shows and
   serves a copy where that placeholder is the wheel's URL (site_url + its name).
4. `mkdocs serve` rebuilds often: a notebook is made again only when its page changed, the
   wheel only when `ffn/` or pyproject.toml did.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from ffn_docs import markdown_page as pages
from ffn_docs import reader_notebook, wheel

WHEEL_MARK = "<!-- ffn-wheel -->"
PIP_MARK = "<!-- ffn-pip -->"
WHEEL_URL = "FFN_WHEEL_URL"  # in docs/notebooks/*.ipynb: the wheel's URL in the site's copy
NOTEBOOK_PAGES = "notebooks/"  # mkdocs.yml's mkdocs-jupyter `include: ["notebooks/*.ipynb"]`
_TITLE = re.compile(r"^# (.+)$", re.M)
_cache: dict[str, Any] = {}  # key -> wheel or notebook text, across `mkdocs serve` rebuilds
_notebooks: dict[str, str] = {}  # page source -> its notebook's file name
_state: dict[str, wheel.Wheel] = {}
_copies = tempfile.TemporaryDirectory(prefix="ffn-notebooks-")  # item 3's copies, per process


def _digest(*paths: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(f"\0{path}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _wheel(root: Path) -> wheel.Wheel:
    key = "wheel " + wheel.version(root)  # a hash of what the wheel is built from
    if key not in _cache:
        _cache[key] = wheel.build(root)
    built: wheel.Wheel = _cache[key]
    return built


def _with_wheel_url(files: Files, config: MkDocsConfig, url: str) -> None:
    """Each notebook page's source replaced by a copy naming the wheel's ``url`` (item 3):
    mkdocs-jupyter then runs, shows and copies (include_source) that copy."""
    for file in list(files):
        if not (file.src_uri.startswith(NOTEBOOK_PAGES) and file.src_uri.endswith(".ipynb")
                and file.abs_src_path):
            continue
        text = Path(file.abs_src_path).read_text(encoding="utf-8")
        copy = Path(_copies.name) / file.src_uri  # ends in notebooks/<name>.ipynb, as included
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(text.replace(WHEEL_URL, url), encoding="utf-8")
        files.remove(file)
        # A File under another src_dir, not File.generated: mkdocs-jupyter's NotebookFile
        # wrapper reads abs_src_path from src_dir, which a generated file does not have.
        files.append(File(file.src_uri, src_dir=_copies.name, dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))


def notebook_name(src: str) -> str:
    """`gelu.md` -> `gelu.ipynb`; the home page (`index.md`) -> `home.ipynb`."""
    stem = src.rsplit("/", 1)[-1].removesuffix(".md")
    return "home.ipynb" if stem == "index" else f"{stem}.ipynb"


@event_priority(100)  # before htmlproofer's on_files, so that links to these files check
def on_files(files: Files, config: MkDocsConfig) -> Files:
    root = Path(config.config_file_path).parent
    built = _state["wheel"] = _wheel(root)
    files.append(File.generated(config, built.name, content=built.data))
    _with_wheel_url(files, config, config.site_url + built.name)

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
        name = notebook_name(file.src_uri)
        key = f"notebook {_digest(path)} {config.site_url} {built.name} {name}"
        if key not in _cache:
            title = m[1].strip() if (m := _TITLE.search(text)) else file.src_uri
            try:
                notebook = reader_notebook.build(path, file.src_uri, title, config.site_url,
                                                 built.name, page_url, name,
                                                 _marks(built, config.site_url))
            except ValueError as exc:
                raise PluginError(str(exc)) from None
            _cache[key] = nbformat.writes(notebook) + "\n"
        where = file.dest_uri.rsplit("/", 1)[0] + "/" if "/" in file.dest_uri else ""
        files.append(File.generated(config, where + name, content=_cache[key]))
        _notebooks[file.src_uri] = name
    return files


def _marks(built: wheel.Wheel, site_url: str) -> dict[str, str]:
    """What the home page's marks become (item 1): Markdown, links relative to the site."""
    return {WHEEL_MARK: f"[`{built.name}`]({built.name}) (sha256 `{built.sha256}`)",
            PIP_MARK: f"`pip install {site_url}{built.name}`"}


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    if page.file.src_uri in _notebooks:
        page.meta["ffn_notebook"] = _notebooks[page.file.src_uri]
    for mark, text in _marks(_state["wheel"], config.site_url).items():
        markdown = markdown.replace(mark, text)
    return markdown
