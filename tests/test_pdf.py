"""The book as a PDF (hooks/pdf.py): the session's build (the root conftest.py) has print/, every
page of the nav on one page, and ffn-by-the-numbers.pdf printed from it by Chromium. The PDF's
text is read with poppler's pdftotext (`apt-get install -y poppler-utils`; .ci/run installs
it): every page's title is there, in nav order; every light figure is there (each has a
numbered caption on the print page; the notebooks' plots are raster images, counted with
pdfimages); no TeX is left; the print page's links all land on the print page, and the PDF has
a destination for every chapter."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tooling import site as sitetools

pytestmark = pytest.mark.needs("chromium", "poppler-utils")
PDF = "ffn-by-the-numbers.pdf"
POPPLER = ("pdftotext", "pdfimages", "pdfinfo")
TEX = re.compile(r"\\(?:frac|sqrt|mathrm|mathbf|operatorname|cdot|times|left|right|begin|sum"
                 r"|text|tanh|Phi|alpha|beta|sigma)\b|\\\(|\\\)|\\\[|\\\]|\$\$")
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*)</article>', re.S)


def _site(site_build: sitetools.Build) -> Path:
    if site_build.dir is None:
        pytest.fail(f"mkdocs build --strict failed:\n{site_build.log}", pytrace=False)
    missing = [tool for tool in POPPLER if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the PDF test needs poppler's {', '.join(missing)}: "
                    "apt-get install -y poppler-utils (.ci/run installs it)", pytrace=False)
    if not (site_build.dir / PDF).is_file() or (site_build.dir / PDF).stat().st_size == 0:
        pytest.fail(f"the build made no {PDF} (is /usr/bin/chromium installed?):\n"
                    f"{site_build.log[-3000:]}", pytrace=False)
    return site_build.dir


def _run(*command: str) -> str:
    return subprocess.run(command, capture_output=True, text=True, check=True,
                          timeout=120).stdout


def _words(text: str) -> str:
    return " ".join(text.split())


def _article(site: Path, url: str) -> str:
    match = ARTICLE.search((site / url / "index.html").read_text(encoding="utf-8"))
    assert match, f"/{url}: no article"
    return match.group(1)


def _title(article: str) -> str:
    match = re.search(r"<h1[^>]*>(.*?)</h1>", article, re.S)
    assert match
    return _words(html.unescape(re.sub(r"<[^>]+>", "", match.group(1)))).rstrip("¶ ")


@pytest.fixture(scope="module")
def book(site_build: sitetools.Build) -> tuple[Path, str]:
    site = _site(site_build)
    return site, _run("pdftotext", "-enc", "UTF-8", str(site / PDF), "-")


def test_pdf_has_every_page_in_nav_order(book: tuple[Path, str]) -> None:
    site, text = book
    words = _words(text)
    position = 0
    for page in sitetools.nav_pages():
        title = _title(_article(site, page.url))
        found = words.find(title, position)
        assert found >= 0, f"{PDF}: the title of /{page.url}, {title!r}, is missing or out of order"
        position = found + len(title)


def test_pdf_has_every_figure(book: tuple[Path, str]) -> None:
    site, text = book
    images = [tag for page in sitetools.nav_pages()
              for tag in re.findall(r"<img\b[^>]*>", _article(site, page.url))
              if "#only-dark" not in tag]
    raster = [tag for tag in images if re.search(r'src="[^"]*(?:\.png|data:image/png)', tag)]
    captions = re.findall(r"Figure (\d+)\.", _words(text))
    assert len(images) > 0
    assert [int(n) for n in captions] == list(range(1, len(images) + 1)), (
        f"{PDF}: figure captions {captions}, but the pages show {len(images)} light figures")
    listed = _run("pdfimages", "-list", str(site / PDF)).splitlines()[2:]
    assert len(listed) >= len(raster), (
        f"{PDF} holds {len(listed)} raster images, the pages show {len(raster)}")


def test_pdf_has_no_raw_tex(book: tuple[Path, str]) -> None:
    _, text = book
    leftovers = sorted({m.group(0) for m in TEX.finditer(text)})
    assert not leftovers, f"{PDF} shows raw TeX: {leftovers}"
    italic_x = "\N{MATHEMATICAL ITALIC SMALL X}"  # how MathML sets a variable x
    assert italic_x in text, f"{PDF}: no math italic x: is the math typeset (MathML)?"


def test_print_page_links_stay_on_the_print_page(site_build: sitetools.Build) -> None:
    site = _site(site_build)
    page = (site / "print" / "index.html").read_text(encoding="utf-8")
    article = re.search(r"<article .*<!-- /book -->", page, re.S)  # contents and chapters
    assert article
    ids = set(re.findall(r'\bid="([^"]*)"', page))
    anchors = set(re.findall(r'\bhref="#([^"]*)"', article.group(0)))
    assert not anchors - ids, f"print/: links to missing anchors: {sorted(anchors - ids)[:10]}"
    chapters = {"../" + p.url for p in sitetools.nav_pages() if p.url}
    elsewhere = sorted(href for href in re.findall(r'\bhref="([^"#]*)(?:#[^"]*)?"',
                                                   article.group(0)) if href in chapters)
    assert not elsewhere, f"print/: links that leave the print page: {elsewhere[:10]}"
    dests = _run("pdfinfo", "-dests", str(site / PDF))
    for p in sitetools.nav_pages():
        slug = p.url.strip("/").replace("/", "-") or "home"
        assert f'"{slug}"' in dests, f"{PDF}: no destination for /{p.url} ({slug})"
