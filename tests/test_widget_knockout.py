"""The knock-out widget's arithmetic (widgets/knockout/lab.js) against data.py, in Node, and
the committed table's own consistency.

lab.js does no model arithmetic: the runs were made by ffn.smollm2 when the table was made
(tests/test_smollm2_knockout.py holds the table to ffn and to transformers). In the browser it
chooses a row and prints it. So every row a reader can choose (3 prompts x (1 + 2 x 30)) is
chosen by knockoutRow and compared with data.py's row, and printed by changeSentence,
percentText and tokenLabel and compared with data.py's strings, exactly: the same doubles
through the same operations (100 * p, then Python's rounding, format.js's formatFixed), so the
strings must be equal, not near. percentText and tokenLabel also get 1,000 hypothesis inputs.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import widgets
from tests._node_lab import NodeError, NodeLab
from tests.test_widgets import SETTINGS
from widgets.knockout import data as knockout

pytestmark = pytest.mark.needs("npm")  # Node, which Debian's npm brings

TABLE = knockout.load_table()
DATA = knockout.widget_data(TABLE)
N_LAYERS = TABLE["n_layers"]


@pytest.fixture(scope="module")
def lab() -> Iterator[NodeLab]:
    node = NodeLab()
    yield node
    node.close()


def choices() -> list[tuple[str, str, int | None]]:
    """Every (prompt, kind, layer) a reader can choose."""
    out: list[tuple[str, str, int | None]] = []
    for e in TABLE["prompts"]:
        out.append((e["name"], "none", None))
        out += [(e["name"], kind, i) for kind in knockout.KINDS for i in range(N_LAYERS)]
    return out


def test_every_row_chosen_and_printed_as_data_py(lab: NodeLab) -> None:
    seen = 0
    for prompt, kind, layer in choices():
        want = knockout.row(TABLE, prompt, kind, layer)
        got = lab.call("knockoutRow", DATA, prompt, kind, layer)
        assert got == {"texts": want["texts"], "p": want["p"], "watch": want["watch"]}
        assert lab.call("changeSentence", DATA, prompt, kind, layer) \
            == knockout.change_sentence(TABLE, prompt, kind, layer)
        for text, p in zip(got["texts"], got["p"], strict=True):
            assert lab.call("tokenLabel", text) == knockout.token_label(text)
            assert lab.call("percentText", p, knockout.DIGITS) == knockout.percent(p)
        seen += 1
    assert seen == len(TABLE["prompts"]) * (1 + 2 * N_LAYERS) == 183


def test_every_layer_profile_as_data_py(lab: NodeLab) -> None:
    for e in TABLE["prompts"]:
        for kind in knockout.KINDS:
            want = knockout.layer_profile(TABLE, e["name"], kind)
            assert want == [r["watch"] for r in e[kind]] and len(want) == N_LAYERS
            assert lab.call("layerProfile", DATA, e["name"], kind) == want
    for bad, arg in ((("fact", "none"), "kind"), (("fact", "mlp"), "kind"),
                     (("nope", "ffn"), "prompt")):
        with pytest.raises(NodeError) as error:
            lab.call("layerProfile", DATA, *bad)
        assert arg in error.value.message


def test_the_sentence_names_the_watched_token_and_both_numbers() -> None:
    # Written out once, so the sentence's form is checked by eye and not only against itself.
    fact = next(e for e in TABLE["prompts"] if e["name"] == "fact")
    clean = knockout.percent(fact["clean"]["p"][0])
    first = knockout.token_label(fact["clean"]["texts"][0])
    assert first == '" Paris"'
    assert knockout.change_sentence(TABLE, "fact", "none", None) \
        == f'With nothing zeroed, P(" Paris") is {clean}.'
    after = knockout.percent(fact["ffn"][3]["watch"])
    assert knockout.change_sentence(TABLE, "fact", "ffn", 3) \
        == f'With layer 3\'s FFN zeroed, P(" Paris") is {after} ({clean} with nothing zeroed).'


@SETTINGS
@given(p=st.floats(0.0, 1.0), digits=st.integers(0, 6))
def test_percent_text_as_python(lab: NodeLab, p: float, digits: int) -> None:
    assert lab.call("percentText", p, digits) == knockout.percent(p, digits)


@SETTINGS
@given(text=st.text())
def test_token_label_as_python(lab: NodeLab, text: str) -> None:
    assert lab.call("tokenLabel", text) == knockout.token_label(text)


def test_token_label_escapes() -> None:
    assert knockout.token_label("\n    return") == '"\\n    return"'
    assert knockout.token_label(" a\tb\\") == '" a\\tb\\\\"'


@pytest.mark.parametrize(("args", "arg"), [
    (("nope", "none", None), "prompt"),
    (("fact", "mlp", 0), "kind"),
    (("fact", "ffn", N_LAYERS), "layer"),
    (("fact", "ffn", -1), "layer"),
    (("fact", "ffn", None), "layer"),
    (("fact", "attn", 1.0), "layer"),  # a Number, not an int (BigInt)
    (("fact", "none", 0), "layer"),
])
def test_bad_choice_is_refused_naming_it(lab: NodeLab, args: tuple[Any, ...], arg: str) -> None:
    with pytest.raises(NodeError) as error:
        lab.call("knockoutRow", DATA, *args)
    assert error.value.kind in ("TypeError", "RangeError")
    assert arg in error.value.message


@pytest.mark.parametrize(("args", "arg"), [
    ((1.5,), "p"), ((-0.1,), "p"), ((float("nan"),), "p"), (("0.5",), "p"),
    ((0.5, -1), "digits"), ((0.5, 1.0), "digits"),
])
def test_bad_percent_is_refused_naming_it(lab: NodeLab, args: tuple[Any, ...], arg: str) -> None:
    with pytest.raises(NodeError) as error:
        lab.call("percentText", *args)
    assert error.value.kind in ("TypeError", "RangeError")
    assert error.value.message.startswith(arg + " ")


def test_table_is_a_distribution_per_row() -> None:
    # Each row: TOP distinct tokens, probabilities in [0, 1] falling, summing to at most 1;
    # the watched token is the clean run's first, so its probability is the row's own where
    # the row's first token is that one.
    assert TABLE["top"] == knockout.TOP and TABLE["dtype"] == knockout.DTYPE
    assert [e["name"] for e in TABLE["prompts"]] == list(knockout.PROMPTS)
    for e in TABLE["prompts"]:
        first = e["clean"]["ids"][0]
        assert e["clean"]["watch"] == e["clean"]["p"][0]
        for kind in knockout.KINDS:
            assert len(e[kind]) == N_LAYERS == 30
        for r in [e["clean"], *e["ffn"], *e["attn"]]:
            p = np.array(r["p"])
            assert len(set(r["ids"])) == len(r["ids"]) == len(r["texts"]) == knockout.TOP
            assert (p >= 0).all() and (np.diff(p) <= 0).all() and p.sum() <= 1 + 1e-12
            assert 0 <= r["watch"] <= 1
            if r["ids"][0] == first:
                assert r["watch"] == r["p"][0]
            elif first in r["ids"]:
                assert r["watch"] == r["p"][r["ids"].index(first)]
            else:
                assert r["watch"] <= r["p"][-1]


def test_fallback_holds_every_row() -> None:
    page = widgets.render("knockout")
    for prompt, kind, layer in choices():
        for cell in knockout.cells(knockout.row(TABLE, prompt, kind, layer)):
            assert html.escape(cell) in page
    assert page.count("<tr>") == len(choices()) + len(TABLE["prompts"])  # rows and headers
