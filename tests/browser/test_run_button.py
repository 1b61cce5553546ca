"""The "Run this page" button (hooks/reader_notebooks.py, overrides/partials/actions.html):
labelled "Run this page" beside its icon, beside the title of every page whose code the
doc-tests run and of the notebook pages, and of no other page; reached from the top of the
page with the Tab key; downloading the page's notebook, which is a notebook of that page; on
one line within the screen at 1366 and at 390 px. The print page (and so the PDF) has none."""

from __future__ import annotations

import json

from playwright.sync_api import Browser

from ffn_docs import markdown_page as pages
from tests.browser.conftest import Site, open_page
from tooling import site as sitetools

BUTTON = "article a[data-ffn-run]"
TABS = 400  # more than the links and controls before the article on the longest page


def _runs_code(src: str) -> bool:
    if src.endswith(".ipynb"):
        return True  # a notebook page: the button downloads the notebook itself
    if not src.endswith(".md"):
        return False
    return bool(pages.block_starts((sitetools.ROOT / "docs" / src).read_text(encoding="utf-8")))


def test_run_button_on_every_page_with_code_and_only_there(site: Site,
                                                           browser: Browser) -> None:
    context, page, _recorder = open_page(browser, site.base_url, "light")
    problems: list[str] = []
    with_code = 0
    try:
        for nav in sitetools.nav_pages():
            page.goto(site.base_url + nav.url, wait_until="load")
            buttons = page.locator(BUTTON)
            if not _runs_code(nav.src):
                if buttons.count():
                    problems.append(f"/{nav.url}: a Run button, but {nav.src} runs no code")
                continue
            with_code += 1
            if buttons.count() != 1:
                problems.append(f"/{nav.url}: {buttons.count()} Run buttons, not one")
                continue
            button = buttons.first
            name = button.get_attribute("title") or ""
            if not name.startswith("Run this page"):
                problems.append(f"/{nav.url}: the button's title is {name!r}")
            label = button.inner_text().strip()
            if label != "Run this page" or not button.locator("svg").is_visible():
                problems.append(f"/{nav.url}: the button shows {label!r} (and its icon?)")
            # Beside the title: Material floats its title buttons level with the h1.
            box, title = button.bounding_box(), page.locator("article h1").first.bounding_box()
            if not (box and title and abs((box["y"] + box["height"] / 2)
                                          - (title["y"] + title["height"] / 2)) < title["height"]):
                problems.append(f"/{nav.url}: the button is not beside the title")
            page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
            for _ in range(1, TABS + 1):
                page.keyboard.press("Tab")
                if page.evaluate("s => document.activeElement === document.querySelector(s)",
                                 BUTTON):
                    break
            else:
                problems.append(f"/{nav.url}: {TABS} presses of Tab never reached the button")
            href = button.evaluate("a => a.href")
            response = page.request.get(href)
            if response.status != 200:
                problems.append(f"/{nav.url}: {href}: HTTP {response.status}")
                continue
            notebook = json.loads(response.body())
            if nav.src.endswith(".ipynb"):
                committed = json.loads((sitetools.ROOT / "docs" / nav.src).read_text())
                if notebook["cells"][0]["source"][0] != committed["cells"][0]["source"][0]:
                    problems.append(f"/{nav.url}: {href} is not {nav.src}")
            elif notebook["metadata"]["ffn"]["page"] != nav.src:
                problems.append(f"/{nav.url}: {href} is the notebook of "
                                f"{notebook['metadata']['ffn']['page']}")
        page.goto(site.base_url + "print/", wait_until="load")
        if page.locator("a[data-ffn-run], a[href$='.ipynb']").count():
            problems.append("/print/: links a page's notebook (the PDF is printed from it)")
    finally:
        context.close()
    assert with_code >= 10, f"only {with_code} pages with code in the nav"
    assert not problems, "\n".join(problems)


def test_run_button_fits_beside_the_title_on_a_laptop_and_a_phone(site: Site,
                                                                  browser: Browser) -> None:
    """At 1366 x 900 and 390 x 844: the button is on one line, inside the screen, level with
    the title's first line, and the page does not scroll sideways because of it."""
    problems: list[str] = []
    for width, height in ((1366, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        try:
            for nav in sitetools.nav_pages():
                if not _runs_code(nav.src):
                    continue
                page.goto(site.base_url + nav.url, wait_until="load")
                box = page.locator(BUTTON).bounding_box()
                title = page.locator("article h1").first.bounding_box()
                line, first = page.evaluate("""s => [
                    parseFloat(getComputedStyle(document.querySelector(s)).fontSize),
                    parseFloat(getComputedStyle(document.querySelector("article h1")).lineHeight)
                ]""", BUTTON)
                where = f"/{nav.url} at {width} px"
                if not box or not title:
                    problems.append(f"{where}: no button or no title")
                    continue
                if box["x"] < 0 or box["x"] + box["width"] > width:
                    problems.append(f"{where}: the button spans {box['x']:.0f} to "
                                    f"{box['x'] + box['width']:.0f} px")
                if box["height"] > 3 * line:  # one line of text in its padding
                    problems.append(f"{where}: the button is {box['height']:.0f} px tall")
                if not title["y"] <= box["y"] + box["height"] / 2 <= title["y"] + first:
                    problems.append(f"{where}: the button is not level with the title's "
                                    "first line")
                # A button narrower than the screen cannot widen the page; the rest of the
                # page (math, tables) is another test's: only the header's row is checked.
                right = page.evaluate("""s => Math.max(...[...document.querySelector(s)
                    .parentElement.children].map(e => e.getBoundingClientRect().right))""",
                                      BUTTON)
                if right > width:
                    problems.append(f"{where}: the title's row ends at {right:.0f} px")
        finally:
            context.close()
    assert not problems, "\n".join(problems)
