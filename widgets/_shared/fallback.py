"""The markup each FFN lab widget writes at build time around what ffn computed: its table, for
readers without JavaScript, the print page and the PDF, and its data for the JavaScript."""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Sequence

from ffn_docs.tables import CSS_CLASS  # Material's wrapper written here too, not at load


def region(caption: str, table_body: str, css_class: str = "") -> str:
    """A table (``caption``: its caption as HTML; ``table_body``: its thead and tbodies) in a
    labelled scroll region in the tab order.

    A wide table scrolls sideways; without JavaScript (where these tables are shown) no script
    can make the scroller focusable when it overflows (overrides/main.html does that for the
    pages' own tables), so it is a region a keyboard user can tab to and scroll (axe-core:
    scrollable-region-focusable). The caption's id comes from its text: unique on the print
    page, which holds every widget's table. Inside it, the table sits in Material's scroll
    wrapper already, as ffn_docs.tables writes the pages' own tables (it says why).
    """
    caption_id = "ffn-table-" + hashlib.sha256(caption.encode()).hexdigest()[:12]
    return (f'<div class="{" ".join(["ffn-table", css_class]).strip()}" tabindex="0" '
            f'role="region" aria-labelledby="{caption_id}">'
            f'<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
            f'<table class="{CSS_CLASS}"><caption id="{caption_id}">{caption}</caption>'
            f'{table_body}</table></div></div></div>')


def table(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain text table in its region: one column header per ``header`` entry, each row's
    first cell its row header; every string escaped."""
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(
        (f'<th scope="row">{html.escape(c)}</th>' if i == 0 else f"<td>{html.escape(c)}</td>")
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return region(html.escape(caption), f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody>")


def data(value: object) -> str:
    """``value`` as the JSON script the widget's module reads (`.ffn-widget__data`)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    text = text.replace("</", "<\\/")  # no "</script>" inside the script
    return f'<script type="application/json" class="ffn-widget__data">{text}</script>'


def widget(table_markup: str, value: object = None) -> str:
    """The fallback div holding ``table_markup``, then the data script when there is data."""
    return (f'<div class="ffn-widget__fallback">{table_markup}</div>'
            + ("" if value is None else data(value)))
