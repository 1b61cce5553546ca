"""Nothing is cut off, on a phone (390x844) or on a laptop (1366x900), on any page of the site.

On a phone the page never scrolls sideways and nothing sticks out of the screen: what is wider
than the screen (a long code line, a wide table) scrolls inside its own box, and that box shows
a cue at the edge where more is hidden (extra.css, "Nothing cut off"). On a laptop, with both
sidebars, no code block, printed output or table is wider than its column: the code is wrapped
to the column (`tests/test_code_width.py` holds every python block to that width) and the tables
are narrow enough. Display math and widgets are held to the same rules.

Each page is measured with everything a reader can open shown: every solution open, every
tab's content displayed, every block laid out. The counts of blocks that scroll sideways are
printed per page (`-s` shows them), for the record.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import Site, open_page

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}  # Material shows both sidebars from 1220 px on
# A wide table kept whole on purpose: it scrolls inside its own box, with the cue, on a laptop
# too. Each use says why beside it in the page.
WIDE_TABLE = "ffn-wide"

# Runs in the page: shows everything a reader can open, then measures. Returns, for each block
# that can scroll sideways (code, output, table, display math), whether it does, and every
# element that sticks out of the screen where no box of its own scrolls it into view.
MEASURE_JS = """
async (wideClass) => {
  const show = document.createElement("style");
  show.textContent = ".md-typeset > * { content-visibility: visible !important; }\\n" +
    ".md-typeset .tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }";
  document.head.append(show);
  // .md-content: the article, and on the print page the book after it (hooks/pdf.py)
  const content = document.querySelector(".md-content") || document.body;
  content.querySelectorAll("details").forEach(d => { d.open = true; });
  // A widget mounts as it nears the screen (widgets/_shared/loader.js): bring each one
  // there and give it 3 s to mount, so that what is measured is the widget a reader uses.
  for (const widget of content.querySelectorAll(".ffn-widget")) {
    widget.scrollIntoView({block: "center"});
    const until = performance.now() + 3000;
    while (!widget.classList.contains("ffn-widget--live") && performance.now() < until) {
      await new Promise(resolve => setTimeout(resolve, 50));
    }
  }
  scrollTo(0, 0);
  await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));

  const headings = [...content.querySelectorAll("h1, h2, h3, h4, h5, h6")];
  const clean = text => text.replace(/[¶\\s]+/g, " ").trim();
  const describe = el => {
    const above = headings.filter(
      h => h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    const line = (el.textContent || "").split("\\n").map(clean).find(t => t) || "";
    const where = above ? `under "${clean(above.textContent)}"` : "at the top";
    return `${el.tagName.toLowerCase()} ${where}: "${line.slice(0, 70)}"`;
  };
  const scrolls = el => /auto|scroll/.test(getComputedStyle(el).overflowX);
  const cue = el => getComputedStyle(el).backgroundImage.includes("gradient");

  // The blocks that may be wider than their column, each with the box that scrolls it.
  const blocks = [];
  const scroller = el => {  // the nearest box that scrolls el sideways, else el
    for (let box = el; box && box !== content; box = box.parentElement) {
      if (scrolls(box)) return box;
    }
    return el;
  };
  for (const pre of content.querySelectorAll("pre")) {
    const code = pre.querySelector(":scope > code");  // Material: the code scrolls
    blocks.push({kind: "code", el: pre, box: code && scrolls(code) ? code : scroller(pre)});
  }
  for (const table of content.querySelectorAll("table")) {
    if (table.closest("pre")) continue;  // line numbers
    let box = table.parentElement;
    while (box !== content && !scrolls(box)) box = box.parentElement;
    blocks.push({kind: "table", el: table, box: box === content ? table : box});
  }
  for (const math of content.querySelectorAll(".math")) {
    blocks.push({kind: "math", el: math, box: math});
  }
  // A code line holding a URL cannot wrap: a block is excused when each line that does not
  // fit would fit with its URL left out (a notebook's install cell names the wheel's URL).
  const unbreakable = b => {
    if (b.kind !== "code") return false;
    const s = getComputedStyle(b.box);
    const probe = document.createElement("span");
    probe.textContent = "x".repeat(100);
    b.box.append(probe);
    const ch = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const fit = (b.box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight)) / ch;
    const long = b.el.textContent.split("\\n").filter(line => line.length > fit);
    return long.length > 0 && long.every(
      line => line.replace(/(["'])https?:\\/\\/\\S*?\\1/, '""').length <= fit);
  };
  const measured = blocks.filter(b => b.el.checkVisibility()).map(b => ({
    kind: b.kind,
    what: describe(b.el),
    widget: !!b.el.closest(".ffn-widget"),
    wide: !!b.el.closest("." + wideClass),
    api: !!b.el.closest(".doc"),
    url: unbreakable(b),
    overflow: Math.max(0, b.box.scrollWidth - b.box.clientWidth,
                       b.el.getBoundingClientRect().width - b.box.clientWidth),
    cue: cue(b.box),
  }));

  // Elements out of the screen sideways that no scrolling box of their own brings into view.
  const width = innerWidth;
  const outside = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.right <= width + 1 && r.left >= -1) continue;
    if (!el.checkVisibility({opacityProperty: true, visibilityProperty: true})) continue;
    // A closed drawer (Material's navigation and table of contents on a phone) sits off
    // screen by design, as do visually hidden labels (clipped to nothing).
    if (getComputedStyle(el).position === "fixed" && !el.closest(".md-typeset")) continue;
    if (el.closest(".md-sidebar, .md-search, .md-header, .md-tabs, .md-footer")) {
      // Material's own chrome: checked through documentElement.scrollWidth below
      continue;
    }
    let box = el.parentElement, held = false;
    for (; box && box !== document.body; box = box.parentElement) {
      const s = getComputedStyle(box);
      if (s.clipPath !== "none" && s.position === "absolute") { held = true; break; }
      if (scrolls(box)) {
        const b = box.getBoundingClientRect();
        held = b.left >= -1 && b.right <= width + 1;
        break;
      }
    }
    if (held) continue;
    const parent = el.parentElement;
    const pr = parent && parent.getBoundingClientRect();
    if (pr && (pr.right > width + 1 || pr.left < -1) && parent !== document.body) continue;
    outside.push({what: describe(el), widget: !!el.closest(".ffn-widget"),
                  left: Math.round(r.left), right: Math.round(r.right)});
  }
  return {
    scrollWidth: document.documentElement.scrollWidth,
    bodyScrollWidth: document.body.scrollWidth,
    innerWidth: width,
    blocks: measured,
    outside,
  };
}
"""


def measure(browser: Browser, site: Site, screen: dict[str, int]) -> Iterator[
        tuple[str, dict[str, Any]]]:
    """(url, what MEASURE_JS found) for every page of the sitemap at ``screen``."""
    context, page, _ = open_page(browser, site.base_url, "light")
    try:
        page.set_viewport_size(screen)
        for url in site.pages:
            yield url or "(home)", measured(page, site.base_url + url)
    finally:
        context.close()


def measured(page: Page, url: str) -> dict[str, Any]:
    page.goto(url, wait_until="load")
    result: dict[str, Any] = page.evaluate(MEASURE_JS, WIDE_TABLE)
    return result


def scrolling(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in blocks if b["overflow"] > 1]


def report(title: str, found: dict[str, dict[str, Any]]) -> None:
    """Print the blocks that scroll sideways, per page and kind (the record for issue 41)."""
    print(f"\n{title}: blocks that scroll sideways, per page (code/table/math)")
    total = {"code": 0, "table": 0, "math": 0}
    for url, result in found.items():
        counts = {kind: sum(1 for b in scrolling(result["blocks"]) if b["kind"] == kind)
                  for kind in total}
        all_counts = {kind: sum(1 for b in result["blocks"] if b["kind"] == kind)
                      for kind in total}
        for kind in total:
            total[kind] += counts[kind]
        if any(counts.values()):
            print(f"  {url}: " + ", ".join(f"{counts[k]} of {all_counts[k]} {k}" for k in total))
    print("  total: " + ", ".join(f"{n} {k}" for k, n in total.items()))
    for reason in ("widget", "api", "url", "wide"):
        n = sum(1 for r in found.values() for b in scrolling(r["blocks"]) if b[reason])
        print(f"  of which in {reason} blocks: {n}")


@pytest.fixture(scope="module")
def on_phone(site: Site, browser: Browser) -> dict[str, dict[str, Any]]:
    found = dict(measure(browser, site, PHONE))
    report("390x844", found)
    return found


@pytest.fixture(scope="module")
def on_laptop(site: Site, browser: Browser) -> dict[str, dict[str, Any]]:
    found = dict(measure(browser, site, LAPTOP))
    report("1366x900", found)
    return found


def fail_listing(problems: dict[str, list[str]]) -> None:
    lines = []
    for url, found in problems.items():
        if found:
            lines.append(f"/{url}:")
            lines += [f"    {p}" for p in found]
    if lines:
        pytest.fail("\n".join(lines), pytrace=False)


def too_wide(result: dict[str, Any]) -> list[str]:
    if result["scrollWidth"] <= result["innerWidth"]:
        return []
    return [f"the page is {result['scrollWidth']} px wide in a {result['innerWidth']} px screen"]


def test_no_page_scrolls_sideways_on_a_phone(on_phone: dict[str, dict[str, Any]]) -> None:
    """A page made wider only by a widget is test_widgets_fit_a_phone's to report."""
    problems = {}
    for url, result in on_phone.items():
        found = [f"{o['what']} sticks out ({o['left']} to {o['right']} px)"
                 for o in result["outside"] if not o["widget"]]
        widgets_only = result["outside"] and not found
        problems[url] = found + ([] if widgets_only else too_wide(result))
    fail_listing(problems)


def test_widgets_fit_a_phone(on_phone: dict[str, dict[str, Any]]) -> None:
    problems = {}
    for url, result in on_phone.items():
        found = [f"{o['what']} sticks out ({o['left']} to {o['right']} px)"
                 for o in result["outside"] if o["widget"]]
        problems[url] = found + (too_wide(result) if found else [])
    fail_listing(problems)


def test_what_scrolls_on_a_phone_shows_a_cue(on_phone: dict[str, dict[str, Any]]) -> None:
    fail_listing({url: [f"{b['what']} scrolls sideways ({b['overflow']:.0f} px more) with no cue"
                        for b in scrolling(result["blocks"]) if not b["cue"]]
                  for url, result in on_phone.items()})


def test_nothing_wider_than_its_column_on_a_laptop(on_laptop: dict[str, dict[str, Any]]) -> None:
    """Excused, and counted in the printed record: a widget's blocks (test_widgets_fit_a_laptop
    holds them), a line that is one URL, and a table kept wide on purpose. The API reference's
    blocks are held too: mkdocstrings shows ffn's own source at the package's 100 characters,
    which extra.css wraps to the column there."""
    fail_listing({url: [f"{b['what']} is {b['overflow']:.0f} px wider than its column"
                        for b in scrolling(result["blocks"])
                        if not (b["wide"] or b["widget"] or b["url"])]
                  for url, result in on_laptop.items()})


def test_widgets_fit_a_laptop(on_laptop: dict[str, dict[str, Any]]) -> None:
    fail_listing({url: [f"{b['what']} is {b['overflow']:.0f} px wider than its column"
                        for b in scrolling(result["blocks"]) if b["widget"]]
                  for url, result in on_laptop.items()})


def test_wide_tables_scroll_with_a_cue_on_a_laptop(on_laptop: dict[str, dict[str, Any]]) -> None:
    wide = [b for result in on_laptop.values() for b in result["blocks"] if b["wide"]]
    assert len(wide) <= 3, f"{len(wide)} tables kept wide: narrow some (each needs a reason)"
    fail_listing({url: [f"{b['what']} is kept wide but shows no cue"
                        for b in scrolling(result["blocks"]) if b["wide"] and not b["cue"]]
                  for url, result in on_laptop.items()})
