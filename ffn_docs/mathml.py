"""Python-Markdown extension: turn pymdownx.arithmatex's TeX into MathML.

Browsers typeset MathML natively, so math needs no MathJax download, no CDN and no
JavaScript, and a page saved to disk still shows it. latex2mathml does the conversion;
this extension only finds arithmatex's `generic` output (`\\(..\\)` spans, `\\[..\\]` divs).

It is a Markdown extension rather than an MkDocs hook so that any generator built on
Python-Markdown runs it: MkDocs and Zensical (which runs no MkDocs hooks) alike.
"""

from __future__ import annotations

import html
import re

from latex2mathml.converter import convert
from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor

_INLINE = re.compile(r'<span class="arithmatex">\\\((.+?)\\\)</span>', re.S)
_BLOCK = re.compile(r'<div class="arithmatex">\\\[(.+?)\\\]</div>', re.S)


def _mathml(tex: str, display: str) -> str:
    return convert(html.unescape(tex).strip(), display=display)


class MathMLPostprocessor(Postprocessor):
    def run(self, text: str) -> str:
        text = _BLOCK.sub(lambda m: f'<div class="math">{_mathml(m[1], "block")}</div>', text)
        return _INLINE.sub(lambda m: _mathml(m[1], "inline"), text)


class MathMLExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Below raw_html (30) and amp_substitute (20): runs on the finished HTML, stashed
        # blocks (tabs, admonitions, md_in_html) restored: all the page's math, wherever it is.
        md.postprocessors.register(MathMLPostprocessor(md), "ffn_mathml", 1)


def makeExtension(**kwargs: object) -> MathMLExtension:  # what Python-Markdown looks up
    return MathMLExtension(**kwargs)
