"""MkDocs hook: the FFN lab's widgets (ffn_docs/widgets.py).

Each `<div class="ffn-widget" data-widget="NAME"></div>` in a page becomes the widget's div
with its fallback table and data, computed by ffn now; such a page gets
`page.meta.ffn_widgets`, and overrides/main.html loads docs/javascripts/widgets.js on it
(outside the article: the print page, which copies articles, keeps the tables). After the
build, d3 (the widgets' charts) is copied from node_modules (npm ci, package-lock.json) into
the site with its licence: the site serves it itself. Zensical runs no hooks: there the div
stays empty.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

from ffn_docs import widgets

_PLACEHOLDER = re.compile(r'<div class="ffn-widget" data-widget="([\w-]+)">\s*</div>')


def on_page_content(content: str, page: Page, **_: Any) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in widgets.WIDGETS:
            raise PluginError(f"{page.file.src_uri}: no widget {name!r}; known: "
                              f"{', '.join(widgets.WIDGETS)}")
        page.meta["ffn_widgets"] = True
        return widgets.render(name)

    return _PLACEHOLDER.sub(fill, content)


D3 = Path(__file__).resolve().parent.parent / "node_modules" / "d3"
VENDOR = "javascripts/vendor"  # under the site; docs/javascripts/widgets/dom.js imports from it


def on_post_build(config: MkDocsConfig, **_: Any) -> None:
    script = D3 / "dist" / "d3.min.js"
    if not script.is_file():
        raise PluginError(f"{script} is missing: the widgets' charts need d3 from npm; run "
                          "`npm ci` (./scripts/test and ./scripts/serve run it when npm is "
                          "installed; Debian: apt-get install -y npm)")
    vendor = Path(config.site_dir) / VENDOR
    vendor.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(script, vendor / "d3.min.js")
    shutil.copyfile(D3 / "LICENSE", vendor / "d3.LICENSE.txt")  # ISC: the notice goes with it
