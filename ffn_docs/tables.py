"""Python-Markdown extension: put each Markdown table in a `<div class="ffn-table">` of its own.

Why: when a page loads, Material's bundle replaces every `table:not([class])` with a scrolling
wrapper around it (components/content/table). Chromium restyles everything under the
table's parent after that replacement (Material's `table:not([class]) + *` rule is a sibling
rule), and for a table written in a chapter that parent is the whole article: on a long
page, a restyle of most of its elements at load, which Lighthouse counts as blocking time
(CONTRIBUTING, "Lighthouse"). Inside a div of its own, the restyle stays within the table.
The div has no style: Material's wrapper, inside it, still sets the table's margins and
sideways scrolling.

A Markdown extension, like ffn_docs.mathml, so that MkDocs and Zensical both run it.
"""

from __future__ import annotations

import xml.etree.ElementTree as etree

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor


class TableWrapTreeprocessor(Treeprocessor):
    def run(self, root: etree.Element) -> None:
        for parent in list(root.iter()):
            for index, child in enumerate(list(parent)):
                if child.tag == "table" and "class" not in child.attrib:
                    wrapper = etree.Element("div", {"class": "ffn-table"})
                    wrapper.tail, child.tail = child.tail, None  # text after the table stays after
                    parent.remove(child)
                    wrapper.append(child)
                    parent.insert(index, wrapper)


class TableWrapExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # After the block parser made the tables (tables, admonitions, tabs); a low priority
        # runs after the inline patterns too (the tree is final then).
        md.treeprocessors.register(TableWrapTreeprocessor(md), "ffn_tables", 1)


def makeExtension(**kwargs: object) -> TableWrapExtension:  # what Python-Markdown looks up
    return TableWrapExtension(**kwargs)
