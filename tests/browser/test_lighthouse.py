"""Lighthouse on three pages of the session's built site, the home page, the longest chapter
and the Lab (tooling/lighthouse.py, which scripts/lighthouse runs on its own), served twice:
gzip-compressed as GitHub Pages serves it, and uncompressed. Accessibility, Best Practices and
SEO >= 95 on each; performance is printed with its figures (first paint, blocking time, DOM
size, bytes) but not gated, because on a shared 2-core machine the same build's mobile score
moves by 15 points and more with the load of other work (lighthouse.PERFORMANCE_MIN says
more). The scores are printed in the terminal summary (through a file: under pytest-xdist a
worker runs this test)."""

from __future__ import annotations

import pytest

from tests.browser.conftest import SCORES_FILE, Site
from tooling import lighthouse


@pytest.mark.lighthouse
def test_lighthouse_scores(site: Site) -> None:
    if not lighthouse.LIGHTHOUSE.exists():
        pytest.fail(f"{lighthouse.LIGHTHOUSE} is missing: run `npm ci`", pytrace=False)
    rows, failures = lighthouse.run_served(site.dir)
    SCORES_FILE.write_text("\n".join(lighthouse.table(rows)) + "\n", encoding="utf-8")
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)
