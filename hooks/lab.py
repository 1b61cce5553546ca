"""MkDocs hook: the FFN lab, its widgets (widgets/, one folder each; a hook module is named
by its file, so this one is not `widgets`, which it imports).

Each `<div class="ffn-widget" data-widget="NAME"></div>` in a page becomes the widget's div
with its fallback table and data, computed by ffn now (widgets.render); such a page gets
`page.meta.ffn_widgets`, and overrides/main.html loads the loader on it (outside the article:
the print page, which copies articles, keeps the tables). After the build, the widgets'
JavaScript is copied into the site under javascripts/widgets/ at the paths it has under
widgets/ (so its relative imports are the same in Node and in the browser), and d3 (the
widgets' charts) from node_modules (npm ci, package-lock.json) with its licence: the site
serves it itself. Zensical runs no hooks: there the div stays empty.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

import widgets

_PLACEHOLDER = re.compile(r'<div class="ffn-widget" data-widget="([\w-]+)">\s*</div>')


def on_page_content(content: str, page: Page, **_: Any) -> str:
    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in widgets.registry():
            raise PluginError(f"{page.file.src_uri}: no widget {name!r}; known: "
                              f"{', '.join(widgets.registry())}")
        page.meta["ffn_widgets"] = True
        return widgets.render(name)

    return _PLACEHOLDER.sub(fill, content)


D3 = Path(__file__).resolve().parent.parent / "node_modules" / "d3"
SCRIPTS = "javascripts/widgets"  # under the site: widgets/*/*.js, at the same relative paths
VENDOR = "javascripts/vendor"  # under the site; widgets/_shared/dom.js imports from it


def on_post_build(config: MkDocsConfig, **_: Any) -> None:
    script = D3 / "dist" / "d3.min.js"
    if not script.is_file():
        raise PluginError(f"{script} is missing: the widgets' charts need d3 from npm; run "
                          "`npm ci` (./scripts/test and ./scripts/serve run it when npm is "
                          "installed; Debian: apt-get install -y npm)")
    for source in widgets.scripts():
        target = Path(config.site_dir) / SCRIPTS / source.relative_to(widgets.HERE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    vendor = Path(config.site_dir) / VENDOR
    vendor.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(script, vendor / "d3.min.js")
    shutil.copyfile(D3 / "LICENSE", vendor / "d3.LICENSE.txt")  # ISC: the notice goes with it
