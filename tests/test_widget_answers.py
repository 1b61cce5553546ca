"""The exercises' answer boxes: checkAnswer (widgets/answers/lab.js) against a Decimal
oracle, and each expected answer (widgets/answers/data.py) against the page's solutions.

- The oracle is written here with Python's decimal module, not ported from the JavaScript: a
  typed value T is right when rounding it to the stated place, half up or half down (a tie
  may go either way), gives the answer; to d decimals that is `T.quantize(10**-d)`, to n
  significant figures `Context(prec=n).plus(T)`, and exact means `T == answer`. The typed
  strings are written from T in every form a reader may use (grouped by commas or spaces,
  the minus sign, a plus, scientific notation, trailing zeros or dot, no leading zero), and
  broken in ways that are never a number; hypothesis draws 1,000 of each (derandomized).
- Every answer is right typed as its solution prints it (read from the output fences of
  docs/exercises.md, which the doc tests hold to the code) and wrong one unit away in its
  last stated place, and the exercise's question states its rounding in words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Context, Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests._node_lab import NodeLab
from widgets.answers import data as answers
from widgets.answers.data import Answer

pytestmark = pytest.mark.needs("npm")  # Node, which Debian's npm brings

N = 1000  # generated inputs per test
SETTINGS = settings(database=None, deadline=None, max_examples=N, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
PAGE = Path(__file__).resolve().parent.parent / "docs" / "exercises.md"
WIDE = Context(prec=100_000)  # quantize never runs out of digits


@pytest.fixture(scope="module")
def lab() -> Iterator[NodeLab]:
    node = NodeLab()
    yield node
    node.close()


# ---- the oracle ----

Rounding = dict[str, int | bool]


def oracle(typed: Decimal, expected: Decimal, rounding: Rounding) -> str:
    """"right" or "wrong", by the decimal module's own rounding."""
    modes = (ROUND_HALF_UP, ROUND_HALF_DOWN)
    if "decimals" in rounding:
        place = Decimal(1).scaleb(-int(rounding["decimals"]))
        rounded = [typed.quantize(place, rounding=m, context=WIDE) for m in modes]
    elif "figures" in rounding:
        rounded = [Context(prec=int(rounding["figures"]), rounding=m).plus(typed) for m in modes]
    else:
        rounded = [typed]
    return "right" if expected in rounded else "wrong"


def unit(expected: Decimal, rounding: Rounding) -> Decimal:
    """One unit in the answer's last stated place."""
    if "decimals" in rounding:
        return Decimal(1).scaleb(-int(rounding["decimals"]))
    if "figures" in rounding:
        return Decimal(1).scaleb(expected.adjusted() - int(rounding["figures"]) + 1)
    return Decimal(1)


@st.composite
def answer_and_rounding(draw: st.DrawFn) -> tuple[str, Decimal, Rounding]:
    """An answer as widgets/answers/data.py writes it, at a rounding."""
    kind = draw(st.sampled_from(["decimals", "figures", "exact"]))
    if kind == "decimals":
        d = draw(st.integers(0, 8))
        value = Decimal(draw(st.integers(-10**9, 10**9))).scaleb(-d)
        return f"{value:.{d}f}", value, {"decimals": d}
    if kind == "figures":
        n = draw(st.integers(1, 8))
        digits = draw(st.integers(10 ** (n - 1), 10**n - 1)) * draw(st.sampled_from([1, -1]))
        value = Decimal(digits).scaleb(draw(st.integers(-12, 15)) - n + 1)
        return f"{value:.{n - 1}e}", value, {"figures": n}
    value = Decimal(draw(st.integers(-10**13, 10**13)))
    return str(value), value, {"exact": True}


def written(value: Decimal, style: str) -> str:
    """The same value as a reader may type it."""
    if style == "scientific":
        text = f"{value:e}"
    elif style in ("commas", "spaces"):
        text = f"{value:,f}"
        if style == "spaces":
            text = text.replace(",", "\N{NO-BREAK SPACE}" if value > 100_000 else " ")
    else:
        text = f"{value:f}"
    if style == "trailing" and "e" not in text:
        text += "000" if "." in text else "."
    if style == "bare point":
        text = re.sub(r"^(-?)0\.", r"\1.", text)
    if style == "minus sign":
        text = text.replace("-", "\N{MINUS SIGN}")
    if style == "plus" and not text.startswith("-"):
        text = "+" + text
    if style == "padded":
        text = f"  {text} "
    if style == "upper":
        text = text.upper()
    return text


STYLES = ["plain", "scientific", "commas", "spaces", "trailing", "bare point", "minus sign",
          "plus", "padded", "upper"]


@st.composite
def typed_near(draw: st.DrawFn, expected: Decimal, rounding: Rounding) -> Decimal:
    """A value at, near or across the edges of the answer's rounding interval, or anywhere."""
    u = unit(expected, rounding)
    where = draw(st.sampled_from(["answer", "edge", "anywhere"]))
    if where == "answer":
        return expected
    if where == "edge":  # a multiple of half a unit, nudged by a few units far below it
        nudge = Decimal(draw(st.integers(-3, 3))).scaleb(u.adjusted() - draw(st.integers(1, 6)))
        return expected + u * draw(st.integers(-4, 4)) / 2 + nudge
    return Decimal(draw(st.integers(-10**15, 10**15))).scaleb(draw(st.integers(-12, 6)))


@SETTINGS
@given(data=st.data(), answer=answer_and_rounding(), style=st.sampled_from(STYLES))
def test_check_answer_equals_the_oracle(lab: NodeLab, data: st.DataObject,
                                        answer: tuple[str, Decimal, Rounding],
                                        style: str) -> None:
    expected_text, expected, rounding = answer
    typed = data.draw(typed_near(expected, rounding))
    text = written(typed, style)
    assert Decimal(text.strip().replace(",", "").replace(" ", "").replace("\N{NO-BREAK SPACE}", "")
                   .replace("\N{MINUS SIGN}", "-")
                   .replace("E", "e")) == typed, text  # the writing keeps the value
    want = oracle(typed, expected, rounding)
    event(f"{want}, {next(iter(rounding))}")  # --hypothesis-show-statistics: both outcomes
    got = lab.call("checkAnswer", text, expected_text, rounding)
    assert got == {"status": want}, (text, expected_text, rounding)


LETTERS = "abcdfghijklmnopqrstuvwxyzABCDFXYZ_#/=?!"


@st.composite
def broken(draw: st.DrawFn, answer: tuple[str, Decimal, Rounding]) -> tuple[str, str]:
    """A typed string that is never a number, and the reason checkAnswer should give."""
    text = written(answer[1], draw(st.sampled_from(STYLES)))
    how = draw(st.sampled_from(["letter", "two points", "blank", "percent", "bad group",
                                "no digits"]))
    if how == "letter":
        at = draw(st.integers(0, len(text)))
        return text[:at] + draw(st.sampled_from(LETTERS)) + text[at:], "number"
    if how == "two points":
        return text.strip() + ".5" if "." in text else text.strip() + "..5", "number"
    if how == "blank":
        return draw(st.sampled_from(["", " ", "\t", "\N{NO-BREAK SPACE}  "])), "empty"
    if how == "percent":
        return text + "%", "percent"
    if how == "bad group":  # a separator with two digits after it
        return f"{draw(st.integers(1, 999))},{draw(st.integers(10, 99))}", "number"
    no_digits = ["-", "+", ".", "e5", "-.e3", "1e", "1e+", "\N{MINUS SIGN}", "%"]
    return draw(st.sampled_from(no_digits)), "number"


@SETTINGS
@given(data=st.data(), answer=answer_and_rounding())
def test_what_is_not_a_number_is_unreadable(lab: NodeLab, data: st.DataObject,
                                            answer: tuple[str, Decimal, Rounding]) -> None:
    text, reason = data.draw(broken(answer))
    got = lab.call("checkAnswer", text, answer[0], answer[2])
    if text.strip() == "%":
        reason = "number"  # nothing before the sign
    assert got == {"status": "unreadable", "reason": reason}, text


@pytest.mark.parametrize("typed, expected, rounding, status", [
    ("4,722,432", "4722432", {"exact": True}, "right"),
    ("4 722 432", "4722432", {"exact": True}, "right"),
    ("4722432.000", "4722432", {"exact": True}, "right"),
    ("4.722432e6", "4722432", {"exact": True}, "right"),
    ("4.7e6", "4722432", {"exact": True}, "wrong"),
    ("4,722,433", "4722432", {"exact": True}, "wrong"),
    ("6.", "6", {"exact": True}, "right"),
    ("-0", "0", {"exact": True}, "right"),
    ("\N{MINUS SIGN}0.24721", "-0.24721", {"decimals": 5}, "right"),
    ("- 0.247214", "-0.24721", {"decimals": 5}, "right"),
    ("-0.247205", "-0.24721", {"decimals": 5}, "right"),  # a tie: either way
    ("-0.247215", "-0.24721", {"decimals": 5}, "right"),
    ("-0.2472151", "-0.24721", {"decimals": 5}, "wrong"),
    ("-0.2472", "-0.24721", {"decimals": 5}, "wrong"),  # fewer decimals than asked
    ("0.24721", "-0.24721", {"decimals": 5}, "wrong"),
    ("2.783e+12", "2.78e+12", {"figures": 3}, "right"),
    ("2,783,138,807,808", "2.78e+12", {"figures": 3}, "right"),
    ("2.8e12", "2.78e+12", {"figures": 3}, "wrong"),
    ("2.79e12", "2.78e+12", {"figures": 3}, "wrong"),
    ("9.996", "1.00e+01", {"figures": 3}, "right"),  # rounds up to the next power of ten
    ("0.081%", "0.081", {"decimals": 3, "percent": True}, "right"),
    ("0.081", "0.081", {"decimals": 3, "percent": True}, "right"),
    ("0.081%", "0.081", {"decimals": 3}, "unreadable"),
    ("2,78", "2.78e+12", {"figures": 3}, "unreadable"),
    ("1,2345", "12345", {"exact": True}, "unreadable"),
    ("1,234 567", "1234567", {"exact": True}, "unreadable"),  # two kinds of separator
    ("0x10", "16", {"exact": True}, "unreadable"),
    ("Infinity", "1", {"exact": True}, "unreadable"),
    ("", "1", {"exact": True}, "unreadable"),
])
def test_exact_cases(lab: NodeLab, typed: str, expected: str, rounding: Rounding,
                     status: str) -> None:
    assert lab.call("checkAnswer", typed, expected, rounding)["status"] == status


# ---- the answers against the page ----

def section(exercise: str) -> tuple[str, str]:
    """An exercise's question (heading to Solution) and its solution's printed output."""
    text = PAGE.read_text(encoding="utf-8")
    match = re.search(rf"^### {re.escape(exercise)} .*?(?=^##)", text, re.M | re.S)
    assert match, exercise
    question, solution = match.group(0).split('??? success "Solution"')
    outputs = re.findall(r'```text title="Output"\n(.*?)```', solution, re.S)
    return question, "\n".join(re.sub(r"^ {4}", "", o, flags=re.M) for o in outputs)


# (exercise, label) -> where the solution prints it: a pattern whose group 1 is the number.
PRINTED = {
    ("L1.1", "rows of W1"): r"^W1: \((\d+), \d+\)$",
    ("L1.1", "columns of W1"): r"^W1: \(\d+, (\d+)\)$",
    ("L1.1", "rows of W2"): r"^W2: \((\d+), \d+\)$",
    ("L1.1", "columns of W2"): r"^W2: \(\d+, (\d+)\)$",
    ("L2.1", "the first hidden unit"): r"^ReLU\(\S+\) = (\S+)$",
    ("L2.2", "ReLU's output"): r"^ReLU: (\S+)$",
    ("L2.3", "ReLU(\N{MINUS SIGN}1.9)"): r"^ReLU\(-1\.9\) = (\S+)$",
    ("L2.3", "SiLU(\N{MINUS SIGN}1.9)"): r"ffn\.silu: (\S+)$",
    ("L3.1", "parameters"): r"^ffn\.count_parameters: (\S+)$",
    ("L3.3", "first entry of FFN(x)"): r"^h @ W2 \+ b2 = \[\s*(\S+)\s+\S+\]$",
    ("L3.3", "second entry of FFN(x)"): r"^h @ W2 \+ b2 = \[\s*\S+\s+(\S+)\]$",
    ("L5.1", "the tanh approximation at 1"): r"^0\.5 \* x \* \(1 \+ tanh\) = (\S+) ",
    ("L5.1", "the exact GELU(1)"): r"^exact x \* Phi\(x\)\s+= (\S+) ",
    ("L5.2", "the FFN's share, biases ignored"): r"^d_model = 768: .* = (\S+)$",
    ("L5.2", "the share with biases, d_model = 768"): r"^with biases: .* = (\S+)$",
    ("L5.3", "the largest whole r"): r", so r = (\d+)$",
    ("X1", "parameters of one FFN"): r"^one FFN: (\S+)$",
    ("X1", "parameters of all FFNs"): r"^all FFNs: (\S+)$",
    ("X1", "the FFNs' share"): r"^share of FFN \+ attention: (\S+)$",
    ("X2", "d_ff for d_model = 768"): r"^d_model 768: 8/3 \* d_model = (\S+),",
    ("X3", "last dimension of h_pre"): r"^h_pre \(\d+, \d+, (\d+)\)",
    ("X3", "last dimension of h"): r" h \(\d+, \d+, (\d+)\)",
    ("X3", "last dimension of y"): r" y \(\d+, \d+, (\d+)\)$",
    ("X4", "the x where GELU is smallest"): r"^minimum at x = (\S+),",
    ("X4", "GELU's smallest value"): r"^minimum at x = \S+, GELU\(x\) = (\S+)$",
    ("X6", "FLOPs per training step"): r"^all \d+ layers: (\S+) FLOPs",
}


def test_every_answer_has_its_printed_place() -> None:
    assert set(PRINTED) == {(a.exercise, a.label) for a in answers.ANSWERS}


@pytest.mark.parametrize("answer", answers.ANSWERS, ids=lambda a: f"{a.exercise} {a.label}")
def test_answer_is_what_the_solution_prints(lab: NodeLab, answer: Answer) -> None:
    question, printed = section(answer.exercise)
    found = re.findall(PRINTED[answer.exercise, answer.label], printed, re.M)
    assert len(found) == 1, (answer, printed)
    shown = found[0]
    expected, rounding = answer.expected(), answer.rounding()
    value = Decimal(shown.replace(",", ""))
    assert oracle(value, Decimal(expected), rounding) == "right", (shown, expected)
    assert lab.call("checkAnswer", shown, expected, rounding) == {"status": "right"}
    # one unit off in the last stated place, either way: wrong
    u = unit(Decimal(expected), rounding)
    for off in (Decimal(expected) + u, Decimal(expected) - u):
        assert oracle(off, Decimal(expected), rounding) == "wrong"
        assert lab.call("checkAnswer", f"{off:f}", expected, rounding) == {"status": "wrong"}
    # the question says how to round, in the widget's words
    words = answer.rounding_words()
    flat = " ".join(question.split())
    assert words in flat or (words == "exactly" and " whole " in flat), (answer, words)


def test_each_exercise_places_its_boxes_before_its_solution() -> None:
    text = PAGE.read_text(encoding="utf-8")
    placed = re.findall(r'<div class="ffn-widget" data-widget="(answers-[\w-]+)"></div>', text)
    assert placed == [answers.widget_name(e) for e in answers.EXERCISES]
    for exercise in answers.EXERCISES:
        question, _ = section(exercise)
        assert question.rstrip().endswith(
            f'<div class="ffn-widget" data-widget="{answers.widget_name(exercise)}"></div>')


def test_the_fallback_does_not_spoil_the_answer() -> None:
    for exercise in answers.EXERCISES:
        note = re.search(r'<p class="ffn-widget__fallback[^"]*">(.*?)</p>',
                         answers.render(exercise))
        assert note and not re.search(r"\d", note.group(1)), exercise
