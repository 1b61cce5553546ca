"""ffn_docs/notebook_css.py: what hooks/notebooks.py keeps of the CSS mkdocs-jupyter inlines.

Small hand-written CSS, one rule of the pruning each. The whole effect on the real pages (the
same pixels in both schemes, one stylesheet linked from the head) is the site tests' business.
"""

from __future__ import annotations

from ffn_docs.notebook_css import css_blocks, drop_unused_properties, prune, take_out


def test_blocks_are_split_at_the_top_level_only() -> None:
    css = '@charset "UTF-8";a{b:c}@media (x){.d{e:f}}.g::before{content:"}{"}'
    assert css_blocks(css) == [('@charset "UTF-8"', ""), ("a", "b:c"),
                               ("@media (x)", ".d{e:f}"), (".g::before", 'content:"}{"')]


def test_a_rule_stays_when_the_page_uses_every_class_it_names() -> None:
    css = ".a{x:1}.a .b{x:2}.c{x:3}div{x:4}"
    assert prune(css, {"a"}).splitlines() == [".a{x:1}", "div{x:4}"]
    assert prune(css, {"a", "b"}).splitlines() == [".a{x:1}", ".a .b{x:2}", "div{x:4}"]


def test_selectors_of_a_rule_are_kept_one_by_one() -> None:
    # A comma inside :is(...) does not split the selector.
    assert prune(".a,.b,:is(.a,.c) p{x:1}", {"a"}) == ".a{x:1}"
    assert prune(".a,.b,:is(.a,.c) p{x:1}", {"a", "c"}) == ".a,:is(.a,.c) p{x:1}"


def test_materials_classes_and_classes_inside_not_count_as_used() -> None:
    assert prune(".md-typeset .a{x:1}", {"a"}) == ".md-typeset .a{x:1}"
    assert prune(".a:not(.unused){x:1}", {"a"}) == ".a:not(.unused){x:1}"


def test_media_and_supports_are_pruned_inside_and_dropped_when_empty() -> None:
    css = "@media (max-width:1px){.a{x:1}.b{x:2}}@supports (x:y){.b{x:3}}"
    assert prune(css, {"a"}) == "@media (max-width:1px){.a{x:1}}"


def test_other_at_rules_stay_whole_but_charset_and_import_go() -> None:
    css = '@charset "UTF-8";@import url(x.css);@font-face{font-family:f}@keyframes k{0%{x:1}}'
    assert prune(css, set()).splitlines() == ["@font-face{font-family:f}",
                                              "@keyframes k{0%{x:1}}"]


def test_comments_and_empty_rules_go() -> None:
    assert prune("/* .a{x:1} */.a{ }.b{x:2}", {"a", "b"}) == ".b{x:2}"


def test_custom_properties_that_no_var_reads_are_dropped() -> None:
    css = ":root{--read:1;--unread:url(data:image/svg+xml;utf8,<svg/>);--chain:2}"
    css += ".a{x:var(--read)}"
    assert drop_unused_properties(css) == ":root{--read:1}.a{x:var(--read)}"


def test_a_property_read_only_by_a_dropped_one_goes_too() -> None:
    css = ":root{--a:var(--b);--b:1;--c:2}.x{y:var(--c)}"
    assert drop_unused_properties(css) == ":root{--c:2}.x{y:var(--c)}"


def test_take_out_removes_the_style_blocks_and_returns_what_the_page_uses() -> None:
    page = ('<div class="jp-Cell md-x">x</div><style type="text/css">.jp-Cell{a:1}.jp-Other'
            '{a:2}</style><p>y</p><style>["bad", "list repr"]</style>')
    assert take_out(page) == ('<div class="jp-Cell md-x">x</div><p>y</p>', ".jp-Cell{a:1}")
