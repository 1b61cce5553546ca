"""The site builds with `mkdocs build --strict`: no warning, broken link or bad anchor.

The build is the session's one build (tests/conftest.py), which the notebook and browser tests
check too. It runs with the link check (htmlproofer) on and the notebook cache off, as CI
does; ./scripts/serve turns both the other way, for speed."""

from __future__ import annotations

import pytest
from mkdocs.config import load_config

from tests.browser import builtsite


def test_mkdocs_build_strict(site_build: builtsite.Build) -> None:
    assert site_build.dir is not None, f"mkdocs build --strict failed:\n{site_build.log}"
    assert (site_build.dir / "worked-example" / "index.html").is_file()


def test_the_build_checks_every_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """htmlproofer, as mkdocs.yml sets it up for the tests' build, is on and fails the build
    on a broken link (tests/test_notebooks.py checks mkdocs-jupyter's settings)."""
    for name, value in builtsite.BUILD_ENV.items():
        monkeypatch.setenv(name, value)
    proofer = load_config(str(builtsite.ROOT / "mkdocs.yml")).plugins["htmlproofer"].config
    assert proofer["enabled"] is True
    assert proofer["raise_error_after_finish"] is True
    assert proofer["validate_external_urls"] is False  # offline: internal links only
