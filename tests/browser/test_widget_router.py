"""The router explorer (docs/moe-models.md) in the built site: every control moved (mouse and
keyboard) and what the page then shows compared with ffn's route for the same input, printed
as widgets/router/data.py prints it (ffn's numbers, not the JavaScript's); bad input named;
without JavaScript and in print, ffn's table; axe-core on the mounted widget in both
schemes; on a phone, tapped, with every result on screen; screenshots."""

from __future__ import annotations

from typing import Any

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
from widgets.router import data as router

PAGE = "moe-models/"
N = router.N_EXPERTS


def shown(widget: Locator) -> dict[str, Any]:
    """What the widget shows, in router_numbers' shape."""
    def column(name: str) -> list[str]:
        return [widget.locator(f'[data-result="{name}-{i}"]').text_content() or ""
                for i in range(N)]

    rank = column("rank")
    order = sorted((r for r in rank if r not in (router.DASH, "")), key=lambda r: int(r[:-2]))
    return {"scores": column("score"), "choice": column("choice"), "rank": rank,
            "weight": column("weight"),
            "chosen": [str(rank.index(r)) for r in order],
            "summary": widget.locator('[data-result="summary"]').text_content(),
            "change": widget.locator('[data-result="change"]').text_content()}


def expect_ffn(widget: Locator, logits: list[float], top_k: int, score: str,
               bias: list[float], normalize: bool = True) -> None:
    expect(widget.locator("[data-note]")).to_have_text("")
    want = router.router_numbers(logits, top_k, score, bias, normalize)
    assert shown(widget) == want, (logits, top_k, score, bias)
    # The chart: a bar per expert, the chosen ones marked and labelled with their weights.
    assert widget.locator("rect.ffn-router__bar").count() == N
    marked = widget.locator("rect.ffn-router__bar--chosen")
    assert marked.count() == top_k
    labels = widget.locator("text.ffn-router__weight").all_text_contents()
    assert labels == [f"w={want['weight'][int(e)]}" for e in want["chosen"]]
    assert widget.locator("line.ffn-router__mark").count() == sum(b != 0 for b in bias)


def test_router_presets(site: Site, new_page: tuple[Page, Recorder]) -> None:
    # Issue 34: "Routing of" sets the controls as each model routes (data.py's ROUTINGS) and
    # says what the widget cannot show; the page then shows ffn's route of those settings.
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, "router")
    tokens = router.example_logits()
    preset = widget.get_by_label("Routing of", exact=True)
    note = widget.locator("[data-preset-note]")
    top, score = (widget.get_by_label(label, exact=True)
                  for label in ("Experts per token (top-k)", "Score"))
    renormalise = widget.get_by_label("Renormalise the chosen weights to sum to 1")
    assert preset.locator("option").all_text_contents()[1:] == [r.name for r in router.ROUTINGS]
    expect(note).to_have_text("")
    expect(renormalise).to_be_checked()

    def shows(routing: router.Routing, token: int) -> None:
        expect(note).to_have_text(routing.note())
        assert top.input_value() == str(routing.top_k)
        assert score.input_value() == routing.score
        assert renormalise.is_checked() == routing.normalize
        bias = router.preset_bias(routing)
        for i in range(N):
            field = widget.get_by_label(f"Bias of expert {i}", exact=True)
            assert float(field.input_value()) == bias[i]
        expect_ffn(widget, list(tokens[token]), routing.top_k, routing.score, bias,
                   routing.normalize)

    for i, routing in enumerate(router.ROUTINGS):  # by mouse, on the opening token
        preset.select_option(str(i))
        shows(routing, router.TOKEN)
    widget.get_by_label("Token", exact=True).select_option("0")  # a token keeps the preset
    shows(router.ROUTINGS[-1], 0)
    preset.select_option("0")
    preset.focus()
    for i, routing in enumerate(router.ROUTINGS[1:], start=1):  # by keyboard
        page.keyboard.press("ArrowDown")
        assert preset.input_value() == str(i)
        shows(routing, 0)
    # Settings of one's own: any routing control changed by hand leaves the preset.
    mixtral = router.ROUTINGS[0]
    assert mixtral.name == "Mixtral 8x7B" and "its routing is all here" in mixtral.note()
    preset.select_option("0")
    shows(mixtral, 0)
    renormalise.set_checked(False)
    assert preset.input_value() == ""
    expect(note).to_have_text("")
    expect_ffn(widget, list(tokens[0]), 2, "softmax", [0.0] * N, normalize=False)
    renormalise.focus()
    page.keyboard.press("Space")
    expect_ffn(widget, list(tokens[0]), 2, "softmax", [0.0] * N, normalize=True)
    preset.select_option("1")  # DeepSeek-V3: all 8 of 8 chosen, so the bias changes none
    shows(router.ROUTINGS[1], 0)
    assert "neither the scores nor a bias change the choice" in router.ROUTINGS[1].note()
    widget.get_by_label("Bias of expert 3", exact=True).fill("0.5")
    assert preset.input_value() == ""
    expect(note).to_have_text("")


def test_router_every_control(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, "router")
    tokens = router.example_logits()
    logits, bias = list(tokens[router.TOKEN]), router.example_bias()
    top_k, score = router.TOP_K, "sigmoid"
    expect_ffn(widget, logits, top_k, score, bias)  # as it opens: the bias swaps 5 for 6
    assert "expert 6 replaces expert 5" in str(router.router_numbers(logits, 2, score,
                                                                     bias)["change"])
    for i in range(N):  # the fields show ffn's logits, rounded; the widget routes them whole
        field = widget.get_by_label(f"Logit of expert {i}", exact=True)
        assert field.input_value() == f"{logits[i]:.3f}"
    # Token, by mouse (select) and keyboard (arrow keys on the focused select).
    token = widget.get_by_label("Token", exact=True)
    token.select_option("0")
    logits = list(tokens[0])
    expect_ffn(widget, logits, top_k, score, bias)
    token.focus()
    page.keyboard.press("ArrowDown")
    logits = list(tokens[1])
    expect_ffn(widget, logits, top_k, score, bias)
    token.select_option("2")
    logits = list(tokens[2])
    expect_ffn(widget, logits, top_k, score, bias)
    # Top-k, typed and by arrow keys, every value.
    top = widget.get_by_label("Experts per token (top-k)", exact=True)
    for k in range(1, N + 1):
        top.fill(str(k))
        expect_ffn(widget, logits, k, score, bias)
    top.focus()
    page.keyboard.press("ArrowDown")
    top_k = N - 1
    expect_ffn(widget, logits, top_k, score, bias)
    # Issue 39: whole numbers in the forms the number field holds ("2.0", "1e0"), as ffn's 2, 1
    for typed, k in [("2.0", 2), ("1e0", 1), ("30e-1", 3)]:
        top.fill(typed)
        expect_ffn(widget, logits, k, score, bias)
    top.fill("3")
    top_k = 3
    # The score function, both ways.
    choice = widget.get_by_label("Score", exact=True)
    choice.select_option("softmax")
    score = "softmax"
    expect_ffn(widget, logits, top_k, score, bias)
    choice.focus()
    page.keyboard.press("ArrowDown")
    score = "sigmoid"
    expect_ffn(widget, logits, top_k, score, bias)
    choice.select_option("softmax")
    score = "softmax"
    # Each bias, typed; one by arrow keys.
    for i, b in enumerate([0.5, -0.25, 0.0, 1.0, -2.0, 0.3, 0.0, 0.05]):
        widget.get_by_label(f"Bias of expert {i}", exact=True).fill(f"{b}")
        bias[i] = b
        expect_ffn(widget, logits, top_k, score, bias)
    widget.get_by_label("Bias of expert 2", exact=True).focus()
    page.keyboard.press("ArrowUp")  # step 0.01
    bias[2] = 0.01
    expect_ffn(widget, logits, top_k, score, bias)
    # Each logit, typed (the others stay ffn's, unrounded); one by arrow keys.
    for i, v in enumerate([1.5, -3.0, 0.25, 2.0, -0.5, 0.0, 4.0, -20.0]):
        widget.get_by_label(f"Logit of expert {i}", exact=True).fill(f"{v}")
        logits[i] = v
        expect_ffn(widget, logits, top_k, score, bias)
    widget.get_by_label("Logit of expert 3", exact=True).focus()
    page.keyboard.press("ArrowUp")
    logits[3] = 2.01
    expect_ffn(widget, logits, top_k, score, bias)
    # Equal logits and biases: the lower index wins, as in ffn.
    for i in range(N):
        widget.get_by_label(f"Logit of expert {i}", exact=True).fill("1")
        widget.get_by_label(f"Bias of expert {i}", exact=True).fill("0")
    logits, bias = [1.0] * N, [0.0] * N
    expect_ffn(widget, logits, top_k, score, bias)
    # The button, by keyboard and by mouse.
    widget.get_by_label("Bias of expert 4", exact=True).fill("0.2")
    bias[4] = 0.2
    expect_ffn(widget, logits, top_k, score, bias)
    clear = widget.get_by_role("button", name="Set every bias to 0")
    clear.focus()
    page.keyboard.press("Enter")
    bias = [0.0] * N
    expect_ffn(widget, logits, top_k, score, bias)
    widget.get_by_label("Bias of expert 1", exact=True).fill("-0.1")
    clear.click()
    expect_ffn(widget, logits, top_k, score, bias)
    # A new token brings ffn's logits back.
    token.select_option("1")
    logits = list(tokens[1])
    expect_ffn(widget, logits, top_k, score, bias)


def test_router_bad_input_is_named(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    widget = open_widget(page, site.base_url + PAGE, "router")
    note = widget.locator("[data-note]")
    cases = [("Experts per token (top-k)", "0", "Top-k must be a whole number from 1 to 8."),
             ("Experts per token (top-k)", "9", "Top-k must be a whole number from 1 to 8."),
             ("Experts per token (top-k)", "", "Top-k must be a whole number from 1 to 8."),
             ("Experts per token (top-k)", "2.5",
              "Top-k must be a whole number from 1 to 8: 2.5 is not whole."),
             ("Logit of expert 2", "25",
              "The logit of expert 2 must be from \N{MINUS SIGN}20 to 20."),
             ("Logit of expert 2", "", "The logit of expert 2 must be a number."),
             ("Bias of expert 5", "3", "The bias of expert 5 must be from \N{MINUS SIGN}2 to 2."),
             ("Bias of expert 5", "", "The bias of expert 5 must be a number.")]
    restore = {"Experts per token (top-k)": "2", "Logit of expert 2": "0",
               "Bias of expert 5": "0"}
    for label, value, message in cases:
        field = widget.get_by_label(label, exact=True)
        field.fill(value)
        expect(note).to_contain_text(message)
        assert "NaN" not in (widget.text_content() or "")
        assert set(shown(widget)["scores"]) == {""}
        assert widget.locator("tr.ffn-router__row--chosen").count() == 0
        assert widget.locator("svg.ffn-router__chart--stale").count() == 1
        expect(widget.locator("svg.ffn-router__chart--stale")).to_be_hidden()  # no old weights
        field.fill(restore[label])
        expect(note).to_have_text("")
    for control in widget.locator("input, select").all():
        assert control.evaluate("el => el.labels.length > 0"), control
    assert widget.locator("[aria-live='polite'] output").count() == 2
    assert widget.locator("svg[role='img'] title").count() == 1


def test_router_without_javascript_and_in_print(site: Site, browser: Browser) -> None:
    with widget_without_javascript(site, browser, PAGE, "router") as root:
        rows = root.locator(".ffn-widget__fallback tbody tr")
        logits = router.example_logits()[router.TOKEN]
        top1, top2, biased = router.fallback_cases()
        for i in range(N):
            cells = rows.nth(i).locator("th, td").all_text_contents()
            assert cells == [str(i), f"{logits[i]:.3f}", top1["scores"][i], top1["weight"][i],
                             top2["weight"][i], biased["weight"][i]], i
        assert biased["chosen"] == ["6", "7"] and top2["chosen"] == ["7", "5"]
    for scheme in SCHEMES:
        with widget_mounted(site, browser, PAGE, "router", scheme) as (_, root):
            expect(root.locator("rect.ffn-router__bar")).to_have_count(N)


def test_router_on_a_phone(site: Site, browser: Browser) -> None:
    # Issue 41: at 390 px the table was 577 px wide in a 324 px box, the score, chosen and
    # weight columns off screen. Now each expert is a card; every control is tapped here, and
    # widget_on_phone then checks that every result lies on screen and each target's size.
    tokens = router.example_logits()
    for scheme in SCHEMES:
        with widget_on_phone(site, browser, PAGE, "router", scheme) as (_, widget):
            logits, bias = list(tokens[router.TOKEN]), router.example_bias()
            top_k, score = router.TOP_K, "sigmoid"
            expect_ffn(widget, logits, top_k, score, bias)  # as it opens
            widget.get_by_role("button", name="Set every bias to 0").tap()
            bias = [0.0] * N
            expect_ffn(widget, logits, top_k, score, bias)
            top = widget.get_by_label("Experts per token (top-k)", exact=True)
            top.tap()
            top.fill("3")
            top_k = 3
            expect_ffn(widget, logits, top_k, score, bias)
            field = widget.get_by_label("Bias of expert 4", exact=True)
            field.tap()
            field.fill("0.5")
            bias[4] = 0.5
            expect_ffn(widget, logits, top_k, score, bias)
            widget.get_by_label("Renormalise the chosen weights to sum to 1").tap()
            expect_ffn(widget, logits, top_k, score, bias, normalize=False)
            widget.get_by_text("Renormalise the chosen weights").tap()  # its label, as a finger
            expect_ffn(widget, logits, top_k, score, bias)
            widget.get_by_label("Score", exact=True).select_option("softmax")
            score = "softmax"
            expect_ffn(widget, logits, top_k, score, bias)
            widget.get_by_label("Token", exact=True).select_option("0")
            logits = list(tokens[0])
            expect_ffn(widget, logits, top_k, score, bias)
