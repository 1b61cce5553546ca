"""MkDocs hook: the FFN lab's widgets (ffn_docs/widgets.py).

Each `<div class="ffn-widget" data-widget="NAME"></div>` in a page becomes the widget's div
with its fallback table and data, computed by ffn now; such a page gets
`page.meta.ffn_widgets`, and overrides/main.html loads docs/javascripts/widgets.js on it
(outside the article: the print page, which copies articles, keeps the tables). Zensical runs
no hooks: there the div stays empty.
"""

from __future__ import annotations

import re
from typing import Any

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
