"""The memory explorer in the built site (purpose.md): every control moved, by mouse and by
keyboard, and each string the page then shows compared with ffn's for the same token,
computed here in Python (widgets/memory/data.py's memory_numbers:
ffn.FeedForward.forward_trace of the figure's block, printed f"{v:.2f}" with a minus sign);
without JavaScript and in print, ffn's table; axe-core on the mounted widget in both schemes;
on a phone, tapped, everything on screen; screenshots to look at."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.conftest import (
    SCHEMES,
    Recorder,
    Site,
    axe,
    open_widget,
    widget_mounted,
    widget_on_phone,
    widget_without_javascript,
)
from widgets.memory import data as memory

PAGE, NAME = "purpose/", "memory"
TOKEN = memory.memory_token().tolist()


def shown(widget: Locator) -> dict[str, list[str] | str]:
    def text(name: str) -> str:
        return widget.locator(f'[data-result="{name}"]').text_content() or ""

    return {"pre": [text(f"pre{i}") for i in range(memory.D_FF)],
            "h": [text(f"h{i}") for i in range(memory.D_FF)],
            "y": [text(f"y{k}") for k in range(memory.D_MODEL)],
            "fires": text("fires")}


def assert_shows(widget: Locator, x: list[float], activation: str) -> None:
    expect(widget.locator("[data-note]")).to_be_empty()
    want = memory.memory_numbers(x, activation)
    assert shown(widget) == want, (x, activation)
    # The chart: a bar per unit and per number of y; the units that fire filled.
    fires = [i for i in range(memory.D_FF)
             if widget.locator(f'[data-fires="{i}"]').text_content() == "yes"]
    assert memory.firing_sentence(fires) == want["fires"]
    assert widget.locator(".ffn-memory__bar--fires").count() == len(fires)
    assert widget.locator(".ffn-memory__bar").count() == memory.D_FF + memory.D_MODEL
    title = widget.locator("svg[role='img'] title").text_content() or ""
    assert title.endswith(str(want["fires"]))


def sliders(widget: Locator) -> list[Locator]:
    return [widget.get_by_label(f"x{j}", exact=True) for j in range(memory.D_MODEL)]


def typed(widget: Locator) -> list[Locator]:
    return [widget.get_by_label(f"x{j}, typed", exact=True) for j in range(memory.D_MODEL)]


def test_starts_at_the_figures_token(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    assert_shows(widget, TOKEN, "relu")
    assert shown(widget)["fires"] == "units 2, 3, 4 and 5 fire"
    # The typed fields hold the token itself, not a rounding of it.
    assert [float(f.input_value()) for f in typed(widget)] == TOKEN


def test_every_control(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    x, activation = list(TOKEN), "relu"
    for j, (slider, field) in enumerate(zip(sliders(widget), typed(widget), strict=True)):
        # Keyboard: the slider's keys, each position compared with ffn.
        slider.focus()
        for key in ("ArrowRight", "ArrowLeft", "ArrowLeft", "Home", "ArrowRight", "End",
                    "PageDown", "ArrowUp"):
            page.keyboard.press(key)
            x[j] = float(slider.input_value())
            assert field.input_value() == slider.input_value()
            assert_shows(widget, x, activation)
        assert float(slider.input_value()) != TOKEN[j]
        # Mouse: a click a third of the way along the slider.
        box = slider.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + box["width"] / 3, box["y"] + box["height"] / 2)
        x[j] = float(slider.input_value())
        assert -4 < x[j] < 0
        assert_shows(widget, x, activation)
        # Typed: beyond the slider's range too.
        for value in ("-0.5", "3.25", "-9.99", "0", "7.5"):
            field.fill(value)
            x[j] = float(value)
            assert_shows(widget, x, activation)
        # Both activations, by mouse and by keyboard (arrow keys move within the radio group).
        widget.get_by_role("radio", name="GELU, exact").click()
        activation = "gelu"
        assert_shows(widget, x, activation)
        widget.get_by_role("radio", name="GELU, exact").focus()
        page.keyboard.press("ArrowUp")
        activation = "relu"
        expect(widget.get_by_role("radio", name="ReLU")).to_be_checked()
        assert_shows(widget, x, activation)
    # Back to the figure's token, by keyboard; the activation stays.
    widget.get_by_role("radio", name="GELU, exact").check()
    activation = "gelu"
    widget.get_by_role("button", name="Back to the figure's token").focus()
    page.keyboard.press("Enter")
    assert_shows(widget, TOKEN, activation)
    assert [float(f.input_value()) for f in typed(widget)] == TOKEN


def test_bad_input_is_named(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    note, field = widget.locator("[data-note]"), typed(widget)[1]
    for value, message in (("", "x1 needs a number from \N{MINUS SIGN}10 to 10."),
                           ("12", "x1 needs a number from \N{MINUS SIGN}10 to 10, not 12."),
                           ("-10.5", "not \N{MINUS SIGN}10.5.")):
        field.fill(value)
        expect(note).to_contain_text(message)
        assert set(shown(widget)["h"]) == {""} and shown(widget)["fires"] == ""
        assert "NaN" not in (widget.text_content() or "")
        expect(widget.locator(".ffn-memory__summary")).to_be_hidden()
        expect(widget.locator(".ffn-memory__chart")).to_be_hidden()
        assert widget.locator(".ffn-memory__fires").count() == 0
    field.fill("1.5")
    assert_shows(widget, [TOKEN[0], 1.5, TOKEN[2]], "relu")


def test_reached_by_keyboard_and_labelled(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, NAME)
    sliders(widget)[0].focus()
    order = []
    for _ in range(8):
        order.append(page.evaluate("document.activeElement.name || document.activeElement.type"))
        page.keyboard.press("Tab")
    assert order[:6] == ["x0", "x0Number", "x1", "x1Number", "x2", "x2Number"]
    assert order[7] == "button"  # one stop for the radio group, then the reset button
    for control in widget.locator("input").all():
        assert control.evaluate("el => el.labels.length > 0"), control
    assert widget.locator("[aria-live='polite'] output").count() == 1  # which units fire
    assert widget.locator("svg[role='img'] title").count() == 1


def test_without_javascript_and_in_print_the_table(site: Site, browser: Browser) -> None:
    with widget_without_javascript(site, browser, PAGE, NAME) as root:
        rows = root.locator("tbody tr")
        tokens = memory.table_tokens()
        assert rows.count() == len(tokens) * len(memory.ACTIVATIONS)
        for n, (_, x) in enumerate(tokens):
            for m, activation in enumerate(memory.ACTIVATIONS):
                cells = rows.nth(n * len(memory.ACTIVATIONS) + m).locator("td")
                want = memory.memory_numbers(x, activation)
                trace = memory.memory_block(activation).forward_trace(np.asarray(x))
                units = ", ".join(str(i) for i in np.flatnonzero(trace.h_pre > 0)) or "none"
                texts = cells.all_text_contents()
                assert texts[1:1 + memory.D_FF] == want["h"]
                assert texts[1 + memory.D_FF] == ", ".join(want["y"])
                assert texts[-1] == units
        assert "(2.04, \N{MINUS SIGN}2.56, 0.42)" in (root.text_content() or "")
    for scheme in SCHEMES:
        with widget_mounted(site, browser, PAGE, NAME, scheme) as (page, root):
            expect(root.locator(".ffn-memory__bar")).to_have_count(memory.D_FF + memory.D_MODEL)
            # axe with GELU's outlined bars below zero; with ReLU's after this block
            root.get_by_role("radio", name="GELU, exact").check()
            assert axe(page) == [], scheme
            root.get_by_role("radio", name="ReLU").check()


@pytest.mark.parametrize("activation", list(memory.ACTIVATIONS))
def test_the_widgets_data_is_ffns_block(site: Site, activation: str) -> None:
    # The JSON the page carries is the figure's block and token, to the last bit.
    text = (site.dir / "purpose" / "index.html").read_text(encoding="utf-8")
    found = re.search(r'data-widget="memory">.*?<script type="application/json" '
                      r'class="ffn-widget__data">(.*?)</script>', text, re.S)
    assert found
    data = json.loads(found[1])
    block = memory.memory_block(activation)
    for name in ("W1", "b1", "W2", "b2"):
        assert np.array_equal(np.asarray(data[name]), getattr(block, name)), name
    assert data["token"] == TOKEN


def test_on_a_phone(site: Site, browser: Browser) -> None:
    # Issue 41: every widget usable at 390 px by touch. widget_on_phone then checks that every
    # result lies on screen and each target's size.
    for scheme in SCHEMES:
        with widget_on_phone(site, browser, PAGE, NAME, scheme) as (_, widget):
            assert_shows(widget, TOKEN, "relu")
            labels = widget.locator(".ffn-memory__activation label")  # a finger taps these
            labels.get_by_text("GELU, exact", exact=True).tap()
            expect(widget.get_by_role("radio", name="GELU, exact")).to_be_checked()
            assert_shows(widget, TOKEN, "gelu")
            # The typed fields by tap and keys (a tap on a slider's track does not move it in
            # Chromium's touch emulation; test_every_control clicks and keys the sliders, and
            # widget_on_phone checks that each is 44 px high).
            x = list(TOKEN)
            for j, (field, value) in enumerate(zip(typed(widget), (-1.5, 2.5, 0.75),
                                                   strict=True)):
                field.tap()
                field.fill(str(value))
                x[j] = value
                assert_shows(widget, x, "gelu")
            widget.get_by_role("button", name="Back to the figure's token").tap()
            assert_shows(widget, TOKEN, "gelu")
            labels.get_by_text("ReLU", exact=True).tap()
            assert_shows(widget, TOKEN, "relu")
