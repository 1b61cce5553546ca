"""The Lab (docs/lab.md) in the built site: every widget of widgets/ mounted there, each in a
section that links to the section of the chapter where the widget also sits; every chapter
with a widget links to the Lab; axe-core with all five mounted, in both schemes, and on a
phone (nothing off screen, the page never scrolls sideways); screenshots."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import Browser, Page, expect

import widgets
from tests.browser.conftest import (
    SCHEMES,
    SCREENSHOT_DIR,
    Site,
    Visit,
    axe,
    open_page,
    open_phone,
)
from tooling import lighthouse
from tooling import site as sitetools

LAB = sitetools.page_url(lighthouse.LAB)  # "lab/"
PLACEHOLDER = re.compile(r'<div class="ffn-widget" data-widget="([\w-]+)">')
HEADING = re.compile(r'<h([23]) id="([^"]+)"')


def chapter_sections(site: Site) -> dict[str, tuple[str, str]]:
    """widget name -> (chapter URL, id of the heading of the section holding it), from the
    built chapters, the Lab left out: where each widget sits in the book."""
    found: dict[str, tuple[str, str]] = {}
    for page in sitetools.nav_pages():
        if page.url == LAB or not page.src.endswith(".md"):
            continue
        html = (site.dir / page.url / "index.html").read_text(encoding="utf-8")
        for match in PLACEHOLDER.finditer(html):
            headings = HEADING.findall(html[:match.start()])
            found.setdefault(match[1], (page.url, headings[-1][1]))
    return found


def mount_every_widget(page: Page) -> list[str]:
    """Scroll to each widget of the open page, top to bottom, until it has mounted; its names."""
    names = page.eval_on_selector_all(".ffn-widget", "els => els.map(el => el.dataset.widget)")
    for name in names:
        root = page.locator(f'[data-widget="{name}"]')
        root.scroll_into_view_if_needed()
        expect(root).to_have_class("ffn-widget ffn-widget--live")
        expect(root.locator(".ffn-widget__live")).to_be_visible()
    return list(names)


def test_every_widget_is_on_the_lab(site: Site) -> None:
    html = (site.dir / LAB / "index.html").read_text(encoding="utf-8")
    on_lab = {name.split("-")[0] for name in PLACEHOLDER.findall(html)}
    assert on_lab == {folder.name for folder in widgets.folders()}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_lab_mounts_each_widget_and_links_its_chapter(site: Site, browser: Browser,
                                                      scheme: str) -> None:
    sections = chapter_sections(site)
    context, page, recorder = open_page(browser, site.base_url, scheme)
    record = recorder.visit = Visit(LAB, scheme)
    try:
        page.goto(site.base_url + LAB)
        names = mount_every_widget(page)
        assert len(names) == len(widgets.folders())
        for name in names:
            # The links of the widget's section: from its heading to the next one.
            links = page.locator(f'[data-widget="{name}"]').evaluate("""root => {
              let el = root;
              while (el.previousElementSibling && !/^H[23]$/.test(el.tagName)) {
                el = el.previousElementSibling;
              }
              const hrefs = [];
              for (let at = el; at; at = at.nextElementSibling) {
                if (at !== el && /^H[23]$/.test(at.tagName)) break;
                at.querySelectorAll("a[href]").forEach(a => hrefs.push(a.href));
              }
              return hrefs;
            }""")
            chapter, heading = sections[name]
            want = urllib.parse.urljoin(site.base_url, f"{chapter}#{heading}")
            assert want in links, (name, want, links)
        assert axe(page) == [], scheme
        assert record.console_errors == [] and record.failed_requests == []
        SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOT_DIR / f"lab-{scheme}.png", full_page=True)
    finally:
        context.close()


def test_each_chapter_with_a_widget_links_to_the_lab(site: Site) -> None:
    chapters = {url for url, _ in chapter_sections(site).values()}
    assert len(chapters) == len(widgets.folders())  # each widget has its chapter
    for url in chapters:
        html = (site.dir / url / "index.html").read_text(encoding="utf-8")
        article = html[html.find("<article"):html.find("</article>")]
        targets = {urllib.parse.urljoin("/" + url, href).split("#")[0]
                   for href in re.findall(r'<a [^>]*href="([^"]+)"', article)}
        assert "/" + LAB in targets, f"/{url} has no link to the Lab"


def test_lab_on_a_phone(site: Site, browser: Browser) -> None:
    context, page, recorder = open_phone(browser, site.base_url, "light")
    record = recorder.visit = Visit(LAB, "light")
    try:
        page.goto(site.base_url + LAB)
        names = mount_every_widget(page)
        assert len(names) == len(widgets.folders())
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"/{LAB} scrolls sideways on a phone: {width} px wide"
        # Every result of every widget on screen (their touch sizes: each widget's own test).
        off = page.evaluate("""() => [...document.querySelectorAll(
            ".ffn-widget__live :is(output, td, input, select, button)")]
          .filter(el => el.checkVisibility())
          .filter(el => { const box = el.getBoundingClientRect();
                          return box.left < -0.5 || box.right > 390.5; })
          .map(el => el.outerHTML.slice(0, 90))""")
        assert off == []
        assert record.console_errors == [] and record.failed_requests == []
        page.screenshot(path=SCREENSHOT_DIR / "lab-phone-light.png", full_page=True)
    finally:
        context.close()
