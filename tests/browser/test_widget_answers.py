"""The exercises' answer boxes in the built site: in every box, ffn's answer
(widgets/answers/data.py, not the JavaScript's) typed as the box asks for it is "right", one unit
off in its last stated place "wrong" without the answer shown, and what is not a number gets
asked for a number; by mouse and by keyboard. Without JavaScript a short note stands in (no
answer in it); on the print page and on paper the boxes are gone. axe-core with every box
mounted, in both schemes. The page is long and each widget mounts as it nears the screen, so
the tests scroll to each."""

from __future__ import annotations

import re
from decimal import Decimal

from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.conftest import (
    SCHEMES,
    SCREENSHOT_DIR,
    Recorder,
    Site,
    Visit,
    axe,
    open_page,
    open_widget,
    widget_on_phone,
)
from widgets.answers import data as answers
from widgets.answers.data import Answer

PAGE = "exercises/"
SHOWN = "widget-answers"  # the screenshots' stem
PICTURED = "L2.3"  # the exercise whose boxes the screenshots show: two, one right, one wrong


def mount_all(page: Page) -> dict[str, Locator]:
    """Scroll to each exercise's boxes, top to bottom, until each has mounted."""
    roots = {}
    for exercise in answers.EXERCISES:
        root = page.locator(f'[data-widget="{answers.widget_name(exercise)}"]')
        root.scroll_into_view_if_needed()
        expect(root).to_have_class("ffn-widget ffn-widget--live")
        roots[exercise] = root
    return roots


def one_unit_off(answer: Answer) -> str:
    """ffn's answer plus one unit in its last stated place, written plainly."""
    expected, rounding = Decimal(answer.expected()), answer.rounding()
    if "decimals" in rounding:
        unit = Decimal(1).scaleb(-int(rounding["decimals"]))
    elif "figures" in rounding:
        unit = Decimal(1).scaleb(expected.adjusted() - int(rounding["figures"]) + 1)
    else:
        unit = Decimal(1)
    return f"{expected + unit:f}"


def check(root: Locator, i: int, typed: str, by: str = "click") -> str:
    field = root.locator(f'input[data-box="{i}"]')
    field.fill(typed)
    if by == "click":
        root.locator(f'button[data-check="{i}"]').click()
    else:
        field.press("Enter")
    return root.locator(f'output[data-result="{i}"]').text_content() or ""


def test_every_box_knows_ffns_answer(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    page.goto(site.base_url + PAGE)
    roots = mount_all(page)
    for exercise, root in roots.items():
        boxes = answers.for_exercise(exercise)
        assert root.locator("input").count() == len(boxes)
        for i, answer in enumerate(boxes):
            # labelled with what it asks for and the rounding, as the exercise states it
            field = root.get_by_label(
                f"Your answer: {answer.label} ({answer.rounding_words()}) =", exact=True)
            assert field.get_attribute("data-box") == str(i)
            assert field.get_attribute("type") == "text"
            assert field.get_attribute("inputmode") == "decimal"
            output = root.locator(f'output[data-result="{i}"]')
            assert output.get_attribute("aria-live") == "polite"
            assert check(root, i, answer.expected()) == f"Right: {answer.shown()}."
            assert output.get_attribute("data-status") == "right"
            wrong = check(root, i, one_unit_off(answer), by="Enter")
            assert wrong == (f"Not quite: check your working ({answer.rounding_words()}), "
                             "or open the solution below."), (answer, wrong)
            assert not re.search(r"\d", wrong)  # the answer is left to the solution
            assert check(root, i, "seven").startswith("That is not a number")
            assert check(root, i, "  ").startswith("Type a number first")
            assert output.get_attribute("data-status") == "unreadable"


def test_boxes_by_keyboard(site: Site, new_page: tuple[Page, Recorder]) -> None:
    page, _ = new_page
    root = open_widget(page, site.base_url + PAGE, answers.widget_name("X6"))
    answer = answers.for_exercise("X6")[0]
    root.locator('input[data-box="0"]').focus()
    page.keyboard.type("2,783,138,807,808")  # as the solution prints it
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.dataset.check") == "0"
    page.keyboard.press("Space")
    expect(root.locator('output[data-result="0"]')).to_have_text(f"Right: {answer.shown()}.")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Control+A")
    page.keyboard.type("\N{MINUS SIGN}2.78e12")
    page.keyboard.press("Enter")
    expect(root.locator('output[data-result="0"]')).to_contain_text("Not quite")


def test_answers_axe_in_both_schemes_and_not_in_print(site: Site, browser: Browser) -> None:
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    for scheme in SCHEMES:
        context, page, recorder = open_page(browser, site.base_url, scheme)
        record = recorder.visit = Visit(PAGE, scheme)
        try:
            page.goto(site.base_url + PAGE)
            roots = mount_all(page)
            pictured = roots[PICTURED]
            right, wrong = answers.for_exercise(PICTURED)
            check(pictured, 0, right.expected())
            check(pictured, 1, one_unit_off(wrong))
            assert axe(page) == [], scheme
            assert record.console_errors == [] and record.failed_requests == []
            expect(pictured.locator(".ffn-widget__fallback")).to_be_hidden()
            pictured.scroll_into_view_if_needed()
            pictured.screenshot(path=SCREENSHOT_DIR / f"{SHOWN}-{scheme}.png")
            page.emulate_media(media="print")
            for root in roots.values():
                expect(root).to_be_hidden()
        finally:
            context.close()


def test_without_javascript_a_note_and_on_the_print_page_nothing(site: Site,
                                                                 browser: Browser) -> None:
    context = browser.new_context(java_script_enabled=False, base_url=site.base_url)
    try:
        page = context.new_page()
        page.goto(site.base_url + PAGE)
        for exercise in answers.EXERCISES:
            root = page.locator(f'[data-widget="{answers.widget_name(exercise)}"]')
            note = root.locator(".ffn-widget__fallback")
            expect(note).to_be_visible()
            assert not re.search(r"\d", note.text_content() or "")
            assert root.locator("input").count() == 0
        page.locator(f'[data-widget="{answers.widget_name(PICTURED)}"]').screenshot(
            path=SCREENSHOT_DIR / f"{SHOWN}-nojs.png")
        page.goto(site.base_url + "print/")
        # The exercises' section has every box; the Lab's section (docs/lab.md) one more.
        exercises = page.locator('.print-book #exercises [data-widget^="answers-"]')
        assert exercises.count() == len(answers.EXERCISES)
        boxes = page.locator('.print-book [data-widget^="answers-"]')
        for i in range(boxes.count()):
            expect(boxes.nth(i)).to_be_hidden()
    finally:
        context.close()



def test_a_box_on_a_phone(site: Site, browser: Browser) -> None:
    # Issue 41: the boxes usable at 390 px by touch; widget_on_phone then checks that every
    # box, button and result lies on screen and each target's size.
    exercise = answers.EXERCISES[0]
    for scheme in SCHEMES:
        with widget_on_phone(site, browser, PAGE, answers.widget_name(exercise),
                             scheme) as (_, root):
            for i, answer in enumerate(answers.for_exercise(exercise)):
                field = root.locator(f'input[data-box="{i}"]')
                field.tap()
                field.fill(one_unit_off(answer))
                root.locator(f'button[data-check="{i}"]').tap()
                expect(root.locator(f'output[data-result="{i}"]')).to_contain_text("Not quite")
                field.fill(answer.expected())
                root.locator(f'button[data-check="{i}"]').tap()
                expect(root.locator(f'output[data-result="{i}"]')).to_have_text(
                    f"Right: {answer.shown()}.")
