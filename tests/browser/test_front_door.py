"""The home page's first screen shows where to start, on a laptop and on a phone.

Without scrolling, at 1366x900 and at 390x844: a "Start reading" link to chapter 1; three
reading paths, each with its chapters (links), its reading time (computed, so a number of
minutes) and what it needs; and the three promises (numbers checked, pages as notebooks,
PyTorch tabs). Each path's time is the sum of its chapters' computed reading times.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser

from ffn_docs import prose
from tests.browser.conftest import Site, open_page
from tooling import site as sitetools

SCREENS = ({"width": 1366, "height": 900}, {"width": 390, "height": 844})
PATH_MARK = re.compile(r"<!-- reading-time: ([^>]*?) -->")


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s['width']}x{s['height']}")
def test_first_screen_shows_where_to_start(site: Site, browser: Browser,
                                          screen: dict[str, int]) -> None:
    context, page, _ = open_page(browser, site.base_url, "light")
    try:
        page.set_viewport_size(screen)
        page.goto(site.base_url, wait_until="load")
        height = screen["height"]

        def on_first_screen(selector: str) -> list[str]:
            """The texts of the elements matched, failing for any below the first screen."""
            found = page.locator(selector)
            assert found.count(), f"home page: nothing matches {selector}"
            texts = []
            for i in range(found.count()):
                box = found.nth(i).bounding_box()
                end = box and box["y"] + box["height"]
                assert box and end <= height, \
                    f"home page at {screen}: {selector} #{i} ends at {end} px, below the screen"
                texts.append(found.nth(i).inner_text())
            return texts

        start = page.locator("article a.ffn-start")
        assert start.get_attribute("href", timeout=2000).rstrip("/").endswith("purpose")
        assert on_first_screen("article a.ffn-start")[0].startswith("Start reading")
        paths = on_first_screen(".ffn-paths > ul > li")
        assert len(paths) == 3, f"three reading paths, not {len(paths)}"
        for text in paths:
            assert re.search(r"About \d+ minutes", text), f"a path without its time: {text}"
            assert "Needs:" in text, f"a path without what it needs: {text}"
        assert all(page.locator(".ffn-paths > ul > li").nth(i).locator("a").count()
                   for i in range(3)), "each path links to its chapters"
        promises = " ".join(on_first_screen(".ffn-promises > ul > li"))
        for promise in ("number is checked", "notebook", "PyTorch"):
            assert promise in promises
    finally:
        context.close()


def test_each_path_takes_the_sum_of_its_chapters_reading_times(site: Site,
                                                               browser: Browser) -> None:
    source = (sitetools.ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    expected = [sum(prose.read_page(sitetools.ROOT / "docs" / name).minutes
                    for name in mark.split()) for mark in PATH_MARK.findall(source)]
    assert len(expected) == 3
    context, page, _ = open_page(browser, site.base_url, "light")
    try:
        page.goto(site.base_url, wait_until="load")
        shown = [int(re.search(r"About (\d+) minutes", t)[1])  # type: ignore[index]
                 for t in page.locator(".ffn-paths > ul > li").all_inner_texts()]
    finally:
        context.close()
    assert shown == expected
