"""`ffn` as the wheel the site serves, built by hatchling (the project's build backend) in
this process, without network: `ffn-<version>-py3-none-any.whl`.

Its version is pyproject.toml's with a PEP 440 local part from the content,
`0.1.0+<12 hex digits>`: the start of a sha256 over pyproject.toml and every file of `ffn/`.
So the wheel's name changes whenever `ffn` does, and a reader who installs the newer one gets
it (pip keeps an installed `ffn` of the same version, even one built from other code). It is
reproducible (hatchling's default fixes its files' dates): the same `ffn/` gives the same bytes.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_VERSION = re.compile(r'^version = "([^"]+)"$', re.M)  # pyproject.toml's [project] version
DIGITS = 12  # hex digits of the content hash in the local version


@dataclass(frozen=True)
class Wheel:
    name: str  # ffn-0.1.0+0123456789ab-py3-none-any.whl
    version: str  # 0.1.0+0123456789ab
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def sources(root: Path = ROOT) -> list[Path]:
    """What the wheel is built from: pyproject.toml and every file of `ffn/` (not the
    interpreter's caches), in a fixed order."""
    package = sorted(p for p in (root / "ffn").rglob("*")
                     if p.is_file() and "__pycache__" not in p.parts)
    return [root / "pyproject.toml", *package]


def version(root: Path = ROOT) -> str:
    """pyproject.toml's version with the content hash as its local part: `0.1.0+<hex>`."""
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    if (m := _VERSION.search(pyproject)) is None:
        raise ValueError(f"{root / 'pyproject.toml'}: no `version = \"...\"` line")
    digest = hashlib.sha256()
    for path in sources(root):
        # The name and the length before the bytes: no two file sets hash alike.
        name = path.relative_to(root).as_posix().encode()
        digest.update(b"%d:%s:%d:" % (len(name), name, path.stat().st_size))
        digest.update(path.read_bytes())
    return f"{m[1]}+{digest.hexdigest()[:DIGITS]}"


def build(root: Path = ROOT) -> Wheel:
    """The wheel of the project at ``root`` (pyproject.toml's [tool.hatch.build] says what
    goes in: the package `ffn`, nothing else), under its content version."""
    from hatchling.builders.wheel import WheelBuilder  # the dev group's; only builds need it

    full = version(root)
    with tempfile.TemporaryDirectory() as tmp:
        # A copy with the version line changed: the checkout's pyproject.toml stays as it is.
        project = Path(tmp) / "project"
        shutil.copytree(root / "ffn", project / "ffn",
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(root / "README.md", project / "README.md")  # the wheel's description
        pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
        (project / "pyproject.toml").write_text(
            _VERSION.sub(f'version = "{full}"', pyproject, count=1), encoding="utf-8")
        out = Path(tmp) / "dist"
        (path,) = WheelBuilder(str(project)).build(directory=str(out), versions=["standard"])
        return Wheel(Path(path).name, full, Path(path).read_bytes())
