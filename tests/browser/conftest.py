"""Browser tests of the built site, in Debian's Chromium driven by Playwright.

Once per session, on the session's build (the root conftest.py), served on 127.0.0.1: every page
listed in the built sitemap.xml is visited in both colour schemes (`visits`), recording what the
tests then check (console errors, failed and third-party requests, images, math, code-copy
buttons, links, axe-core results). All browser tests share one Chromium (`browser`). Nothing
here lists pages by hand: a page added to the site is checked from the next run on.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Request,
    Response,
    Route,
    expect,
    sync_playwright,
)

from tooling import chromium, lighthouse
from tooling import site as sitetools

SCHEMES = ("light", "dark")
MATERIAL_SCHEME = {"light": "default", "dark": "slate"}
SCREENSHOT_DIR = sitetools.SCREENSHOTS  # the root conftest.py counts them in its summary
SCORES_FILE = lighthouse.SCORES  # test_lighthouse writes its table there, for the summary
VIEWPORT = {"width": 1280, "height": 800}  # a laptop: header search box, both sidebars
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.needs("chromium", "npm"))  # npm: axe-core, Lighthouse
            item.add_marker(pytest.mark.site)  # they all visit the built site


@dataclass
class Visit:
    """What one page showed in one colour scheme."""

    url: str  # site-relative, "" for the home page
    scheme: str  # "light" or "dark"
    base_url: str = ""  # where the site was served for this visit, ending in "/"
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)  # from FACTS_JS
    axe_violations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"/{self.url} ({self.scheme})"


@dataclass
class Site:
    dir: Path  # the built site
    base_url: str  # where it is served, ending in "/"
    pages: list[str]  # site-relative URLs from sitemap.xml
    formulas: dict[str, int]  # URL -> formulas in the page's Markdown when it was built


@pytest.fixture(scope="session")
def site(site_build: sitetools.Build) -> Iterator[Site]:
    if not sitetools.AXE_JS.is_file():
        pytest.fail(f"{sitetools.AXE_JS} is missing: run `npm ci`", pytrace=False)
    site_dir = site_build.dir  # the session's one build (the root conftest.py)
    if site_dir is None:
        pytest.fail(f"mkdocs build --strict failed:\n{site_build.log}", pytrace=False)
    # A page edited while the site was built has no reliable count: leave it out.
    formulas = {p.url: sitetools.formulas(site_build.sources[p.src])
                for p in sitetools.nav_pages() if p.src in site_build.sources}
    with sitetools.serve(site_dir) as base_url:
        yield Site(site_dir, base_url, sitetools.sitemap_pages(site_dir), formulas)


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium.PATH, args=chromium.ARGS
        )
        yield browser
        browser.close()


class Recorder:
    """Records a page's console errors and failed or third-party requests; requests to any
    host but the local server are aborted, so a test never reaches the network."""

    def __init__(self, context: BrowserContext, base_url: str) -> None:
        self.origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(base_url))
        self.visit: Visit | None = None
        context.route("**/*", self._route)
        context.on("request", self._request)
        context.on("requestfailed", self._failed)
        context.on("response", self._response)

    def attach(self, page: Page) -> Page:
        page.on("console", lambda m: m.type == "error" and self._log("console_errors", m.text))
        page.on("pageerror", lambda e: self._log("console_errors", f"uncaught: {e}"))
        return page

    def _log(self, kind: str, text: str) -> None:
        if self.visit is not None:
            getattr(self.visit, kind).append(text)

    def _local(self, url: str) -> bool:
        return url.startswith((self.origin + "/", "data:", "blob:", "about:"))

    def _route(self, route: Route) -> None:
        if self._local(route.request.url):
            route.continue_()
        else:
            route.abort("blockedbyclient")

    def _request(self, request: Request) -> None:
        if not self._local(request.url):
            self._log("foreign_requests", request.url)

    def _failed(self, request: Request) -> None:
        # ERR_ABORTED: cancelled by the browser, as a reload or a click cancels what the page
        # still had in flight; not a resource that failed.
        if self._local(request.url) and request.failure != "net::ERR_ABORTED":
            self._log("failed_requests", f"{request.url}: {request.failure}")

    def _response(self, response: Response) -> None:
        # A page's own status is Visit.status, checked by the tests (404.html is served as 404).
        if response.status >= 400 and not response.request.is_navigation_request():
            self._log("failed_requests", f"{response.url}: HTTP {response.status}")


def open_page(browser: Browser, base_url: str, scheme: str) -> tuple[BrowserContext, Page,
                                                                     Recorder]:
    context = browser.new_context(color_scheme=scheme, base_url=base_url, viewport=VIEWPORT)
    recorder = Recorder(context, base_url)
    return context, recorder.attach(context.new_page()), recorder


# Runs in the page after it loaded: the facts the per-page tests check.
FACTS_JS = """
async () => {
  const content = document.querySelector("article") || document.body;
  const images = [...document.images];
  images.forEach(img => { img.loading = "eager"; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  // Reading text, without code, math, scripts, notebook cells and permalink signs.
  const prose = content.cloneNode(true);
  prose.querySelectorAll(
    "pre, code, kbd, samp, math, script, style, .headerlink, .jp-InputArea, .jp-OutputArea"
  ).forEach(el => el.remove());
  const visible = el => el.checkVisibility();
  const maths = [...content.querySelectorAll("math")];
  const codes = [...content.querySelectorAll("pre > code")]
    .filter(code => !code.closest(".jupyter-wrapper"));
  const cells = [...content.querySelectorAll(".jupyter-wrapper .highlight-ipynb")];
  return {
    title: document.title,
    lang: document.documentElement.lang,
    h1: content.querySelector("h1")?.textContent.trim() ?? null,
    headings: [...content.querySelectorAll("h1, h2, h3, h4, h5, h6")]
      .map(h => h.textContent.trim()),
    description: document.querySelector('meta[name="description"]')?.content ?? null,
    canonical: document.querySelector('link[rel="canonical"]')?.href ?? null,
    scheme: document.body.dataset.mdColorScheme,
    background: getComputedStyle(document.body).backgroundColor,
    images: images.map(img => ({
      src: img.getAttribute("src"), alt: img.getAttribute("alt"), width: img.naturalWidth,
    })),
    text: content.textContent,
    prose: prose.textContent,
    math: maths.length,
    mathUntypeset: maths.filter(m => visible(m) && (
      !getComputedStyle(m).display.includes("math") || m.getBoundingClientRect().width === 0
    )).length,
    arithmatexLeft: content.querySelectorAll(".arithmatex").length,
    codeBlocks: codes.length,
    notebookCells: cells.length,
    notebookCellsWithoutCopy: cells.filter(
      cell => !cell.parentElement.querySelector("clipboard-copy")
    ).length,
    ids: [...document.querySelectorAll("[id], a[name]")].map(el => el.id || el.name),
    links: [...document.querySelectorAll("a[href]")]
      .map(a => a.href).filter(href => /^https?:/.test(href)),
  };
}
"""

# Runs after axe (it changes what the page shows): the code blocks without a copy button.
# Material mounts a code block, and adds its button, when the block first becomes visible
# (`content.lazy` in mkdocs.yml): each block is shown (its solution opened, its tab
# selected), scrolled to, and given 2 s and 120 frames, whichever ends later, to get its
# button: in frames too, because a renderer that other work keeps off the CPU (the visits run
# beside the other tests and yield to them) draws fewer frames in 2 s.
COPY_JS = """
async () => {
  const content = document.querySelector("article") || document.body;
  const codes = [...content.querySelectorAll("pre > code")]
    .filter(code => !code.closest(".jupyter-wrapper"));
  const hasCopy = code => code.parentElement.querySelector(
    ':scope > nav > button[data-md-type="copy"], :scope > button.md-clipboard');
  const frame = () => new Promise(resolve => requestAnimationFrame(() => resolve()));
  let lacking = 0;
  for (const code of codes) {
    for (let el = code; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") el.open = true;
      if (el.classList.contains("tabbed-block")) {
        const index = [...el.parentElement.children].indexOf(el);
        el.closest(".tabbed-set").querySelectorAll(":scope > input")[index].checked = true;
      }
    }
    code.scrollIntoView({block: "center"});
    const until = performance.now() + 2000;
    for (let n = 0; !hasCopy(code) && (n < 120 || performance.now() < until); n++) await frame();
    if (!hasCopy(code)) lacking++;
  }
  return lacking;
}
"""

# The page's scroller script (overrides/main.html) has read every scroller on the page
# (outside closed solutions, which it reads when they open).
SCROLLABLES_READY_JS = "document.documentElement.dataset.scrollables === 'ready'"

# Before axe runs, every block is laid out: extra.css lets the browser skip blocks far from the
# screen (content-visibility: auto), which axe would then not see as rendered (contrast,
# scrollable regions).
AXE_JS = """
async (tags) => {
  const all = document.createElement("style");
  all.textContent = ".md-typeset > * { content-visibility: visible !important; }";
  document.head.append(all);
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags},
                                          resultTypes: ["violations"]});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => `${n.target.join(" ")}: ${n.failureSummary}`),
  }));
}
"""


def axe(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations on the page as it is now (axe injected once per page)."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=sitetools.AXE_JS)
    violations: list[dict[str, Any]] = page.evaluate(AXE_JS, AXE_TAGS)
    return violations


# ---- The FFN lab's widgets: what every widget's browser test checks the same way ----

def open_widget(page: Page, url: str, name: str) -> Locator:
    """Go to the page, scroll to the widget and wait until it has mounted."""
    page.goto(url)
    root = page.locator(f'[data-widget="{name}"]')
    root.scroll_into_view_if_needed()
    expect(root).to_have_class("ffn-widget ffn-widget--live")
    return root


@contextmanager
def widget_without_javascript(site: Site, browser: Browser, url: str,
                              name: str) -> Iterator[Locator]:
    """The widget's place with JavaScript off: its table shown and no controls. Yields the
    widget for its own checks of the table, then takes the no-JavaScript screenshot."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(java_script_enabled=False, base_url=site.base_url)
    try:
        page = context.new_page()
        page.goto(site.base_url + url)
        root = page.locator(f'[data-widget="{name}"]')
        expect(root.locator(".ffn-widget__fallback table").first).to_be_visible()
        assert root.locator(".ffn-widget__live").count() == 0
        yield root
        root.screenshot(path=SCREENSHOT_DIR / f"widget-{name}-nojs.png")
    finally:
        context.close()


@contextmanager
def widget_mounted(site: Site, browser: Browser, url: str, name: str,
                   scheme: str) -> Iterator[tuple[Page, Locator]]:
    """The widget mounted in a fresh page of ``scheme``. Yields (page, widget) for its own
    checks; then axe finds nothing, no console error or failed request, the table is hidden,
    the screenshot is taken, and in print the table is back and the controls hidden."""
    context, page, recorder = open_page(browser, site.base_url, scheme)
    record = recorder.visit = Visit(url, scheme)
    try:
        root = open_widget(page, site.base_url + url, name)
        expect(root.locator(".ffn-widget__live")).to_be_visible()
        yield page, root
        assert axe(page) == [], (url, scheme)
        assert record.console_errors == [] and record.failed_requests == []
        expect(root.locator(".ffn-widget__fallback")).to_be_hidden()
        root.screenshot(path=SCREENSHOT_DIR / f"widget-{name}-{scheme}.png")
        page.emulate_media(media="print")
        expect(root.locator(".ffn-widget__fallback table").first).to_be_visible()
        expect(root.locator(".ffn-widget__live")).to_be_hidden()
    finally:
        context.close()



# ---- A widget on a phone (issue 41): touch, 390 px wide ----

PHONE = {"width": 390, "height": 844}

# Runs in the page: what does not fit a phone in ``root`` (a widget). The page must not scroll
# sideways; every result, cell and control the widget shows must lie within the screen's
# width; a control must be a fingertip's size, 44 CSS px high (WCAG 2.5.5), and a checkbox or
# radio button at least 24 px square (WCAG 2.2's 2.5.8), with a 44 px high label.
PHONE_FIT_JS = """
root => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > width) {
    problems.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide`);
  }
  const describe = el => el.outerHTML.slice(0, 90);
  const shown = [...root.querySelectorAll(
    ".ffn-widget__live :is(output, td, th, input, select, button, label, svg)")]
    .filter(el => el.checkVisibility() && !el.closest(".ffn-visually-hidden"));
  for (const el of shown) {
    const box = el.getBoundingClientRect();
    if (box.left < -0.5 || box.right > width + 0.5) {
      problems.push(`off screen (${Math.round(box.left)} to ${Math.round(box.right)} px): ` +
                    describe(el));
    }
  }
  for (const el of shown.filter(el => el.matches("input, select, button"))) {
    const box = el.getBoundingClientRect();
    const small = el.matches("[type=checkbox], [type=radio]")
      ? box.width < 24 || box.height < 24
        || [...el.labels].some(label => label.getBoundingClientRect().height < 44)
      : box.height < 44;
    if (small) {
      problems.push(`too small to tap (${Math.round(box.width)} x ${Math.round(box.height)}` +
                    ` px): ${describe(el)}`);
    }
  }
  return problems;
}
"""


def open_phone(browser: Browser, base_url: str, scheme: str) -> tuple[BrowserContext, Page,
                                                                      Recorder]:
    """A page on a phone: 390 x 844, touch, a mobile browser's viewport rules."""
    context = browser.new_context(color_scheme=scheme, base_url=base_url, viewport=PHONE,
                                  has_touch=True, is_mobile=True)
    recorder = Recorder(context, base_url)
    return context, recorder.attach(context.new_page()), recorder


def phone_problems(page: Page, root: Locator) -> list[str]:
    """What of the widget ``root`` does not fit the phone (PHONE_FIT_JS)."""
    problems: list[str] = page.evaluate(PHONE_FIT_JS, root.element_handle())
    return problems


@contextmanager
def widget_on_phone(site: Site, browser: Browser, url: str, name: str,
                    scheme: str) -> Iterator[tuple[Page, Locator]]:
    """The widget mounted on a phone in ``scheme``. Yields (page, widget) for the test's taps
    and reads; then everything it shows fits (phone_problems), axe finds nothing, no console
    error or failed request, and the screenshot is taken."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    context, page, recorder = open_phone(browser, site.base_url, scheme)
    record = recorder.visit = Visit(url, scheme)
    try:
        root = open_widget(page, site.base_url + url, name)
        yield page, root
        assert phone_problems(page, root) == [], (url, name, scheme)
        assert axe(page) == [], (url, scheme)
        assert record.console_errors == [] and record.failed_requests == []
        root.screenshot(path=SCREENSHOT_DIR / f"widget-{name}-phone-{scheme}.png")
    finally:
        context.close()

def visit(page: Page, recorder: Recorder, base_url: str, url: str, scheme: str) -> Visit:
    record = Visit(url, scheme, base_url)
    recorder.visit = record
    response = page.goto(base_url + url, wait_until="load")
    record.status = response.status if response else None
    if scheme == SCHEMES[0]:  # the requests are the same in both schemes: wait for them once
        page.wait_for_load_state("networkidle")
    record.facts = page.evaluate(FACTS_JS)
    # The page's script makes each overflowing scroller focusable a few per frame after load
    # (overrides/main.html), and axe checks that they are (scrollable-region-focusable).
    page.wait_for_function(SCROLLABLES_READY_JS)
    record.axe_violations = axe(page)
    record.facts["codeWithoutCopy"] = page.evaluate(COPY_JS)
    recorder.visit = None
    return record


@pytest.fixture(scope="session")
def visits(site: Site, browser: Browser) -> list[Visit]:
    """Every page of the sitemap, visited once in each colour scheme."""
    records = []
    for scheme in SCHEMES:
        context, page, recorder = open_page(browser, site.base_url, scheme)
        try:
            records += [visit(page, recorder, site.base_url, url, scheme) for url in site.pages]
        finally:
            context.close()
    return records


@pytest.fixture
def new_page(site: Site, browser: Browser) -> Iterator[tuple[Page, Recorder]]:
    """A fresh page (own context: no stored colour scheme) in the light scheme; the test
    fails if anything it does logs a console error or makes a failed or third-party request."""
    context, page, recorder = open_page(browser, site.base_url, "light")
    record = recorder.visit = Visit("(while testing)", "light")
    try:
        yield page, recorder
    finally:
        context.close()
    problems = record.console_errors + record.failed_requests + record.foreign_requests
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
