"""ffn_docs.tables writes each Markdown table inside Material's scroll wrapper, with class
ffn-plain, and extra.css gives that class Material's own rules for a table without a class.

The CSS is a copy of the installed Material's: this test reads its main.css, takes every rule
whose selector holds `table:not([class])`, and expects extra.css's "Tables" section to hold the
same rules for `table.ffn-plain`, in the same order, declaration by declaration. A new Material
that changes its table rules fails here, naming the rule, instead of making the tables look
different from Material's without anyone noticing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from pathlib import Path

import markdown
import material

from ffn_docs import tables
from widgets._shared import fallback

ROOT = Path(__file__).resolve().parent.parent
EXTRA_CSS = ROOT / "docs" / "stylesheets" / "extra.css"
MATERIAL_CSS = next((Path(material.__file__).parent / "templates" / "assets" / "stylesheets")
                    .glob("main.*.min.css"))
SECTION = "/* --- Tables: written in Material's scroll wrapper"
NEXT_SECTION = "/* --- Nothing cut off"

Rule = tuple[str, tuple[str, ...], tuple[str, ...]]  # at-rules, selectors, declarations


def rules(css: str) -> list[Rule]:
    """The style rules of ``css`` (comments dropped), each with the at-rules around it
    (`@media print`), its selectors and its declarations, in a normal form: single spaces,
    none around combinators and punctuation."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)

    def norm(text: str) -> str:
        text = re.sub(r"\s+", " ", text).strip()
        return re.sub(r"\s*([>+~,:;{}])\s*", r"\1", text)

    found: list[Rule] = []
    groups: list[str] = []  # the at-rules open around the current position
    position = 0
    for match in re.finditer(r"[{}]", css):
        if match.start() < position:  # inside a rule already read
            continue
        head = css[position:match.start()]
        if match.group() == "}":  # the end of an at-rule's block
            groups.pop()
        elif head.strip().startswith("@"):
            groups.append(norm(head))
        else:
            close = css.index("}", match.end())
            declarations = tuple(norm(d) for d in css[match.end():close].split(";") if d.strip())
            found.append((" ".join(groups), tuple(norm(s) for s in head.split(",")),
                          declarations))
            position = close + 1
            continue
        position = match.end()
    return found


def test_markdown_tables_are_written_in_materials_wrapper() -> None:
    text = ("| a | b |\n|---|---|\n| 1 | 2 |\n\nafter\n\n"
            "!!! note\n\n    | c |\n    |---|\n    | 3 |\n")
    html = markdown.markdown(text, extensions=["tables", "admonition", tables.makeExtension()])
    wrapped = ('<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
               '<table class="ffn-plain">')
    assert html.count(wrapped) == 2, html  # the one in the admonition too
    assert "<table>" not in html  # none left for Material's bundle to move at load
    assert html.index("</table></div></div>") < html.index("<p>after</p>")


def test_a_table_with_a_class_is_left_as_written() -> None:
    root = etree.fromstring('<div><table class="mine"><tr><td>1</td></tr></table></div>')
    tables.TableWrapTreeprocessor(markdown.Markdown()).run(root)
    assert etree.tostring(root, encoding="unicode") == (
        '<div><table class="mine"><tr><td>1</td></tr></table></div>')


def test_widget_fallback_tables_are_written_in_materials_wrapper() -> None:
    html = fallback.table("Numbers", ["n", "n squared"], [["2", "4"]])
    assert ('<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
            '<table class="ffn-plain"><caption') in html
    assert "<table>" not in html


def test_extra_css_holds_materials_table_rules_for_ffn_plain() -> None:
    material_rules = [
        (media, tuple(s.replace("table:not([class])", "table.ffn-plain") for s in selectors),
         declarations)
        for media, selectors, declarations in rules(MATERIAL_CSS.read_text("utf-8"))
        if any("table:not([class])" in s for s in selectors)]
    assert len(material_rules) >= 10, f"{MATERIAL_CSS.name}: Material's table rules not found"
    css = EXTRA_CSS.read_text("utf-8")
    assert css.count(SECTION) == 1 and css.count(NEXT_SECTION) == 1, "extra.css: sections moved"
    ours = rules(css[css.index(SECTION):css.index(NEXT_SECTION)])
    for mine, theirs in zip(ours, material_rules, strict=False):
        assert mine == theirs, f"extra.css's copy differs from {MATERIAL_CSS.name}"
    assert len(ours) == len(material_rules), (
        f"extra.css holds {len(ours)} rules for table.ffn-plain, "
        f"{MATERIAL_CSS.name} {len(material_rules)} for table:not([class])")
