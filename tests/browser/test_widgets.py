"""The FFN lab's widgets in the built site: every control moved (by mouse and by keyboard), and
what the page then shows compared with ffn's numbers for the same input, printed as the
chapters print them (widgets/sizer/data.py, widgets/activations/data.py); without JavaScript
and in print, ffn's table. A widget mounts when it nears the screen (widgets/_shared/loader.js),
so each test scrolls to it first, and axe-core runs here on the mounted widgets in both schemes
(test_pages.py's visits, which do not scroll, check the pages with their tables)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

import ffn
from ffn.inference import Size
from ffn.models import ModelDims
from scripts.figures.palette import ACTIVATION_COLORS, THEMES
from tests.browser.conftest import (
    SCHEMES,
    SCREENSHOT_DIR,
    Recorder,
    Site,
    Visit,
    axe,
    open_widget,
    widget_mounted,
    widget_without_javascript,
)
from widgets.activations import data as activations
from widgets.sizer import data as sizer

SIZER_PAGE, ACTIVATIONS_PAGE = "parameters-flops/", "gelu/"
SIZER_RESULTS = ("dFf", "perLayer", "perLayerActive", "share", "total", "totalActive",
                 "flops", "flopsTraining", "bytes", "gigabytes")
DOCS = Path(__file__).resolve().parents[2] / "docs"


def shown_sizer(widget: Locator) -> dict[str, str]:
    shown = {}
    for name in SIZER_RESULTS:
        output = widget.locator(f'[data-result="{"dFfShown" if name == "dFf" else name}"]')
        row_hidden = output.evaluate("el => el.closest('.ffn-result').hidden")
        shown[name] = "" if row_hidden else (output.text_content() or "")
    return shown


def shown_parts(widget: Locator) -> dict[str, str] | None:
    """The breakdown as the page shows it (None: no table shown), in breakdown_numbers' keys;
    a hidden row is a part ffn counts 0 (the one-token row: "" without experts)."""
    if widget.locator(".ffn-sizer__parts table").is_hidden():
        return None
    shown = {"total": widget.locator('[data-part-count="total"]').text_content() or "",
             "active": "", "activeShare": ""}
    for row in widget.locator(".ffn-sizer__parts tr[data-part]").all():
        key = row.get_attribute("data-part") or ""
        hidden = row.is_hidden()
        count = row.locator(f'[data-part-count="{key}"]').text_content() or ""
        share = row.locator(f'[data-part-share="{key}"]').text_content() or ""
        if key == "active":
            shown["active"], shown["activeShare"] = ("", "") if hidden else (count, share)
        else:
            assert hidden == (count == "0"), (key, count)
            shown[key], shown[key + "Share"] = count, share
    return shown


def assert_sizer_shows(widget: Locator, model: ModelDims,
                       bytes_per_weight: Size = sizer.BYTES_PER_WEIGHT,
                       expert_bytes: Size | None = None) -> None:
    """The sizer shows ffn's numbers for `model`; its experts priced at `expert_bytes`, or
    (None) at the format the preset records for them, which picking it selects."""
    if expert_bytes is None and model.moe is not None:
        expert_bytes = model.moe.expert_format
    expect(widget.locator("[data-note]")).not_to_contain_text("Not a model")
    assert shown_sizer(widget) == sizer.sizer_numbers(model, bytes_per_weight,
                                                      expert_bytes), model
    assert shown_parts(widget) == sizer.breakdown_numbers(model), model


def with_rule(model: ModelDims, **change: object) -> ModelDims:
    """``model`` with its LLaMA width rule's arguments changed (``LlamaWidth``'s fields)."""
    assert isinstance(model.d_ff, ffn.LlamaWidth)
    return dataclasses.replace(model, d_ff=dataclasses.replace(model.d_ff, **change))


def with_experts(model: ModelDims, **change: object) -> ModelDims:
    """``model`` with its MoE part's fields changed (``MoEDims``'; it has one)."""
    assert model.moe is not None
    return dataclasses.replace(model, moe=dataclasses.replace(model.moe, **change))


def test_sizer_presets_are_ffns_models(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    select = widget.get_by_label("Model", exact=True)
    names = select.locator("option").all_text_contents()
    assert names == [m.name for m in sizer.PRESETS]
    for name in names:
        select.select_option(label=name)
        assert_sizer_shows(widget, ffn.get_model(name))


def test_presets_show_the_chapters_numbers() -> None:
    # The chapter's table of ffn.MODELS, as the page prints it, holds the sizer's strings.
    chapter = (DOCS / "parameters-flops.md").read_text(encoding="utf-8")
    for m in ffn.MODELS:
        n = sizer.sizer_numbers(m)
        assert f"| {m.name} | {n['dFf']} | {n['perLayer']} | {n['total']} |" in chapter
        assert f"| {m.name} | {n['flops']} | {n['flopsTraining']} |" in chapter
        assert f"| {n['share']} |" in chapter


def test_sizer_every_control(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    widget.get_by_label("Model", exact=True).select_option(label="GPT-2 small")
    model = ffn.get_model("GPT-2 small")
    replace = dataclasses.replace
    steps: list[tuple[str, object, Callable[[ModelDims], ModelDims]]] = [
        ("d_model", "1000", lambda m: replace(m, d_model=1000)),
        ("Layers", "7", lambda m: replace(m, n_layers=7)),
        ("d_ff", "5000", lambda m: replace(m, d_ff=5000)),
        ("Gated (three matrices, SwiGLU)", True, lambda m: replace(m, gated=True)),
        ("Biases", False, lambda m: replace(m, bias=False)),
        ("LLaMA's rule", True, lambda m: replace(m, d_ff=ffn.LlamaWidth())),
        ("Multiplier (empty: none)", "1.3", lambda m: with_rule(m, ffn_dim_multiplier=1.3)),
        ("multiple_of", "1024", lambda m: with_rule(m, multiple_of=1024)),
        ("Experts (1: one FFN, no router)", "16", lambda m: replace(m, moe=ffn.MoEDims(16, 1))),
        ("Experts per token (top-k)", "4", lambda m: with_experts(m, top_k=4)),
    ]
    for label, value, change in steps:
        # Exact labels ("d_ff" is also in "d_ff as given"), but for the rule's long one.
        control = widget.get_by_label(label, exact=not label.startswith("LLaMA"))
        if isinstance(value, bool):
            control.set_checked(value)
        else:
            control.fill(value)
        model = change(model)
        assert_sizer_shows(widget, model)
    for fmt in sizer.FORMATS:
        widget.get_by_label("Bytes per weight").select_option(fmt)
        assert_sizer_shows(widget, model, fmt)
    # By keyboard: arrow keys step a number field.
    widget.get_by_label("d_model", exact=True).focus()
    page.keyboard.press("ArrowUp")
    model = dataclasses.replace(model, d_model=1001)
    assert_sizer_shows(widget, model, fmt)
    # Dimensions ffn refuses: named, and no numbers.
    widget.get_by_label("Experts per token (top-k)", exact=True).fill("17")
    expect(widget.locator("[data-note]")).to_contain_text("top_k must be at most n_experts = 16")
    assert set(shown_sizer(widget).values()) == {""}
    with pytest.raises(ValueError, match="top_k"):
        with_experts(model, top_k=17)


def test_sizer_weight_formats(site: Site, new_page: tuple[Page, Recorder]) -> None:
    # Issue 35: every format of ffn.decode_bytes, 4-bit ones included, for the 2025 presets
    # (gpt-oss ships its experts in MXFP4), by mouse and by keyboard; the options' texts are
    # data.py's, from ffn's exact sizes.
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    formats = widget.get_by_label("Bytes per weight")
    assert formats.locator("option").all_text_contents() == [
        sizer.format_label(f) for f in sizer.FORMATS]
    assert formats.input_value() == sizer.BYTES_PER_WEIGHT
    assert "4.25 bits (17 bytes per 32 weights" in sizer.format_label("mxfp4")
    for name in ("gpt-oss-120b", "Qwen3-Next-80B-A3B", "Llama 4 Maverick", "GPT-2 small"):
        widget.get_by_label("Model", exact=True).select_option(label=name)
        for fmt in sizer.FORMATS:
            formats.select_option(fmt)
            assert_sizer_shows(widget, ffn.get_model(name), fmt)
    # DeepSeek-V4-Flash as released: FP8 weights, the routed experts in 4 bits (issue 44)
    widget.get_by_label("Model", exact=True).select_option(label="DeepSeek-V4-Flash")
    experts = widget.get_by_label("Format of the routed experts' weights")
    assert experts.input_value() == "mxfp4"  # as released: picking the preset selects it
    formats.select_option("e4m3")
    for fmt in ("mxfp4", "nvfp4", "e4m3"):
        experts.select_option(fmt)
        assert_sizer_shows(widget, ffn.get_model("DeepSeek-V4-Flash"), "e4m3", fmt)
    experts.select_option("")  # as the other weights
    assert_sizer_shows(widget, ffn.get_model("DeepSeek-V4-Flash"), "e4m3", "e4m3")
    widget.get_by_label("Model", exact=True).select_option(label="GPT-2 small")  # as before
    formats.select_option(sizer.FORMATS[0])
    formats.focus()
    for fmt in sizer.FORMATS[1:]:  # arrow keys walk the options in ffn's order
        page.keyboard.press("ArrowDown")
        assert formats.input_value() == fmt
        assert_sizer_shows(widget, ffn.get_model("GPT-2 small"), fmt)


def test_sizer_reached_and_used_by_keyboard(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    select = widget.get_by_label("Model", exact=True)
    select.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "dModel"
    select.focus()
    page.keyboard.press("ArrowDown")  # the next preset
    assert_sizer_shows(widget, sizer.PRESETS[1])
    for control in widget.locator("input, select").all():
        assert control.evaluate("el => el.labels.length > 0"), control
    assert widget.locator("[aria-live='polite'] output").count() >= 8


def x_shown(widget: Locator) -> dict[str, str]:
    names = [*activations.ACTIVATION_NAMES,
             *(n + "Grad" for n in activations.ACTIVATION_NAMES),
             *(n + "Gate" for n in activations.ACTIVATION_NAMES), "gap"]
    return {n: widget.locator(f'[data-result="{n}"]').text_content() or "" for n in names}


def test_activation_explorer(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + ACTIVATIONS_PAGE, "activations")
    slider, number = widget.get_by_label("x", exact=True), widget.get_by_label("x, typed")
    assert x_shown(widget) == activations.activation_numbers(1.0)
    slider.focus()
    for key, x in [("ArrowLeft", 0.99), ("Home", -4.0), ("ArrowRight", -3.99), ("End", 4.0),
                   ("PageDown", None)]:
        page.keyboard.press(key)
        value = float(slider.input_value())
        if x is not None:
            assert value == x
        assert number.input_value() == slider.input_value()
        assert x_shown(widget) == activations.activation_numbers(value), key
    for step in range(-400, 401, 37):  # across the slider's range
        slider.fill(f"{step / 100:g}")
        assert x_shown(widget) == activations.activation_numbers(float(slider.input_value()))
    for typed in ("-0.75", "2.5", "-7.25", "0", "8"):  # the number field goes beyond it
        number.fill(typed)
        assert x_shown(widget) == activations.activation_numbers(float(typed)), typed
    note = widget.locator("[data-note]")
    expect(note).to_be_empty()
    for typed in ("", "9", "-1e3"):  # refused, said so; the last x stays shown
        number.fill(typed)
        expect(note).to_have_text("Type a number for x from \N{MINUS SIGN}8 to 8; the values "
                                  "shown are for x = 8.")
        assert x_shown(widget) == activations.activation_numbers(8.0), typed
    number.fill("0.5")
    expect(note).to_be_empty()
    assert widget.locator("svg[role='img'] title").count() == 2  # the curves and the gates
    assert widget.locator("path.ffn-curve").count() == 2 * len(activations.ACTIVATION_NAMES)
    # d3's axes: ticks at the integers (the gates: at 0.5 and 1), and the markers where
    # x = 0.5 falls between 0 and 1
    ticks = {name: [t for t in widget.locator(f"svg[data-plot='{name}'] .tick text")
                    .all_text_contents() if t] for name in ("curves", "gates")}
    x_ticks = ["\N{MINUS SIGN}4", "\N{MINUS SIGN}3", "\N{MINUS SIGN}2", "\N{MINUS SIGN}1",
               "0", "1", "2", "3", "4"]
    assert ticks == {"curves": [*x_ticks, "\N{MINUS SIGN}1", "1", "2", "3", "4"],
                     "gates": [*x_ticks, "0.5", "1"]}
    offset = page.evaluate("window.devicePixelRatio > 1 ? 0 : 0.5")  # d3's axis.offset():
    for name in ("curves", "gates"):  # ticks on whole pixels
        plot = widget.locator(f"svg[data-plot='{name}']")
        marker = float(plot.locator(".ffn-plot__marker").get_attribute("x1") or "nan")
        at = dict(plot.locator(".ffn-plot__axes").first.locator(".tick").evaluate_all(
            "ticks => ticks.map(t => [t.textContent, t.transform.baseVal[0].matrix.e])"))
        assert marker + offset == pytest.approx((at["0"] + at["1"]) / 2), name
    # each gate named as ffn.activations.gate computes it, each curve in the figures' colour
    for name, gate_name in activations.GATE_NAMES.items():
        expect(widget.locator(f'[data-gate-name="{name}"]')).to_have_text(f"gate {gate_name}")
    assert_curve_colours(widget, "light")


@pytest.mark.parametrize("url, widget", [(SIZER_PAGE, "sizer"), (ACTIVATIONS_PAGE, "activations")])
def test_without_javascript_and_in_print_the_table(site: Site, browser: Browser, url: str,
                                                  widget: str) -> None:
    with widget_without_javascript(site, browser, url, widget) as root:
        # each table's scroller: in the tab order, named by its caption (no script runs here)
        for scroller in root.locator(".ffn-widget__fallback .ffn-table").all():
            caption = scroller.locator("caption").text_content() or ""
            expect(scroller).to_have_attribute("tabindex", "0")
            expect(scroller).to_have_accessible_name(caption.strip())
        text = root.text_content() or ""
        tables = root.locator(".ffn-widget__fallback table")
        # the sizer: the FFN's numbers, then the parts; the explorer: the curves, their
        # derivatives, then the gates (three narrow tables that fit a laptop's column)
        assert tables.count() == (2 if widget == "sizer" else 3)
        for table in tables.all():
            expect(table).to_be_visible()
        if widget == "sizer":
            for m in sizer.PRESETS:
                n = sizer.sizer_numbers(m)
                assert all(n[k] in text for k in ("perLayer", "share", "total", "flops"))
                assert sizer.sizer_numbers(m, "mxfp4")["gigabytes"] in text
                row = root.locator(".ffn-widget__fallback table").nth(1).locator("tr").filter(
                    has=root.page.get_by_role("rowheader", name=m.name, exact=True))
                assert row.locator("td").all_text_contents() == sizer.grouped_shares(m)
        else:
            names = list(activations.ACTIVATION_NAMES)
            for x in activations.ACTIVATION_XS:
                n = activations.activation_numbers(x)
                expected = ([n[k] for k in names] + [n["gap"]], [n[k + "Grad"] for k in names],
                            [n[k + "Gate"] for k in names])
                for i, cells in enumerate(expected):
                    row = tables.nth(i).locator("tr").filter(
                        has=root.page.get_by_role("rowheader", name=f"{x:g}", exact=True))
                    assert row.locator("td").all_text_contents() == cells, (i, x)
    for scheme in SCHEMES:
        with widget_mounted(site, browser, url, widget, scheme):
            pass  # the checks every widget gets (axe, console, screenshot, print)


def test_print_page_keeps_the_tables(site: Site) -> None:
    # Every widget placed in a page keeps its table on the print page; the exercises' answer
    # boxes have none (a note for readers without JavaScript, hidden there and on paper:
    # test_widget_answers.py).
    text = (site.dir / "print" / "index.html").read_text(encoding="utf-8")
    placed = [name for page in DOCS.glob("*.md") for name in re.findall(
        r'<div class="ffn-widget" data-widget="([\w-]+)"', page.read_text(encoding="utf-8"))]
    tables = [name for name in placed if not name.startswith("answers-")]
    assert len(tables) >= 2
    assert text.count('<div class="ffn-widget__fallback"><div class="ffn-table') == len(tables)
    assert text.count('class="ffn-widget__fallback ffn-answers__note"') == (
        len(placed) - len(tables))
    assert "loader.js" not in text  # the print page never mounts the controls


def assert_curve_colours(widget: Locator, scheme: str) -> None:
    """Every curve, dot and swatch of the explorer in its figure colour in ``scheme``
    (scripts/figures/palette.py, which the figures are drawn with)."""
    theme = THEMES[SCHEMES.index(scheme)]
    for name, index in ACTIVATION_COLORS.items():
        want = rgb(theme.colors[index])
        for selector, prop in ((f"path.ffn-curve--{name}", "stroke"),
                               (f".ffn-swatch.ffn-curve--{name}", "borderTopColor")):
            got = widget.locator(selector).evaluate_all(
                f"els => els.map(el => getComputedStyle(el).{prop})")
            assert got and set(got) == {want}, (scheme, name, selector, got)


def rgb(color: str) -> str:
    """A "#rrggbb" colour as getComputedStyle writes it."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def refused_with_no_numbers(widget: Locator, words: str) -> None:
    expect(widget.locator("[data-note]")).to_contain_text("Not a model ffn would count")
    expect(widget.locator("[data-note]")).to_contain_text(words)
    assert set(shown_sizer(widget).values()) == {""}
    assert shown_parts(widget) is None
    assert set(widget.locator(".ffn-sizer__parts output").all_text_contents()) <= {""}


def test_sizer_never_keeps_numbers_of_other_inputs(site: Site,
                                                   new_page: tuple[Page, Recorder]) -> None:
    # Issue 30: a refusal (here the rule's multiplier of 1e307, a 400-digit d_model, 0 experts)
    # clears every number before it is named; ffn refuses the same dimensions by the same name.
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    widget.get_by_label("Model", exact=True).select_option(label="LLaMA-3-8B")
    llama = ffn.get_model("LLaMA-3-8B")
    assert_sizer_shows(widget, llama)
    multiplier = widget.get_by_label("Multiplier (empty: none)", exact=True)
    multiplier.fill("1e307")
    refused_with_no_numbers(widget, "ffn_dim_multiplier 1e+307 times 10922 hidden units")
    with pytest.raises(ValueError, match="ffn_dim_multiplier"):
        with_rule(llama, ffn_dim_multiplier=1e307)
    multiplier.fill("1.3")
    assert_sizer_shows(widget, llama)
    for typed in ("1e400", "1.3e", "-"):  # text a number field cannot read: its value is ""
        multiplier.fill("")
        multiplier.press_sequentially(typed)
        refused_with_no_numbers(widget, "ffn_dim_multiplier must be a number")
    multiplier.fill("1.3")
    assert_sizer_shows(widget, llama)
    d_model = widget.get_by_label("d_model", exact=True)
    d_ff = widget.get_by_label("d_ff", exact=True)  # disabled under the rule: shows its width
    assert d_ff.input_value() == str(llama.resolved_d_ff)
    d_model.fill("768")
    assert d_ff.input_value() == str(dataclasses.replace(llama, d_model=768).resolved_d_ff)
    d_model.fill("-768")
    refused_with_no_numbers(widget, "d_model")
    assert d_ff.input_value() == ""
    d_model.fill("1" + "0" * 400)  # a number field holds no value beyond the doubles
    refused_with_no_numbers(widget, "d_model must be a whole number, got text a number field "
                            "cannot read (it holds numbers up to 1.8e308)")
    d_model.fill("4096")
    assert_sizer_shows(widget, llama)
    experts = widget.get_by_label("Experts (1: one FFN, no router)", exact=True)
    experts.fill("0")
    refused_with_no_numbers(widget, "n_experts must be positive, got 0")
    with pytest.raises(ValueError, match="n_experts"):
        ffn.MoEDims(0, 1)
    for typed in ("", "2.5", "-3"):
        experts.fill(typed)
        refused_with_no_numbers(widget, "n_experts")
    experts.fill("1")
    assert_sizer_shows(widget, llama)


def test_sizer_reads_exponents_and_prints_every_digit(site: Site,
                                                     new_page: tuple[Page, Recorder]) -> None:
    # Issue 30: "1e3" in a number field is 1000, as ffn takes it; counts and bytes from 1e21
    # up print every digit, as ffn's f"{n:,}" and f"{x:,.0f}" do (the strings: ffn's).
    page, _ = new_page
    widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
    widget.get_by_label("Model", exact=True).select_option(label="GPT-2 small")
    d_model = widget.get_by_label("d_model", exact=True)
    d_model.fill("1e3")
    assert_sizer_shows(widget, dataclasses.replace(ffn.get_model("GPT-2 small"), d_model=1000))
    widget.get_by_label("Model", exact=True).select_option(label="Mixtral 8x7B")
    for typed, value in [("1e15", 10**15), ("2.5e17", 25 * 10**16), ("123456789012345678901",
                                                                       123456789012345678901)]:
        d_model.fill(typed)
        model = dataclasses.replace(ffn.get_model("Mixtral 8x7B"), d_model=value)
        assert ffn.decode_bytes(model) >= 1e21  # a float: exponent form in toFixed
        assert_sizer_shows(widget, model)
        assert "e+" not in "".join(shown_sizer(widget).values())
    # Issue 39: a 100-digit d_model, which ffn takes (it was refused past 80 characters)
    d_model.fill("7" * 100)
    assert_sizer_shows(widget, dataclasses.replace(ffn.get_model("Mixtral 8x7B"),
                                                   d_model=int("7" * 100)))


# ---- on a phone (issue 41): 390 x 844, touch; every result on the screen, controls to tap

PHONE = {"width": 390, "height": 844}
TARGET = 44  # CSS px: WCAG 2.2's enhanced target size (2.5.5); checkboxes: 24 in a 44 px row

INSIDE_JS = """
(root, width) => [...root.querySelectorAll("*")].filter(el => {
  const r = el.getBoundingClientRect();
  return r.width > 0 && el.checkVisibility() && (r.left < -0.5 || r.right > width + 0.5);
}).map(el => `${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""} `
              + `${(el.textContent ?? "").trim().slice(0, 30)}`)
"""
# The boxes in the widget that scroll sideways (the visually hidden labels, 1 px wide, aside).
SCROLLERS_JS = """
root => [...root.querySelectorAll("*")].filter(
  el => el.checkVisibility() && el.clientWidth > 1 && el.scrollWidth > el.clientWidth + 1
    && getComputedStyle(el).overflowX !== "visible"
).map(el => `${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""}`)
"""


def assert_fits_the_phone(page: Page, widget: Locator) -> None:
    """Nothing of the widget lies beyond the screen's sides, and nothing in it scrolls
    sideways: every result is read without sideways scrolling."""
    assert widget.evaluate(INSIDE_JS, PHONE["width"]) == []
    assert widget.evaluate(SCROLLERS_JS) == []
    assert page.evaluate("innerWidth") >= PHONE["width"]


def assert_touch_sized(widget: Locator) -> None:
    for control in widget.locator("input, select").all():
        box = control.bounding_box()
        assert box is not None
        kind = control.get_attribute("type") or "select"
        if kind in ("checkbox", "radio"):
            row = control.locator("xpath=..").bounding_box()
            assert row is not None
            assert min(box["width"], box["height"]) >= 24 and row["height"] >= TARGET, kind
        else:
            assert min(box["width"], box["height"]) >= TARGET, (kind, box)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_widgets_on_a_phone(site: Site, browser: Browser, scheme: str) -> None:
    context = browser.new_context(viewport=PHONE, color_scheme=scheme, has_touch=True,
                                  is_mobile=True, base_url=site.base_url)
    recorder = Recorder(context, site.base_url)
    page = recorder.attach(context.new_page())
    record = recorder.visit = Visit("(phone)", scheme)
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        # The explorer: the slider moved with a keyboard's Home key (a tap on its track lands
        # where it was measured, and in one run the page moved under it: the thumb stayed),
        # the field tapped and typed; values, gates, colours.
        widget = open_widget(page, site.base_url + ACTIVATIONS_PAGE, "activations")
        assert_touch_sized(widget)
        slider, number = widget.get_by_label("x", exact=True), widget.get_by_label("x, typed")
        slider.scroll_into_view_if_needed()
        slider.focus()
        page.keyboard.press("Home")
        x = float(slider.input_value())
        assert x == float(slider.get_attribute("min") or "nan") < 0
        assert x_shown(widget) == activations.activation_numbers(x)
        number.tap()
        number.fill("-0.75")
        assert x_shown(widget) == activations.activation_numbers(-0.75)
        assert_fits_the_phone(page, widget)
        assert_curve_colours(widget, scheme)
        assert axe(page) == [], ("activations", scheme)
        widget.screenshot(path=SCREENSHOT_DIR / f"widget-activations-390-{scheme}.png")

        # The sizer: a mixture of experts picked, a box ticked by tapping its label, a count
        # typed; its numbers and its breakdown are ffn's, on the screen.
        widget = open_widget(page, site.base_url + SIZER_PAGE, "sizer")
        assert_touch_sized(widget)
        widget.get_by_label("Model", exact=True).select_option(label="Qwen3-Next-80B-A3B")
        model = ffn.get_model("Qwen3-Next-80B-A3B")
        assert_sizer_shows(widget, model)
        widget.locator("label", has_text="Biases").tap()
        model = dataclasses.replace(model, bias=True)
        assert_sizer_shows(widget, model)
        top_k = widget.get_by_label("Experts per token (top-k)", exact=True)
        top_k.tap()
        top_k.fill("64")
        model = with_experts(model, top_k=64)
        assert_sizer_shows(widget, model)
        for part in ("expertsActive", "expertsIdle", "active"):
            expect(widget.locator(f'tr[data-part="{part}"]')).to_be_visible()
        assert_fits_the_phone(page, widget)
        assert axe(page) == [], ("sizer", scheme)
        widget.screenshot(path=SCREENSHOT_DIR / f"widget-sizer-390-{scheme}.png")
    finally:
        context.close()
    assert record.console_errors == [] and record.failed_requests == []
