"""Static checks, run by `./scripts/test`: ruff on the whole tree, mypy --strict on ffn/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [["ruff", "check", "."], ["mypy", "--strict", "ffn"]],
    ids=["ruff", "mypy-strict"],
)
def test_static_check(command: list[str]) -> None:
    result = subprocess.run([sys.executable, "-m", *command], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}"
