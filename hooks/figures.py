"""MkDocs hook: figures a phone can read, each opening full size on a tap, click or Enter.

A figure is placed in Markdown as two images, `figures/STEM.svg#only-light` and
`figures/STEM-dark.svg#only-dark` (Material shows the one of the reader's scheme). Here each
becomes a link that opens it in mkdocs-glightbox's lightbox (its alt text as the big image's),
around a `<picture>`:

- a plot drawn narrow too (`STEM-narrow.svg`, scripts/figures) gets a `<source>` for screens up
  to NARROW_MEDIA: a phone downloads and shows the narrow drawing, a laptop the wide one;
- a diagram drawn narrow too (its module's NARROW_FIGURES) gets the same `<source>`;
- a diagram with no narrow drawing is never shown narrower than the width at which its
  smallest text is MIN_PX CSS px, in a box that scrolls sideways, with a cue;
- `loading="lazy"`: Chromium does not fetch a lazy image that is not displayed, so a page
  downloads the figures of the reader's scheme only (the other's come if the reader toggles);
- width and height from the SVG, so the page does not shift when a figure arrives.

Pages without figures get no lightbox script (its `glightbox: false` page meta).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page

MIN_PX = 11.0  # the smallest text a figure shows, CSS px (tooling/figure_text.py measures it)
NARROW_MEDIA = "(max-width: 37.5em)"  # 600 px: narrower, a wide plot's text falls under MIN_PX
LAPTOP_COLUMN = 680  # CSS px: the article's width at 1366 px is 688
PX_PER_PT = 4 / 3  # an SVG sized in pt shows at this many CSS px per pt at its natural size

_IMG = re.compile(r"<img\b[^>]*>")
_ATTR = re.compile(r'(\w[\w-]*)="([^"]*)"')
_FIGURE_SRC = re.compile(r"(.*?)figures/([\w-]+)\.svg#only-(light|dark)")
_SIZE = re.compile(r'viewBox="0 0 ([\d.]+) ([\d.]+)"')
_FONT = re.compile(r"font-size: ([\d.]+)px")


def _svg(path: Path) -> tuple[float, float, float]:
    """Width and height (pt) of a figure's SVG and its smallest font size (pt)."""
    text = path.read_text(encoding="utf-8")
    size = _SIZE.search(text)
    if size is None:
        raise ValueError(f"{path}: no viewBox")
    fonts = [float(f) for f in _FONT.findall(text)]
    return float(size[1]), float(size[2]), min(fonts, default=MIN_PX)


def _figure(alt: str, prefix: str, name: str, scheme: str, figures: Path, number: int) -> str:
    """The markup of one figure image (its width and height come from its SVG)."""
    width, height, font = _svg(figures / f"{name}.svg")
    stem = name.removesuffix("-dark")
    narrow = f"{stem}-narrow{'-dark' if scheme == 'dark' else ''}"
    src = f"{prefix}figures/{name}.svg"
    img = (f'<img class="off-glb" alt="{alt}" src="{src}#only-{scheme}" '
           f'width="{round(width * PX_PER_PT)}" height="{round(height * PX_PER_PT)}" '
           f'loading="lazy" decoding="async"')
    inner = ""
    if (figures / f"{narrow}.svg").is_file():
        n_width, n_height, _ = _svg(figures / f"{narrow}.svg")
        inner = (f'<source media="{NARROW_MEDIA}" srcset="{prefix}figures/{narrow}.svg" '
                 f'width="{round(n_width * PX_PER_PT)}" '
                 f'height="{round(n_height * PX_PER_PT)}">')
        img += " />"
    else:
        least = math.ceil(width * MIN_PX / font)  # CSS px wide: its smallest text is MIN_PX
        img += f' style="min-width: {least}px" />'
    link = (f'<a class="glightbox ffn-figure__open" href="{src}" data-type="image" '
            f'data-gallery="figure-{number}" data-alt="{alt}">'
            f"<picture>{inner}{img}</picture></a>")
    if inner:
        return f'<span class="ffn-figure ffn-figure--only-{scheme}">{link}</span>'
    # Wider than a laptop's column (LAPTOP_COLUMN): the cue shows on every screen.
    wider = " ffn-figure--wider" if least > LAPTOP_COLUMN else ""
    return (f'<span class="ffn-figure ffn-figure--wide{wider} ffn-figure--only-{scheme}">'
            f'<span class="ffn-figure__cue" aria-hidden="true">Wide figure: scroll sideways, '
            f"or open it full size</span>"
            f'<span class="ffn-figure__scroll">{link}</span></span>')


@event_priority(50)  # before mkdocs-glightbox (priority 0), which reads page.meta
def on_page_content(text: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    figures = Path(config.docs_dir) / "figures"
    count = [0]

    def replace(m: re.Match[str]) -> str:
        attrs = dict(_ATTR.findall(m.group(0)))
        src = _FIGURE_SRC.fullmatch(attrs.get("src", ""))
        if src is None:
            return m.group(0)  # not a figure of docs/figures
        if not attrs.get("alt"):
            raise PluginError(f"{page.file.src_uri}: figure {attrs['src']} has no alt text")
        count[0] += 1
        prefix, name, scheme = src.groups()
        return _figure(attrs["alt"], prefix, name, scheme, figures, count[0])

    text = _IMG.sub(replace, text)
    if count[0] == 0:
        page.meta["glightbox"] = False  # no figure, no lightbox script
    return text



_LIGHTBOX_JS = re.compile(r'<script src="([^"]*glightbox\.min\.js)"></script>')
_LIGHTBOX_INIT = re.compile(r'(<script id="init-glightbox">)(.*?)(</script>)', re.S)


@event_priority(-50)  # after mkdocs-glightbox's on_post_page, which adds its scripts
def on_post_page(output: str, page: Page, **_: Any) -> str:
    """The lightbox's script deferred: it would otherwise hold up the page's first paint
    (Lighthouse). Its set-up then waits for it (deferred scripts run before DOMContentLoaded)."""
    output, found = _LIGHTBOX_JS.subn(r'<script src="\1" defer></script>', output)
    if found:
        output = _LIGHTBOX_INIT.sub(
            lambda m: f'{m[1]}addEventListener("DOMContentLoaded", () => {{{m[2]}}});{m[3]}',
            output)
    return output
