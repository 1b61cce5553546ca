"""Figures a phone can read (issue 41): on every page, at 390x844 and at 1366x900, in both
colour schemes, every figure's smallest text is at least 11 CSS px (tooling/figure_text.py
measures it); only the diagrams not yet drawn narrow scroll sideways on a phone; a page
fetches only the figures of its scheme and width; and a figure opens large on a click and on
Enter, and closes with Escape (hooks/figures.py, mkdocs-glightbox)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tooling import figure_text
from tooling import site as sitetools

from .conftest import MATERIAL_SCHEME, SCHEMES, Recorder, Site

# Every figure the Markdown places (its light image), counted from the sources.
PLACED = sum(len(re.findall(r"\]\(figures/[\w-]+\.svg#only-light\)", text))
             for text in sitetools.markdown_sources().values())
VISIBLE_LINKS_JS = """[...document.querySelectorAll("article a.ffn-figure__open")]
  .filter(a => a.checkVisibility()).length"""
# The figures shown in a box that scrolls sideways, by file stem.
SCROLLING_JS = """[...document.querySelectorAll("article .ffn-figure__scroll")]
  .filter(box => box.checkVisibility() && box.scrollWidth > box.clientWidth)
  .map(box => box.querySelector("img").getAttribute("src").match(/([\\w-]+)\\.svg/)[1])"""


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", [name for name, _ in figure_text.SIZES])
def test_every_figure_text_is_large_enough(site: Site, browser: Browser, size: str,
                                           scheme: str) -> None:
    viewport = dict(figure_text.SIZES)[size]
    context = browser.new_context(viewport=viewport, color_scheme=scheme)  # type: ignore[arg-type]
    found: list[figure_text.FigureText] = []
    try:
        page = context.new_page()
        for url in site.pages:
            mine = figure_text.measure(page, site.base_url + url, size)
            # One link shown per figure: the other scheme's is hidden, out of the tab order.
            links = page.evaluate(VISIBLE_LINKS_JS)
            assert links == len(mine), f"/{url}: {links} figure links shown, {len(mine)} figures"
            found += mine
    finally:
        context.close()
    assert len(found) == PLACED, f"{len(found)} figures seen at {size}, {PLACED} placed"
    other = "" if scheme == "dark" else "-dark"
    if other:
        assert not [f for f in found if other in f.src], f"{scheme} page showed dark figures"
    small = [f.line() for f in found if f.smallest is None or f.smallest < figure_text.MIN_PX]
    assert not small, (f"figure text under {figure_text.MIN_PX} CSS px at {size} "
                       f"({scheme}):\n" + "\n".join(small))


@pytest.mark.parametrize("size", [name for name, _ in figure_text.SIZES])
def test_no_figure_scrolls_sideways(site: Site, browser: Browser, size: str) -> None:
    """Every diagram has a narrow drawing (scripts/figures NARROW_FIGURES) and its wide one fits
    the laptop column, so no figure's box scrolls sideways at either size (issue 41: a layout
    for narrow screens, not a scroll box). The test names each figure that does, by page."""
    context = browser.new_context(viewport=dict(figure_text.SIZES)[size],  # type: ignore[arg-type]
                                  color_scheme="light")
    scrolling: dict[str, set[str]] = {}
    try:
        page = context.new_page()
        for url in site.pages:
            page.goto(site.base_url + url, wait_until="load")
            for stem in page.evaluate(SCROLLING_JS):
                scrolling.setdefault(stem, set()).add(f"/{url}")
    finally:
        context.close()
    assert not scrolling, f"figures scrolling sideways at {size}: " + ", ".join(
        f"{stem} on {sorted(urls)}" for stem, urls in sorted(scrolling.items()))


@pytest.mark.parametrize("size", [name for name, _ in figure_text.SIZES])
def test_a_page_fetches_the_figures_of_its_scheme_and_width(site: Site, browser: Browser,
                                                            size: str) -> None:
    """gelu/ has three plots: scrolled through in the light scheme, it fetches the light
    drawings only, narrow on a phone and wide on a laptop."""
    context = browser.new_context(viewport=dict(figure_text.SIZES)[size],  # type: ignore[arg-type]
                                  color_scheme="light")
    fetched: list[str] = []
    context.on("request", lambda r: "/figures/" in r.url and fetched.append(r.url))
    try:
        page = context.new_page()
        page.goto(site.base_url + "gelu/")
        for img in page.locator("article .ffn-figure--only-light img").all():
            img.scroll_into_view_if_needed()
            expect(img).to_have_js_property("complete", True)
        page.wait_for_load_state("networkidle")
    finally:
        context.close()
    names = sorted(url.rsplit("/", 1)[1] for url in fetched)
    narrow = "-narrow" if size == "phone" else ""
    assert names == sorted(f"{stem}{narrow}.svg" for stem in
                           ("activation-curves", "gelu-error", "activation-derivatives")), names


def _opens_and_closes(page: Page, open_with: str) -> None:
    link = page.locator("article .ffn-figure--only-light a.ffn-figure__open").first
    shown = link.locator("img")
    shown.scroll_into_view_if_needed()
    alt = shown.get_attribute("alt")
    on_page = shown.bounding_box()
    assert on_page is not None
    if open_with == "click":
        link.click()
    else:
        link.focus()
        page.keyboard.press("Enter")
    big = page.locator(".glightbox-container .gslide-image img")
    expect(big).to_be_visible()
    expect(big).to_have_attribute("alt", alt or "")
    expect(big).to_have_js_property("complete", True)
    # The drawing's width in the lightbox (object-fit: contain may leave its box wider).
    shown_big = big.evaluate("img => img.naturalWidth * Math.min("
                             "img.clientWidth / img.naturalWidth,"
                             " img.clientHeight / img.naturalHeight)")
    assert shown_big > 1.5 * on_page["width"], (shown_big, on_page)
    page.keyboard.press("Escape")
    expect(page.locator(".glightbox-container")).to_have_count(0)


@pytest.mark.parametrize("open_with", ["click", "Enter"])
def test_a_figure_opens_large_and_closes_with_escape(site: Site,
                                                      new_page: tuple[Page, Recorder],
                                                      open_with: str) -> None:
    page, _ = new_page
    page.goto(site.base_url + "gelu/")
    assert page.evaluate("document.body.dataset.mdColorScheme") == MATERIAL_SCHEME["light"]
    _opens_and_closes(page, open_with)
