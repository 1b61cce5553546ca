"""The tools from Debian's packages (tooling/system.py): scripts/test installs the missing
ones as root on Debian, says so on stderr, and otherwise the tests that need them are skipped
with the package named, or fail where FFN_REQUIRE_* says they must run."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tooling import system

ROOT = Path(__file__).resolve().parents[1]


def tools(tmp_path: Path) -> list[system.Tool]:
    """Two tools whose commands live (once installed) in tmp_path."""
    return [system.Tool("poppler-utils", (str(tmp_path / "pdftotext"),), "the PDF tests",
                        "FFN_REQUIRE_PDF"),
            system.Tool("chromium", (str(tmp_path / "chromium"),), "the browser tests",
                        "FFN_REQUIRE_BROWSER", recommends=True)]


def fake_apt(tmp_path: Path, calls: list[list[str]]) -> system.Run:
    def run(command: list[str]) -> None:
        calls.append(command)
        if command[1] == "install":  # the packages' commands appear
            (tmp_path / "pdftotext").touch()
            (tmp_path / "chromium").touch()
    return run


def test_root_on_debian_installs_what_is_missing_with_one_update(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    log = io.StringIO()
    left = system.install(tools(tmp_path), root=True, apt=True, run=fake_apt(tmp_path, calls),
                          log=log)
    assert left == []
    assert calls == [["apt-get", "update", "-qq"],
                     ["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                      "poppler-utils"],
                     ["apt-get", "install", "-y", "-qq", "chromium"]]
    assert log.getvalue().startswith("installing Debian's poppler-utils chromium for the PDF "
                                     "tests; the browser tests (apt-get, as root)")


def test_nothing_missing_installs_nothing(tmp_path: Path) -> None:
    (tmp_path / "pdftotext").touch()
    calls: list[list[str]] = []
    log = io.StringIO()
    system.install(tools(tmp_path)[:1], root=True, apt=True, run=fake_apt(tmp_path, calls),
                   log=log)
    assert calls == [] and log.getvalue() == ""


@pytest.mark.parametrize(("root", "apt"), [(False, True), (True, False)])
def test_without_root_or_apt_nothing_runs_and_the_packages_are_named(
        tmp_path: Path, root: bool, apt: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FFN_REQUIRE_PDF", raising=False)
    monkeypatch.setenv("FFN_REQUIRE_BROWSER", "1")
    calls: list[list[str]] = []
    log = io.StringIO()
    left = system.install(tools(tmp_path), root=root, apt=apt, run=fake_apt(tmp_path, calls),
                          log=log)
    assert calls == [] and [t.package for t in left] == ["poppler-utils", "chromium"]
    assert log.getvalue().splitlines() == [
        ("note: Debian's poppler-utils is missing and can be installed only as root with apt-get:"
        " the PDF tests cannot run here; they will be skipped"),
        ("note: Debian's chromium is missing and can be installed only as root with apt-get:"
        " the browser tests cannot run here; they will fail, as FFN_REQUIRE_BROWSER=1 asks")]


def test_a_failed_install_is_reported_as_missing(tmp_path: Path) -> None:
    log = io.StringIO()
    left = system.install(tools(tmp_path)[:1], root=True, apt=True, run=lambda c: None, log=log)
    assert [t.package for t in left] == ["poppler-utils"]
    assert "note: Debian's poppler-utils is missing" in log.getvalue()


def test_scripts_test_installs_before_pytest_runs() -> None:
    script = (ROOT / "scripts" / "test").read_text()
    # npm_install (scripts/_env.sh runs `npm ci` when package-lock.json changed) again after
    # the install step, which may have just brought npm
    assert script.index("python -m tooling.system install") < script.index("\nnpm_install") < (
        script.index("exec python -m pytest"))
    assert "npm ci" in (ROOT / "scripts" / "_env.sh").read_text()


def test_the_command_installs_with_apt_get_as_root(tmp_path: Path) -> None:
    """`python -m tooling.system install` as scripts/test runs it, with a stand-in apt-get
    first on PATH and the tools looked for where nothing is (FFN_CHROMIUM; PATH for the rest)."""
    if os.geteuid() != 0:
        pytest.skip("as root only: elsewhere the command installs nothing (tested above)")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "apt.log"
    (bindir / "apt-get").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (bindir / "apt-get").chmod(0o755)
    env = {"PATH": str(bindir), "FFN_CHROMIUM": str(bindir / "chromium")}
    result = subprocess.run([sys.executable, "-m", "tooling.system", "install"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == [
        "update -qq", "install -y -qq --no-install-recommends npm poppler-utils",
        "install -y -qq chromium"]
    assert "installing Debian's chromium npm poppler-utils" in result.stderr
    # the stand-in installed nothing: each is then named, with the tests it leaves out
    assert "note: Debian's poppler-utils is missing" in result.stderr


def run_pytest(**env: str) -> subprocess.CompletedProcess[str]:
    """The PDF tests and a browser test in a pytest of their own, on a machine where
    poppler-utils and chromium are missing (as tooling.system sees it)."""
    code = ("import dataclasses, sys\nfrom tooling import system\n"
            "for name in ('poppler-utils', 'chromium'):\n"
            "    system.TOOLS[name] = dataclasses.replace(system.TOOLS[name],"
            " commands=('/nonexistent/x',))\n"
            "import pytest\n"
            "sys.exit(pytest.main(['tests/test_pdf.py', 'tests/browser/test_lighthouse.py',"
            " '-q', '-rs', '-p', 'no:xdist']))")
    environ = {k: v for k, v in os.environ.items() if not k.startswith("FFN_REQUIRE_")}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**environ, **env}, check=False, timeout=300)


def test_tests_are_skipped_naming_the_missing_package() -> None:
    result = run_pytest()
    assert result.returncode == 0, result.stdout + result.stderr
    pdf = "needs Debian's chromium poppler-utils (apt-get install -y chromium poppler-utils;"
    browser = "needs Debian's chromium (apt-get install -y chromium;"  # npm is here
    assert f"[4] tests/test_pdf.py: {pdf}" in result.stdout  # -rs: the reason of each
    assert re.search(rf"\[1\] tests/browser/test_lighthouse.py:\d+: {re.escape(browser)}",
                     result.stdout)
    assert "5 skipped in" in result.stdout


def test_tests_fail_where_required() -> None:
    result = run_pytest(FFN_REQUIRE_PDF="1", FFN_REQUIRE_BROWSER="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert ("FFN_REQUIRE_BROWSER=1, FFN_REQUIRE_PDF=1, but this test needs Debian's chromium "
            "poppler-utils") in result.stdout
    assert "FFN_REQUIRE_BROWSER=1, but this test needs Debian's chromium (" in result.stdout
    assert "5 errors in" in result.stdout  # each fails in its setup, before any fixture
