""""Knock out a layer" in the built site (on the Lab page until docs/trained-ffn.md holds it):
every prompt and every knock-out chosen, by mouse and by keyboard, and what the page then shows
compared with the table ffn.smollm2 computed (widgets/knockout/data.py's row, percent,
token_label and change_sentence); without JavaScript and in print, the tables; axe-core on the
mounted widget in both schemes; on a phone (390 x 844, touch); screenshots to look at."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.conftest import (
    SCHEMES,
    Recorder,
    Site,
    open_widget,
    widget_mounted,
    widget_on_phone,
    widget_without_javascript,
)
from widgets.knockout import data as knockout

PAGE, NAME = "lab/", "knockout"
TABLE = knockout.load_table()
N_LAYERS = TABLE["n_layers"]
PROMPT_WORDS = {"fact": "A fact", "counting": "Counting", "code": "Code"}  # mount.js's labels


def shown(widget: Locator) -> dict[str, list[str] | str]:
    def text(name: str) -> str:
        return widget.locator(f'[data-result="{name}"]').text_content() or ""

    return {"tokens": [text(f"token{r}") for r in range(knockout.TOP)],
            "p": [text(f"p{r}") for r in range(knockout.TOP)], "change": text("change")}


def assert_shows(widget: Locator, prompt: str, kind: str, layer: int | None) -> None:
    row = knockout.row(TABLE, prompt, kind, layer)
    want = {"tokens": [knockout.token_label(t) for t in row["texts"]],
            "p": [knockout.percent(p) for p in row["p"]],
            "change": knockout.change_sentence(TABLE, prompt, kind, layer)}
    assert shown(widget) == want, (prompt, kind, layer)
    # Each bar's width is its probability of the cell's content width (at least 1 px).
    widths = widget.locator(".ffn-knockout__bar").evaluate_all("""bars => bars.map(b => {
      const td = b.parentElement, s = getComputedStyle(td);
      const inner = td.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
      return [b.getBoundingClientRect().width, inner];
    })""")
    for (bar, inner), p in zip(widths, row["p"], strict=True):
        assert abs(bar - max(p * inner, 1.0)) <= 1.0, (bar, inner, p)


    # The overview: a bar per layer and kind, its height the probability of the clean run's
    # first token with that layer zeroed (out of the row's 52 units); the chosen one marked.
    bars = widget.locator(".ffn-knockout__layer").evaluate_all(
        "rects => rects.map(r => [r.dataset.kind, Number(r.dataset.layer),"
        " Number(r.getAttribute('height')), r.classList.contains('ffn-knockout__layer--chosen')])")
    assert len(bars) == 2 * N_LAYERS
    for bar_kind, i, height, chosen in bars:
        want_p = knockout.layer_profile(TABLE, prompt, bar_kind)[i]
        assert abs(height - 52 * want_p) <= 1e-9, (bar_kind, i, height, want_p)
        assert chosen == (bar_kind == kind and i == layer)
    expect(widget.locator(".ffn-knockout__mark")).to_have_count(0 if kind == "none" else 1)
    label = widget.locator(".ffn-knockout__overview").get_attribute("aria-label") or ""
    clean = knockout.row(TABLE, prompt, "none", None)
    expect(widget.locator("[data-legend]")).to_have_text(
        f"P({knockout.token_label(clean['texts'][0])}) with each layer zeroed, by kind; the "
        "dashed line: nothing zeroed.")
    assert label.startswith(f"Bar chart of P({knockout.token_label(clean['texts'][0])}) with "
                            "each layer zeroed")


def prompt_radio(widget: Locator, prompt: str) -> Locator:
    return widget.get_by_role("radio", name=re.compile("^" + PROMPT_WORDS[prompt]))


def select(widget: Locator, kind: str) -> Locator:
    return widget.get_by_label(f"Zero the {knockout.KIND_LABELS[kind]} output of")


def test_starts_clean_on_the_fact(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    expect(prompt_radio(widget, "fact")).to_be_checked()
    assert_shows(widget, "fact", "none", None)
    assert shown(widget)["tokens"][0] == '" Paris"'


def test_every_prompt_and_knockout_by_mouse(site: Site,
                                            new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    for prompt in knockout.PROMPTS:
        prompt_radio(widget, prompt).click()
        for kind in knockout.KINDS:
            for layer in range(N_LAYERS):
                select(widget, kind).select_option(str(layer))
                assert_shows(widget, prompt, kind, layer)
            # One knock-out at a time: the other kind's select is back at "no layer".
            for other in knockout.KINDS:
                if other != kind:
                    expect(select(widget, other)).to_have_value("none")
        select(widget, "attn").select_option("none")
        assert_shows(widget, prompt, "none", None)
    # Choosing a layer of one kind clears the other's.
    select(widget, "ffn").select_option("4")
    select(widget, "attn").select_option("7")
    expect(select(widget, "ffn")).to_have_value("none")
    assert_shows(widget, "code", "attn", 7)
    # The prompt changes, the knock-out stays.
    prompt_radio(widget, "fact").click()
    assert_shows(widget, "fact", "attn", 7)


def test_by_keyboard(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    prompt_radio(widget, "fact").focus()
    page.keyboard.press("ArrowDown")  # arrows move within the radio group
    expect(prompt_radio(widget, "counting")).to_be_checked()
    assert_shows(widget, "counting", "none", None)
    page.keyboard.press("Tab")  # one stop for the group, then the FFN's select
    assert page.evaluate("document.activeElement.name") == "ffn"
    page.keyboard.press("ArrowDown")
    expect(select(widget, "ffn")).to_have_value("0")
    assert_shows(widget, "counting", "ffn", 0)
    page.keyboard.press("End")
    expect(select(widget, "ffn")).to_have_value(str(N_LAYERS - 1))
    assert_shows(widget, "counting", "ffn", N_LAYERS - 1)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == "attn"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(select(widget, "attn")).to_have_value("1")
    expect(select(widget, "ffn")).to_have_value("none")
    assert_shows(widget, "counting", "attn", 1)
    for control in widget.locator("input, select").all():
        assert control.evaluate("el => el.labels.length > 0"), control
    assert widget.locator("[aria-live='polite'] output").count() == 1


def test_without_javascript_and_in_print_the_tables(site: Site, browser: Browser) -> None:
    with widget_without_javascript(site, browser, PAGE, NAME) as root:
        tables = root.locator(".ffn-widget__fallback table")
        assert tables.count() == len(TABLE["prompts"])
        for n, e in enumerate(TABLE["prompts"]):
            rows = tables.nth(n).locator("tbody tr")
            assert rows.count() == 1 + 2 * N_LAYERS
            runs = [("none", None)] + [(k, i) for k in knockout.KINDS for i in range(N_LAYERS)]
            for m, (kind, layer) in enumerate(runs):
                cells = rows.nth(m).locator("td").all_text_contents()
                assert cells == knockout.cells(knockout.row(TABLE, e["name"], kind, layer))
    for scheme in SCHEMES:
        with widget_mounted(site, browser, PAGE, NAME, scheme) as (_, root):
            prompt_radio(root, "code").check()
            select(root, "ffn").select_option("0")
            assert_shows(root, "code", "ffn", 0)


def test_the_widgets_data_is_the_table(site: Site) -> None:
    text = (site.dir / PAGE / "index.html").read_text(encoding="utf-8")
    found = re.search(r'data-widget="knockout">.*?<script type="application/json" '
                      r'class="ffn-widget__data">(.*?)</script>', text, re.S)
    assert found
    assert json.loads(found[1]) == knockout.widget_data(TABLE)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_on_a_phone(site: Site, browser: Browser, scheme: str) -> None:
    # Issue 42: usable at 390 px by touch; widget_on_phone then checks that every result and
    # control lies on screen, each target's size, axe and the console.
    with widget_on_phone(site, browser, PAGE, NAME, scheme) as (_, widget):
        assert_shows(widget, "fact", "none", None)
        widget.locator(".ffn-knockout__prompts label").filter(
            has_text=PROMPT_WORDS["code"]).tap()
        expect(prompt_radio(widget, "code")).to_be_checked()
        select(widget, "attn").select_option("3")
        assert_shows(widget, "code", "attn", 3)
        widget.locator(".ffn-knockout__prompts label").filter(
            has_text=PROMPT_WORDS["fact"]).tap()
        assert_shows(widget, "fact", "attn", 3)
        # The overview's labels, as drawn: 11 CSS px or more (the figures' rule, issue 41).
        sizes = widget.locator(".ffn-knockout__overview text").evaluate_all(
            "ts => ts.map(t => parseFloat(getComputedStyle(t).fontSize)"
            " * t.ownerSVGElement.getScreenCTM().a)")
        assert sizes and min(sizes) >= 11, sizes
