"""The "Run this page" button (hooks/reader_notebooks.py, overrides/partials/actions.html):
beside the title of every page whose code the doc-tests run, and of no other page; reached
from the top of the page with the Tab key; downloading the page's notebook, which is a
notebook of that page. The print page (and so the PDF) has none."""

from __future__ import annotations

import json

from playwright.sync_api import Browser

from harness import page as pages
from tests.browser.conftest import Site, open_page
from tooling import site as sitetools

BUTTON = "article a[data-ffn-run]"
TABS = 400  # more than the links and controls before the article on the longest page


def _runs_code(src: str) -> bool:
    if not src.endswith(".md"):
        return False  # a notebook page keeps its own download button
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
                problems.append(f"/{nav.url}: the button's name is {name!r}")
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
            if notebook["metadata"]["ffn"]["page"] != nav.src:
                problems.append(f"/{nav.url}: {href} is the notebook of "
                                f"{notebook['metadata']['ffn']['page']}")
        page.goto(site.base_url + "print/", wait_until="load")
        if page.locator("a[data-ffn-run], a[href$='.ipynb']").count():
            problems.append("/print/: links a page's notebook (the PDF is printed from it)")
    finally:
        context.close()
    assert with_code >= 10, f"only {with_code} pages with code in the nav"
    assert not problems, "\n".join(problems)
