"""Python-Markdown extension: write each Markdown table inside Material's scroll wrapper, as
Material's bundle would put it at load, with class `ffn-plain`.

Why: when a page loads, Material's bundle takes every `table:not([class])` out of the page and
puts it back inside `<div class="md-typeset__scrollwrap"><div class="md-typeset__table">`
(components/content/table), then reads the header's size. Chromium drops the layout of each
moved table and builds it again, in one task, from a script: on the Lab page, 3,100 layout
objects. Lighthouse records a script stack for each of them, and counted that task as most of
the page's blocking time (CONTRIBUTING, "Lighthouse"). Written in the wrapper at build time,
with a class so that Material leaves it alone, the table is laid out once, as the page is read.
extra.css gives `table.ffn-plain` Material's own rules for a table without a class
(tests/test_table_wrap.py holds the two to the same declarations), so it looks the same.

A Markdown extension, like ffn_docs.mathml, so that MkDocs and Zensical both run it.
"""

from __future__ import annotations

import xml.etree.ElementTree as etree

from markdown import Extension, Markdown
from markdown.treeprocessors import Treeprocessor

CSS_CLASS = "ffn-plain"  # styled as Material styles `table:not([class])` (extra.css)


def wrap(table: etree.Element) -> etree.Element:
    """Material's scroll wrapper (its bundle's `renderTable`) around ``table``, which gets
    CSS_CLASS; the wrapper's outer div is returned."""
    table.set("class", CSS_CLASS)
    scrollwrap = etree.Element("div", {"class": "md-typeset__scrollwrap"})
    etree.SubElement(scrollwrap, "div", {"class": "md-typeset__table"}).append(table)
    return scrollwrap


class TableWrapTreeprocessor(Treeprocessor):
    def run(self, root: etree.Element) -> None:
        for parent in list(root.iter()):
            for index, child in enumerate(list(parent)):
                if child.tag == "table" and "class" not in child.attrib:
                    tail, child.tail = child.tail, None
                    parent.remove(child)
                    wrapper = wrap(child)
                    wrapper.tail = tail  # text after the table stays after the wrapper
                    parent.insert(index, wrapper)


class TableWrapExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # After the block parser made the tables (tables, admonitions, tabs); a low priority
        # runs after the inline patterns too (the tree is final then).
        md.treeprocessors.register(TableWrapTreeprocessor(md), "ffn_tables", 1)


def makeExtension(**kwargs: object) -> TableWrapExtension:  # what Python-Markdown looks up
    return TableWrapExtension(**kwargs)
