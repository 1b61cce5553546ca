"""pytest-xdist keeps an `xdist_group` on one worker with the pytest this project pins.

scripts/test runs `-n 2 --dist loadgroup` and the root conftest.py puts what shares a process
in one group (the site's one build; a page's chained blocks). pytest-xdist 3.8 ignores the
groups under pytest 9.2, without any error (its issue 1386): this would then fail.
"""

from __future__ import annotations

import re

import pytest

GROUPED = """\
import pytest

@pytest.mark.xdist_group("one")
@pytest.mark.parametrize("i", range(3))
def test_grouped(i):
    pass
"""


def test_a_group_runs_on_one_worker(pytester: pytest.Pytester) -> None:
    for name in "abcd":
        pytester.makepyfile(**{f"test_{name}": GROUPED})
    result = pytester.runpytest_subprocess("-n", "2", "--dist", "loadgroup", "-v",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=12)
    ran = re.findall(r"\[(gw\d+)\].*PASSED test_\w\.py::test_grouped\[\d\]@one",
                     result.stdout.str())
    assert len(ran) == 12, result.stdout.str()
    assert len(set(ran)) == 1, f"the group ran on {sorted(set(ran))}"
