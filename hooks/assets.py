"""MkDocs hook: mkdocstrings' stylesheet only on the pages that show mkdocstrings' output.

mkdocstrings adds `assets/_mkdocstrings.css` (the layout of the API reference's signatures and
parameter tables) to `extra_css`, so Material links it in the `<head>` of every page: one more
request that each page waits for before its first paint, for rules that match nothing on
most of them. The hook takes it out of `extra_css` and sets `page.meta.mkdocstrings_css` on
the pages whose content holds mkdocstrings' output (`class="doc doc-...`), and on the print
page (hooks/pdf.py), which holds the API reference too; overrides/main.html links the
stylesheet on those. Zensical runs no hooks: there it stays on every page, as before.
"""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

CSS = "assets/_mkdocstrings.css"
_PRINT_SRC = "print.md"  # hooks/pdf.py's print page


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    # Hooks run after the plugins' on_config, so mkdocstrings has added its stylesheet by now.
    config.extra_css[:] = [css for css in config.extra_css if str(css) != CSS]
    return config


def on_page_content(content: str, page: Page, **_: Any) -> str:
    if 'class="doc doc-' in content or page.file.src_uri == _PRINT_SRC:
        page.meta["mkdocstrings_css"] = CSS
    return content
