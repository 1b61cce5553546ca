"""Tests that need a tool from Debian's packages say so with `@pytest.mark.needs("poppler-utils")`
(the packages of tooling/system.py). Where one is missing they are skipped, the package named,
or, where its FFN_REQUIRE_* variable is 1 (.ci/run sets them), they fail at once."""

from __future__ import annotations

import pytest

from tooling import system


def _needed(item: pytest.Item) -> list[str]:
    """The packages of all of ``item``'s `needs` markers (its own, its module's, and the one
    the root conftest.py adds to every test of the built site), in order, once each."""
    return list(dict.fromkeys(p for m in item.iter_markers("needs") for p in m.args))


def missing(item: pytest.Item) -> str | None:
    """Why ``item`` cannot run here (the missing packages, named), or None."""
    needed = _needed(item)
    return system.why_missing(needed) if needed else None


def _required(item: pytest.Item) -> list[str]:
    return list(dict.fromkeys(f"{system.TOOLS[p].require}=1" for p in _needed(item)
                              if system.TOOLS[p].required()))


@pytest.hookimpl(trylast=True)  # after the conftests have marked their tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = missing(item)
        if reason and not _required(item):
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = missing(item)
    if reason and _required(item):
        pytest.fail(f"{', '.join(_required(item))}, but this test {reason}", pytrace=False)
