"""Committed figures are exactly what scripts/figures draws now, and drawing is repeatable."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BUILD = Path(__file__).resolve().parents[1] / "scripts" / "figures" / "build.py"
spec = importlib.util.spec_from_file_location("figures_build", BUILD)
assert spec and spec.loader
build = importlib.util.module_from_spec(spec)
sys.modules["figures_build"] = build
spec.loader.exec_module(build)


def test_committed_figures_are_current() -> None:
    problems = build.check(build.render_all())
    hint = "\nrun ./scripts/make-figures and commit docs/figures/"
    assert not problems, "\n".join(problems) + hint


def test_drawing_twice_gives_the_same_bytes() -> None:
    assert build.render_all() == build.render_all()
