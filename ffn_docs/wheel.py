"""`ffn` as the wheel the site serves, built by hatchling (the project's build backend) in
this process, without network: `ffn-<version>-py3-none-any.whl`, reproducible (hatchling's
default fixes its files' dates), so that the same `ffn/` gives the same sha256."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Wheel:
    name: str  # ffn-0.1.0-py3-none-any.whl
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


def build(root: Path = ROOT) -> Wheel:
    """The wheel of the project at ``root`` (pyproject.toml's [tool.hatch.build] says what
    goes in: the package `ffn`, nothing else)."""
    from hatchling.builders.wheel import WheelBuilder  # the dev group's; only builds need it

    with tempfile.TemporaryDirectory() as out:
        (path,) = WheelBuilder(str(root)).build(directory=out, versions=["standard"])
        return Wheel(Path(path).name, Path(path).read_bytes())
