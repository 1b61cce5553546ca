"""MkDocs hook: the whole book on one print page, and a PDF of it made by Chromium.

1. `print/` is a page of the site, not in the nav (and not a file under docs/, so the doc
   tests never see it): MkDocs builds it from a stub, and after the build the hook fills its
   article with every page of the nav, in nav order, taken from the built pages (so math is
   the MathML they show, figures and notebook outputs are those of this build). Each page
   becomes a `<section id="<page>">`; ids get the page as a prefix (`gelu--the-tanh-form`) so
   they stay unique, and a link to a page of the book, or to a heading in one, becomes a link
   to its section or heading on the print page; other links (files, the site's assets) are
   made relative to `print/`. Collapsed solutions (`<details>`) are opened, the edit and
   download buttons dropped; every figure gets a numbered caption from its alt text. A list of
   contents, linking each section, comes first. The page is left out of the search index.
2. `ffn-by-the-numbers.pdf` (linked from the home page) is that page printed by Chromium
   (`/usr/bin/chromium --headless --print-to-pdf`, A4, light scheme: the print rules at the
   end of docs/stylesheets/extra.css hide dark-only figures and the site's chrome). Chromium
   turns the page's `#` links into links inside the PDF. Where Chromium is missing (an
   author's Mac), the build still succeeds and says that the PDF was skipped; the tests
   (tests/test_pdf.py) require it. `mkdocs serve` skips it (a reload must stay fast).
"""

from __future__ import annotations

import html
import logging
import posixpath
import re
import subprocess
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from tooling import chromium

log = logging.getLogger("mkdocs.hooks.pdf")

PRINT_SRC = "print.md"
PDF_NAME = "ffn-by-the-numbers.pdf"
TIMEOUT = 180  # seconds for Chromium to print the book (~10 s on an idle machine)
_STUB = """---
search:
  exclude: true
description: "The whole of FFN by the Numbers on one page, every chapter in reading order, \
to print or to read offline; the PDF is made from it."
---

# FFN by the Numbers: the whole book

(The pages of the book are put here when the site is built.)
"""

_state: dict[str, Any] = {"command": "build", "pages": []}
_ARTICLE = re.compile(r'(<article class="md-content__inner md-typeset">)(.*)(</article>)', re.S)
_BUTTON = re.compile(r'<a [^>]*class="md-content__button[^"]*"[^>]*>.*?</a>', re.S)
_ID_ATTR = re.compile(r'\b(id|for|aria-labelledby|aria-describedby|aria-controls)="([^"]*)"')
_URL_ATTR = re.compile(r'\b(href|src)="([^"]*)"')
_IMG = re.compile(r"<img\b[^>]*>")
# A figure as hooks/figures.py leaves it: on the print page, only its image (the wide drawing).
_FIGURE_LINK = re.compile(r'<a class="glightbox ffn-figure__open"[^>]*><picture>(?:<source[^>]*>)?'
                          r'(<img[^>]*>)</picture></a>')
_FIGURE_CUE = re.compile(r'<span class="ffn-figure__cue"[^>]*>[^<]*</span>')
_MIN_WIDTH = re.compile(r' style="min-width: \d+px"')
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]*)"[^>]*>')


def on_startup(*, command: str, dirty: bool) -> None:
    _state["command"] = command


@event_priority(100)  # before htmlproofer's on_files, which maps the files links may reach
def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, PRINT_SRC, content=_STUB,
                                inclusion=InclusionLevel.NOT_IN_NAV))
    # The PDF as a file of the site, so that links to it are checked; written after the build.
    files.append(File.generated(config, PDF_NAME, content=b""))
    return files


def on_nav(nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
    # URLs as site-relative paths: the home page's is "" (MkDocs says "./").
    _state["pages"] = [(page.file.url.removeprefix("./"), page.file.dest_uri)
                       for page in nav.pages]
    return nav


def on_page_context(context: dict[str, Any], page: Page, **_: Any) -> dict[str, Any]:
    if page.file.src_uri == PRINT_SRC:
        page.edit_url = None  # generated: no Markdown source to edit
    return context


def _slug(url: str) -> str:
    return url.strip("/").replace("/", "-") or "home"


def _chapter(text: str, page_url: str, slugs: dict[str, str], figures: list[int]) -> str:
    """One built page's article, rewritten to live on print/ (module docstring, item 1)."""
    match = _ARTICLE.search(text)
    if match is None:
        raise PluginError(f"pdf hook: no <article> in the built page {page_url!r}")
    body = _BUTTON.sub("", match.group(2))
    # Each figure's image alone, fetched at once (a lazy image may be missing from the PDF),
    # as wide as the column: no scroll box, no cue, on the print page as on paper.
    body = _FIGURE_LINK.sub(
        lambda m: _MIN_WIDTH.sub("", m.group(1).replace(' loading="lazy"', "")), body)
    body = _FIGURE_CUE.sub("", body)
    me = slugs[page_url]
    # A widget's table is a labelled region, and the Lab shows the chapters' widgets again:
    # on one page two regions with one caption are two landmarks of one name (axe-core:
    # landmark-unique). Each region here is named by its caption and its chapter's title.
    h1 = re.search(r'<h1 id="([^"]+)"', body)
    if h1:
        body = re.sub(r'(role="region" aria-labelledby=")([^"]+)"',
                      lambda m: f'{m.group(1)}{m.group(2)} {h1.group(1)}"', body)
    body = _ID_ATTR.sub(lambda m: f'{m.group(1)}="' + " ".join(
        f"{me}--{token}" for token in m.group(2).split()) + '"', body)
    base = "/" + page_url

    def url(m: re.Match[str]) -> str:
        attr, value = m.group(1), html.unescape(m.group(2))
        split = urllib.parse.urlsplit(value)
        if split.scheme or value.startswith("//"):
            return m.group(0)
        if value.startswith("#"):
            return f'{attr}="#{me}--{html.escape(value[1:])}"'
        target = urllib.parse.urlsplit(urllib.parse.urljoin(base, value))
        path = target.path.lstrip("/")
        if attr == "href" and path in slugs:
            anchor = slugs[path] + (f"--{target.fragment}" if target.fragment else "")
            return f'{attr}="#{html.escape(anchor)}"'
        relative = posixpath.relpath("/" + path, "/print") + ("/" if path.endswith("/") else "")
        rest = f"#{target.fragment}" if target.fragment else ""
        return f'{attr}="{html.escape(relative + rest)}"'

    body = _URL_ATTR.sub(url, body)
    # Solutions open; mkdocstrings' "Source code" stays shut (the API page shows it so too).
    body = re.sub(r"<details(?![^>]*mkdocstrings-source)", "<details open", body)

    def caption(m: re.Match[str]) -> str:
        tag = m.group(0)
        if "#only-dark" in tag:
            return tag
        figures[0] += 1
        alt = re.search(r'\balt="([^"]*)"', tag)
        text = alt.group(1) if alt else ""
        return (f'{tag}<span class="print-caption">Figure {figures[0]}. {text}</span>')

    body = _IMG.sub(caption, body)
    return f'<section class="print-chapter" id="{me}">\n{body}\n</section>'


def on_post_build(config: MkDocsConfig) -> None:
    site = Path(config.site_dir)
    print_page = site / "print" / "index.html"
    text = print_page.read_text(encoding="utf-8")
    pages = [(url, dest) for url, dest in _state["pages"] if dest != "print/index.html"]
    slugs = {url: _slug(url) for url, _ in pages}
    figures = [0]
    chapters, sheets, contents = [], [], []
    for url, dest in pages:
        built = (site / dest).read_text(encoding="utf-8")
        chapters.append(_chapter(built, url, slugs, figures))
        title = re.search(r"<h1[^>]*>(.*?)</h1>", chapters[-1], re.S)
        name = re.sub(r"<[^>]+>|¶", "", title.group(1)).strip() if title else url
        contents.append(f'<li><a href="#{slugs[url]}">{name}</a></li>')
        for href in _STYLESHEET.findall(built):  # notebook pages' JupyterLab stylesheet
            path = posixpath.normpath(posixpath.join("/" + url, href))
            relative = posixpath.relpath(path, "/print")
            if relative not in sheets and f'href="{relative}"' not in text:
                sheets.append(relative)
    match = _ARTICLE.search(text)
    assert match is not None
    stub = re.sub(r"<p>\(The pages of the book.*?</p>", "", match.group(2), flags=re.S)
    toc = f'<nav class="print-contents" aria-label="Contents"><ol>{"".join(contents)}</ol></nav>'
    # The chapters follow the page's <article> (which keeps the title and the contents) in a
    # block of their own: what the browser tests read as a page's own text (its article) stays
    # the print page's, not copies of every chapter's.
    book = ('<div class="md-content__inner md-typeset print-book">\n<!-- book -->\n'
            + "\n".join(chapters) + "\n<!-- /book -->\n</div>")
    text = (text[: match.start(2)] + stub + toc + text[match.end(2):match.end(3)] + book
            + text[match.end(3):])
    links = "".join(f'<link rel="stylesheet" href="{href}">' for href in sheets)
    text = text.replace("</head>", links + "</head>", 1)
    print_page.write_text(text, encoding="utf-8")
    log.info(f"pdf: print/ holds {len(pages)} pages and {figures[0]} figures")
    _print_pdf(print_page, site / PDF_NAME)


def _print_pdf(page: Path, pdf: Path) -> None:
    if _state["command"] == "serve":
        log.info(f"pdf: {PDF_NAME} is not made under `mkdocs serve` (see hooks/pdf.py)")
        return
    if not chromium.installed():
        log.info(f"pdf: {PDF_NAME} skipped: {chromium.PATH} is missing (apt-get install -y "
                 "chromium); the page print/ holds the whole book")
        return
    with tempfile.TemporaryDirectory(prefix="ffn-pdf-") as profile:
        command = [
            chromium.PATH, "--headless", *chromium.ARGS,
            f"--user-data-dir={profile}", "--no-pdf-header-footer",
            "--virtual-time-budget=10000", f"--print-to-pdf={pdf}", page.as_uri(),
        ]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                                    check=False)
        except subprocess.TimeoutExpired as e:
            raise PluginError(f"pdf: Chromium did not print {page} in {TIMEOUT} s") from e
    if result.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
        raise PluginError(f"pdf: Chromium failed to print {page} (exit {result.returncode}):\n"
                          f"{result.stderr[-2000:]}")
    log.info(f"pdf: {PDF_NAME}, {pdf.stat().st_size // 1024} KiB")
