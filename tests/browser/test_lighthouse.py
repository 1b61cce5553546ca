"""Lighthouse on three pages of the session's built site (see tests/browser/lighthouse.py,
which scripts/lighthouse runs on its own), served twice: gzip-compressed as GitHub Pages serves
it, and uncompressed. Accessibility, Best Practices and SEO >= 95 on each; performance is
printed with its figures (first paint, blocking time, DOM size, bytes) but not gated, because
on this shared 2-core machine the same build's mobile score moves by 15 points and more with
the load of other builds (lighthouse.PERFORMANCE_MIN says more). The audits start as soon as
the site is built and run beside the other tests, whose browser visits yield the CPU to them
(tests/conftest.py, SiteWork.lighthouse); the scores are printed in the terminal summary."""

from __future__ import annotations

import pytest

from tests.browser import lighthouse
from tests.browser.conftest import LIGHTHOUSE_SCORES


def test_lighthouse_scores(
        lighthouse_audits: tuple[list[lighthouse.Row], list[str], str]) -> None:
    rows, failures, load = lighthouse_audits
    note = ("(measured beside the other tests, whose browser visits yield the CPU;"
            " ./scripts/lighthouse measures alone)")
    LIGHTHOUSE_SCORES[:] = [*lighthouse.table(rows, load), note]
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
