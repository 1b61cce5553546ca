"""The site builds with `mkdocs build --strict`: no warning, broken link or bad anchor.

The build is the session's one build (the root conftest.py), which the notebook and browser tests
check too. It runs with the link check (htmlproofer) on and the notebook cache off, as CI
does; ./scripts/serve turns both the other way, for speed."""

from __future__ import annotations

import html
import re

import pytest
from mkdocs.config import load_config

from tooling import site as sitetools


def test_mkdocs_build_strict(site_build: sitetools.Build) -> None:
    assert site_build.dir is not None, f"mkdocs build --strict failed:\n{site_build.log}"
    assert (site_build.dir / "worked-example" / "index.html").is_file()


def test_the_build_checks_every_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """htmlproofer, as mkdocs.yml sets it up for the tests' build, is on and fails the build
    on a broken link (tests/test_notebooks.py checks mkdocs-jupyter's settings)."""
    for name, value in sitetools.BUILD_ENV.items():
        monkeypatch.setenv(name, value)
    proofer = load_config(str(sitetools.ROOT / "mkdocs.yml")).plugins["htmlproofer"].config
    assert proofer["enabled"] is True
    assert proofer["raise_error_after_finish"] is True
    assert proofer["validate_external_urls"] is False  # offline: internal links only


@pytest.mark.parametrize(("page", "code"), [
    ("architecture", "h_pre = x @ W1 + b1"),  # FeedForward.forward, from ffn/feedforward.py
    ("backward", "dh_pre = dh * self.act_grad(h_pre)"),  # FeedForward.backward, likewise
])
def test_pages_show_ffns_own_code(site_build: sitetools.Build, page: str, code: str) -> None:
    """The chapters include ffn's source at build time (pymdownx.snippets), so they cannot
    drift from it: the built page holds the line as the source file has it today."""
    assert site_build.dir is not None, site_build.log
    source = (sitetools.ROOT / "ffn" / "feedforward.py").read_text(encoding="utf-8")
    assert code in source, f"ffn/feedforward.py no longer has {code!r}: update this test"
    built = re.sub(r"<[^>]+>", "", (site_build.dir / page / "index.html").read_text("utf-8"))
    assert html.unescape(code) in html.unescape(built), f"{page} does not show {code!r}"


def test_api_reference_shows_the_core_classes_source(site_build: sitetools.Build) -> None:
    assert site_build.dir is not None, site_build.log
    built = (site_build.dir / "api" / "index.html").read_text("utf-8")
    shown = set(re.findall(r"<summary>Source code in <code>(ffn/[\w/]+\.py)</code>", built))
    core = {"ffn/feedforward.py", "ffn/gated.py", "ffn/layernorm.py", "ffn/linear.py",
            "ffn/sublayer.py", "ffn/activations.py"}
    assert core <= shown, f"no source shown for {sorted(core - shown)}"
