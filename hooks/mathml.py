"""MkDocs hook: turn pymdownx.arithmatex's TeX into MathML when the page is built.

Browsers typeset MathML natively, so math needs no MathJax download, no CDN and no
JavaScript, and a page saved to disk still shows it. latex2mathml does the conversion;
this hook only finds arithmatex's `generic` output (`\\(..\\)` spans, `\\[..\\]` divs).
"""

from __future__ import annotations

import html
import re
from typing import Any

from latex2mathml.converter import convert

_INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
_BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)


def _mathml(tex: str, display: str) -> str:
    return convert(html.unescape(tex).strip(), display=display)


def on_page_content(content: str, **_: Any) -> str:
    content = _BLOCK.sub(lambda m: f'<div class="math">{_mathml(m[1], "block")}</div>', content)
    return _INLINE.sub(lambda m: _mathml(m[1], "inline"), content)
