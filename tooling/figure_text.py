"""How small the text of each figure is on screen, in CSS px, as Chromium lays the page out.

A figure is an SVG drawn by scripts/figures and shown as an `<img>` (or the `<picture>` that
holds its narrow variant). Its text is SVG `<text>` with a font size in the SVG's own units, so
on screen a text is `font-size * rendered width / viewBox width` CSS px. The page's script below
reads the file the browser chose (`currentSrc`), its viewBox and every font size in it.

    python -m tooling.figure_text SITE_DIR   # every page of a built site, at both sizes

tests/browser/test_figures_phone.py holds every figure to MIN_PX with the same script.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MIN_PX = 11.0  # the smallest text a figure may show, in CSS px (issue 41)
# (name, viewport): a phone and an ordinary laptop.
SIZES = (("phone", {"width": 390, "height": 844}), ("laptop", {"width": 1366, "height": 900}))

# Runs in a page: for each figure the reader sees now (in the page's colour scheme), the file
# shown, its alt text, its rendered width and its smallest text in CSS px.
MEASURE_JS = """
async () => {
  const figures = [...document.querySelectorAll("article img")]
    .filter(img => /\\/figures\\/[^/]+\\.svg/.test(img.currentSrc || img.src))
    .filter(img => img.checkVisibility());
  const out = [];
  for (const img of figures) {
    img.loading = "eager";
    await img.decode().catch(() => null);
    const src = img.currentSrc || img.src;
    const svg = new DOMParser().parseFromString(await (await fetch(src)).text(),
                                                "image/svg+xml").documentElement;
    const viewBox = (svg.getAttribute("viewBox") || "").trim().split(/[\\s,]+/).map(Number);
    const sizes = [...svg.querySelectorAll("text")].map(text => {
      const style = text.getAttribute("style") || "";
      const m = style.match(/font-size:\\s*([\\d.]+)px/)
        || style.match(/font:\\s*[^;]*?([\\d.]+)px/);
      return m ? Number(m[1]) : Number(text.getAttribute("font-size"));
    }).filter(size => size > 0);
    const width = img.getBoundingClientRect().width;
    out.push({
      src: src.replace(/^.*\\/figures\\//, "figures/"),
      alt: img.getAttribute("alt") || "",
      width: width,
      texts: sizes.length,
      smallest: sizes.length ? Math.min(...sizes) * width / viewBox[2] : null,
    });
  }
  return out;
}
"""


@dataclass(frozen=True)
class FigureText:
    page: str  # site-relative URL
    size: str  # "phone" or "laptop"
    src: str  # the file shown: figures/NAME.svg
    width: float  # rendered width, CSS px
    smallest: float | None  # smallest text, CSS px (None: the figure has no text)

    def line(self) -> str:
        small = "no text" if self.smallest is None else f"{self.smallest:5.2f} px"
        return f"{self.size:6}  {small}  {self.width:6.0f} px wide  /{self.page} {self.src}"


def measure(page: Any, url: str, size: str) -> list[FigureText]:
    """The figures of the page at `url` (a Playwright page already at that viewport)."""
    page.goto(url, wait_until="load")
    base = url.split("/ffn-by-the-numbers/", 1)[-1]
    return [FigureText(base, size, f["src"], f["width"], f["smallest"])
            for f in page.evaluate(MEASURE_JS)]


def measure_site(site_dir: Path, scheme: str = "light") -> list[FigureText]:
    """Every figure of every page of a built site, at both SIZES, in one colour scheme."""
    from playwright.sync_api import sync_playwright

    from tooling import chromium
    from tooling import site as sitetools

    found: list[FigureText] = []
    with sitetools.serve(site_dir) as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium.PATH, args=chromium.ARGS)
        for size, viewport in SIZES:
            context = browser.new_context(viewport=viewport,  # type: ignore[arg-type]
                                          color_scheme=scheme)  # type: ignore[arg-type]
            page = context.new_page()
            for url in sitetools.sitemap_pages(site_dir):
                found += measure(page, base_url + url, size)
            context.close()
        browser.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site_dir", type=Path, help="a site built by mkdocs build")
    parser.add_argument("--scheme", choices=("light", "dark"), default="light")
    args = parser.parse_args(argv)
    found = measure_site(args.site_dir, args.scheme)
    for figure in found:
        print(figure.line())
    for size, _ in SIZES:
        mine = [f for f in found if f.size == size and f.smallest is not None]
        small = [f for f in mine if f.smallest is not None and f.smallest < MIN_PX]
        least = min((f.smallest for f in mine if f.smallest is not None), default=None)
        print(f"{size}: {len(mine)} figure placements, {len(small)} with text under {MIN_PX} px,"
              f" smallest {least:.2f} px" if least is not None else f"{size}: no figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
