"""harness/words.py: the words prose ties give, and ties that use them."""

from __future__ import annotations

import pytest

from harness.words import differing_decimal, fraction, ordinal
from tests.test_harness import run


@pytest.mark.parametrize(("value", "word"), [(0.26, "quarter"), (0.6553, "two-thirds"),
                                             (1 / 3, "third"), (2.04, "twice"), (0.098, "tenth")])
def test_fraction_names_the_nearest_simple_fraction(value: float, word: str) -> None:
    assert fraction(value) == word


def test_fraction_refuses_a_value_far_from_every_fraction() -> None:
    with pytest.raises(ValueError, match=r"0\.42 is not within 5% of a simple fraction"):
        fraction(0.42)
    assert fraction(0.42, tolerance=0.2) == "half"


def test_differing_decimal_and_its_ordinal_word() -> None:
    assert differing_decimal(0.841112, 0.841192) == 5
    assert differing_decimal(0.66656, 0.66627) == 4
    assert ordinal(differing_decimal(0.5, 0.4)) == "first"
    with pytest.raises(ValueError, match="agree to 12 decimal places"):
        differing_decimal(0.25, 0.25)
    with pytest.raises(ValueError, match="differ before the decimal point"):
        differing_decimal(1.5, 0.5)
    with pytest.raises(ValueError, match="no ordinal word for 13"):
        ordinal(13)


def test_a_tie_sees_words_and_the_page_does_not(pytester: pytest.Pytester) -> None:
    page = ("```python\nshare = 0.26\n```\n\n"
            "About a quarter<!--= {words.fraction(share)} --> of it.\n\n"
            "```python\nprint('words' in globals())\n```\n\n```text\nFalse\n```\n")
    run(pytester, page).assert_outcomes(passed=2)
    wrong = run(pytester, page.replace("a quarter<", "a third<"))
    wrong.stdout.fnmatch_lines(["*prose number shows 'third' but *gives 'quarter'*"])
