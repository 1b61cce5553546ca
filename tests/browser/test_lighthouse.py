"""Lighthouse on three pages of the session's built site (see tests/browser/lighthouse.py,
which scripts/lighthouse runs on its own): Accessibility, Best Practices and SEO >= 95.
About 10-15 s a page; the scores are printed in the terminal summary."""

from __future__ import annotations

import pytest

from tests.browser import lighthouse
from tests.browser.conftest import LIGHTHOUSE_SCORES, Site


def test_lighthouse_scores(site: Site) -> None:
    if not lighthouse.LIGHTHOUSE.exists():
        pytest.fail(f"{lighthouse.LIGHTHOUSE} is missing: run `npm ci`", pytrace=False)
    rows, failures = lighthouse.run(site.dir, site.base_url)
    LIGHTHOUSE_SCORES[:] = lighthouse.table(rows)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
