"""The wheel the site serves (ffn_docs/wheel.py): its version names its content.

- the version is pyproject.toml's with a local part, 12 hex digits of a sha256 over
  pyproject.toml and every file of `ffn/`, recomputed here from the files themselves (by this
  test's own reading of that rule, with hashlib) and read back from the wheel's METADATA;
- changing one byte of one file of `ffn/` (in a copy of the project) changes the wheel's name,
  and the same project gives the same bytes twice (reproducible);
- the wheel holds `ffn` (`ffn/tables.py`, which the pages' tables need, included) and its
  metadata only.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from ffn_docs import wheel

ROOT = Path(__file__).resolve().parents[1]


def _expected_version(root: Path) -> str:
    base = re.search(r'^version = "([^"]+)"$', (root / "pyproject.toml").read_text(), re.M)
    assert base is not None
    files = ["pyproject.toml", *sorted(
        p.relative_to(root).as_posix() for p in (root / "ffn").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts)]
    digest = hashlib.sha256()
    for name in files:
        data = (root / name).read_bytes()
        digest.update(f"{len(name.encode())}:{name}:{len(data)}:".encode() + data)
    return f"{base[1]}+{digest.hexdigest()[:12]}"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of what the wheel is built from, to change."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "ffn", root / "ffn", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, root / name)
    return root


def test_the_version_is_a_hash_of_the_content() -> None:
    built = wheel.build()
    assert built.version == _expected_version(ROOT)
    assert re.fullmatch(r"0\.1\.0\+[0-9a-f]{12}", built.version)
    assert built.name == f"ffn-{built.version}-py3-none-any.whl"
    with zipfile.ZipFile(io.BytesIO(built.data)) as z:
        names = z.namelist()
        meta = Parser().parsestr(z.read(f"ffn-{built.version}.dist-info/METADATA").decode())
    assert meta["Version"] == built.version
    assert "ffn/tables.py" in names
    assert not [n for n in names if not n.startswith(("ffn/", f"ffn-{built.version}.dist-info/"))]


def test_a_changed_ffn_gets_a_new_name_and_the_same_ffn_the_same_bytes(project: Path) -> None:
    before = wheel.build(project)
    assert before.data == wheel.build(project).data  # reproducible
    tables = project / "ffn" / "tables.py"
    text = tables.read_bytes()
    tables.write_bytes(text.replace(b"print them", b"print them!", 1))  # one byte more
    assert tables.read_bytes() != text
    after = wheel.build(project)
    assert after.version == _expected_version(project) != before.version
    assert after.name != before.name
    tables.write_bytes(text)  # back as it was: back to the first name and bytes
    assert wheel.build(project) == before


def test_a_pyproject_without_a_version_is_named(tmp_path: Path) -> None:
    (tmp_path / "ffn").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "ffn"\n')
    with pytest.raises(ValueError, match=r"pyproject\.toml: no `version"):
        wheel.version(tmp_path)
