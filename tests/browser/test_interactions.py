"""What a reader does on the site: search, switch colour scheme, follow "Next", open a
notebook page; screenshots of representative pages in both schemes."""

from __future__ import annotations

import bisect
import json
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import (
    SCHEMES,
    SCREENSHOT_DIR,
    SCROLLABLES_READY_JS,
    VIEWPORT,
    Recorder,
    Site,
    Visit,
    open_page,
)
from tooling import lighthouse
from tooling import site as sitetools

PHONE = {"width": 412, "height": 823}  # Lighthouse's mobile screen
_WORD = re.compile(r"(?<!\S)([a-z]{7,})(?![\w\-])")  # after a space, as search splits


def search_word(visits: list[Visit]) -> tuple[str, str]:
    """A word of one chapter's body text that no other page has, not even as the start of a
    longer word (Material's search matches prefixes), and that is in no title or heading:
    (word, page URL). The longest such word, so the choice is stable."""
    light = [v for v in visits if v.scheme == "light"]
    words = {v.url: {w.lower() for w in re.findall(r"[A-Za-z]+", v.facts["text"])}
             for v in light}
    in_titles = {w.lower() for v in light
                 for t in [v.facts["title"], *v.facts["headings"]]
                 for w in re.findall(r"[A-Za-z]+", t)}
    starts = sorted((w, url) for url, ws in words.items() for w in ws)  # for prefix look-ups

    def pages_starting_with(prefix: str) -> set[str]:
        i = bisect.bisect_left(starts, (prefix, ""))
        found = set()
        while i < len(starts) and starts[i][0].startswith(prefix):
            found.add(starts[i][1])
            i += 1
        return found

    chapter_urls = {p.url for p in sitetools.chapters()}
    candidates = [
        (word, v.url)
        for v in light if v.url in chapter_urls
        for word in set(_WORD.findall(v.facts["prose"]))
        if word not in in_titles and pages_starting_with(word) == {v.url}
    ]
    assert candidates, "no word of a chapter's body is unique to it"
    return min(candidates, key=lambda c: (-len(c[0]), c))


def test_search_finds_a_chapter_by_a_word_in_its_body(
    site: Site, visits: list[Visit], new_page: tuple[Page, Recorder]
) -> None:
    word, url = search_word(visits)
    page, _ = new_page
    page.goto(site.base_url)
    box = page.locator("input.md-search__input")
    box.click()
    expect(box).to_be_focused()
    box.press_sequentially(word, delay=30)
    results = page.locator("a.md-search-result__link")
    expect(results.first).to_be_visible(timeout=10_000)
    hrefs = [a.get_attribute("href") or "" for a in results.all()]
    targets = {page.evaluate("h => new URL(h, location.href).href", h).split("#")[0].split("?")[0]
               for h in hrefs}
    assert targets == {site.base_url + url}, f"searching {word!r}: results {hrefs}"
    # The result for the section holding the word carries it (?h=word): the page opened from
    # it highlights the word (feature search.highlight).
    page.locator(f"a.md-search-result__link[href*='?h={word}']").first.click()
    page.wait_for_url(re.compile(re.escape(site.base_url + url) + r"\?h=" + word))
    expect(page.locator("article mark").first).to_have_text(re.compile(word, re.IGNORECASE))


def expect_scheme(page: Page, scheme: str, why: str = "") -> None:
    body = page.locator("body")
    expect(body, why or None).to_have_attribute("data-md-color-scheme", scheme)
    # overrides/partials/palette.html does what Material's palette component did: one
    # color-scheme meta that follows the scheme, one toggle shown (the one to the other scheme).
    expect(page.locator("meta[name='color-scheme']")).to_have_attribute(
        "content", "light" if scheme == "default" else "dark")
    expect(page.locator("meta[name='theme-color']")).to_have_count(1)
    other = "dark" if scheme == "default" else "light"
    expect(page.locator("form.md-header__option label:visible")).to_have_attribute(
        "title", f"Switch to {other} mode")


def test_colour_toggle_switches_and_persists(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    page.goto(site.base_url)
    expect_scheme(page, "default")
    light_background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.locator("label[title='Switch to dark mode']").click()
    expect_scheme(page, "slate")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != light_background
    page.reload()
    expect_scheme(page, "slate", "the dark scheme did not survive a reload")
    page.goto(site.base_url + sitetools.nav_pages()[1].url)  # a chapter (not print/: 2 MB)
    expect_scheme(page, "slate", "the dark scheme did not carry over to another page")
    page.locator("label[title='Switch to light mode']").click()
    expect_scheme(page, "default")
    page.reload()
    expect_scheme(page, "default", "the light scheme did not survive a reload")
    page.locator("#__palette_0").focus()  # keyboard: Enter on the focused option switches
    page.keyboard.press("Enter")
    expect_scheme(page, "slate", "Enter on the palette option did not switch")


def test_footer_next_link_walks_the_nav_in_order(
    site: Site, new_page: tuple[Page, Recorder]
) -> None:
    page, _ = new_page
    expected = [p.url for p in sitetools.nav_pages()]
    page.goto(site.base_url + expected[0])
    seen = [expected[0]]
    for _ in range(len(expected)):
        next_link = page.locator("a.md-footer__link--next")
        if next_link.count() == 0:
            break
        target = next_link.evaluate("a => a.href")
        next_link.click()
        page.wait_for_url(target, wait_until="domcontentloaded")  # the heading is there by then
        seen.append(page.url.removeprefix(site.base_url))
        assert page.locator("article h1").count() == 1, f"/{seen[-1]} has no heading"
    assert seen == expected


def _notebooks() -> list[sitetools.NavPage]:
    return [p for p in sitetools.nav_pages() if p.src.endswith(".ipynb")]


def test_notebook_pages_render(site: Site, visits: list[Visit], browser: Browser) -> None:
    notebooks = _notebooks()
    if not notebooks:
        waiting = sorted(p.relative_to(sitetools.ROOT / "docs").as_posix()
                         for p in (sitetools.ROOT / "docs").rglob("*.ipynb"))
        pytest.skip("no notebook in mkdocs.yml's nav yet"
                    + (f" ({', '.join(waiting)} in docs/, not in nav)" if waiting else ""))
    context, page, _ = open_page(browser, site.base_url, "light")
    try:
        for nb in notebooks:
            assert nb.url in site.pages, f"{nb.src} (in nav) is not a page of the built site"
            cells = json.loads((sitetools.ROOT / "docs" / nb.src).read_text(encoding="utf-8"))
            code_cells = [c for c in cells["cells"] if c["cell_type"] == "code"]
            nonempty = [c for c in code_cells if c.get("source")]
            page.goto(site.base_url + nb.url)
            wrapper = page.locator("article .jupyter-wrapper")
            assert wrapper.count() == 1, f"/{nb.url}: not rendered as a notebook"
            assert page.locator("article h1").count() >= 1, f"/{nb.url}: no title"
            rendered = page.locator(".jp-Notebook > .jp-CodeCell").count()  # (nbconvert
            # nests a second .jp-CodeCell in each)
            assert rendered == len(code_cells), f"/{nb.url}: {rendered} of {len(code_cells)} cells"
            errors = page.locator(".jupyter-wrapper [data-mime-type*='stderr']")
            assert "Traceback" not in " ".join(errors.all_text_contents()), f"/{nb.url}: error"
            outputs = page.locator(".jupyter-wrapper .jp-OutputArea-output").count()
            assert outputs > 0 or not nonempty, f"/{nb.url}: no cell output (not executed?)"
    finally:
        context.close()
    for v in visits:
        if v.url in {nb.url for nb in notebooks}:
            assert v.facts["notebookCells"] > 0, f"{v.name}: no notebook code cells"


# The code blocks and display math a keyboard user must be able to reach: those that
# overflow (scroll sideways), outside closed solutions; each with whether it is focusable.
OVERFLOWING_JS = """() => [...document.querySelectorAll("article :is(pre > code, .math)")]
  .filter(el => !el.closest("details:not([open])"))
  .filter(el => el.scrollWidth > el.clientWidth)
  .map(el => [el.textContent.slice(0, 60), el.tabIndex >= 0])"""


def test_keyboard_reaches_every_overflowing_code_block(site: Site, browser: Browser) -> None:
    """On a phone, tabbing through the chapter with the most code blocks stops at every one
    that scrolls sideways, those below the fold too: Material makes a code block focusable
    only when it first scrolls into view, the page's script (overrides/main.html) every
    overflowing one a few per frame after load, and every one in a block the browser skips off
    screen (content-visibility) until that block is drawn and can be read."""
    def blocks(url: str) -> int:  # code blocks outside solutions
        html = (site.dir / url / "index.html").read_text(encoding="utf-8")
        return re.sub(r"<details.*?</details>", "", html, flags=re.S).count(
            '<div class="highlight">')

    url = max((p.url for p in sitetools.chapters()), key=blocks)
    context = browser.new_context(base_url=site.base_url, viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(site.base_url + url, wait_until="load")
        page.wait_for_function(SCROLLABLES_READY_JS)
        # Read before any scrolling: Material makes a code block focusable itself once it is
        # on screen (and tabbing scrolls), so this is what the script alone did.
        overflowing = page.evaluate(OVERFLOWING_JS)  # [text, focusable] per block
        reached = []
        for _ in range(1000):
            page.keyboard.press("Tab")
            focused = page.evaluate("""() => { const el = document.activeElement;
                return el.matches("pre > code, .math") ? el.textContent.slice(0, 60) : el.tagName;
            }""")
            if focused == "BODY" and reached:
                break  # past the last element: focus is back on the document
            reached.append(focused)
    finally:
        context.close()
    assert len(overflowing) >= 5, f"/{url}: only {len(overflowing)} code blocks overflow"
    unfocusable = [text for text, focusable in overflowing if not focusable]
    assert not unfocusable, (f"/{url}: {len(unfocusable)} overflowing blocks not focusable"
                             f" once the page's script is done, first {unfocusable[:2]}")
    missed = [text for text, _ in overflowing if text not in reached]
    assert not missed, (f"/{url}: tabbing never reached {len(missed)} of {len(overflowing)}"
                        f" overflowing blocks, first {missed[:2]}")


# Each code block (outside closed solutions) that fits its column but is focusable, and how
# many code blocks sit in a block the browser skips off screen (extra.css: content-visibility).
FITTING_FOCUSABLE_JS = """() => {
  const code = [...document.querySelectorAll("article pre > code")]
    .filter(el => !el.closest("details:not([open])"));
  const skippable = code.filter(el => getComputedStyle(el.closest(".md-typeset > *"))
    .contentVisibility === "auto");
  const fitting = code.filter(el => el.scrollWidth <= el.clientWidth
                                    && el.scrollHeight <= el.clientHeight);
  return [fitting.filter(el => el.tabIndex >= 0).map(el => el.textContent.slice(0, 60)),
          skippable.length, fitting.length];
}"""

# Scrolls through the page half a screen at a time, two frames each, so that the browser
# draws every skipped block once.
SCROLL_THROUGH_JS = """async () => {
  const frame = () => new Promise(resolve => requestAnimationFrame(resolve));
  for (let y = 0; y < document.body.scrollHeight; y += innerHeight / 2) {
    scrollTo(0, y);
    await frame();
    await frame();
  }
}"""


def test_a_code_block_that_fits_leaves_the_tab_order_once_drawn(site: Site,
                                                                browser: Browser) -> None:
    """On a laptop most code blocks fit their column. The page's script makes those in a
    block the browser skips off screen focusable until the block is drawn (it cannot read
    their size before without laying them out), then reads them: once the reader has
    scrolled through the page, no code block that fits is left in the tab order."""
    def blocks(url: str) -> int:  # code blocks outside solutions
        html = (site.dir / url / "index.html").read_text(encoding="utf-8")
        return re.sub(r"<details.*?</details>", "", html, flags=re.S).count(
            '<div class="highlight">')

    url = max((p.url for p in sitetools.chapters()), key=blocks)
    context = browser.new_context(base_url=site.base_url, viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(site.base_url + url, wait_until="load")
        page.wait_for_function(SCROLLABLES_READY_JS)
        page.evaluate(SCROLL_THROUGH_JS)
        page.wait_for_function(SCROLLABLES_READY_JS)
        focusable, skippable, fitting = page.evaluate(FITTING_FOCUSABLE_JS)
    finally:
        context.close()
    assert skippable >= 5 and fitting >= 5, (
        f"/{url}: {skippable} code blocks in skippable blocks, {fitting} that fit: the test"
        " needs several of each")
    assert not focusable, (f"/{url}: {len(focusable)} code blocks that fit stay focusable"
                           f" after every block was drawn, first {focusable[:2]}")


def representative_pages(site: Site, visits: list[Visit]) -> dict[str, str]:
    """name -> URL: the pages Lighthouse audits (the home page, the longest chapter and the
    Lab), the chapter measured by its prose as the visits read it."""
    lab = sitetools.page_url(lighthouse.LAB)
    text = {v.url: len(v.facts["prose"]) for v in visits if v.scheme == "light"}
    chapter = max((p.url for p in sitetools.chapters() if p.url != lab),
                  key=lambda u: text.get(u, 0))
    return {"home": "", "chapter": chapter, "lab": lab}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_screenshots(site: Site, visits: list[Visit], browser: Browser, scheme: str) -> None:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    context, page, _ = open_page(browser, site.base_url, scheme)
    try:
        for name, url in representative_pages(site, visits).items():
            page.goto(site.base_url + url, wait_until="networkidle")
            path = SCREENSHOT_DIR / f"{name}-{scheme}.png"
            # The whole page, down to 4000 px: long chapters would make 40 MP images.
            height = min(page.evaluate("document.documentElement.scrollHeight"), 4000)
            page.screenshot(path=path, full_page=True,
                            clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})
            assert path.stat().st_size > 10_000, f"{path} looks empty"
    finally:
        context.close()


def test_404_page(site: Site, new_page: tuple[Page, Recorder]) -> None:
    """A missing page gets the site's 404 page, styled (its links are absolute, under the
    site_url path), with no failed request."""
    page, recorder = new_page
    record = Visit("no-such-page/", "light")
    recorder.visit, outer = record, recorder.visit
    response = page.goto(site.base_url + "no-such-page/", wait_until="networkidle")
    recorder.visit = outer
    assert response is not None and response.status == 404
    assert "404" in page.locator("article").inner_text()
    assert page.locator("header.md-header").is_visible()
    assert record.failed_requests == [] and record.foreign_requests == []
    assert [e for e in record.console_errors if "404" not in e] == []
