"""hooks/notebooks.py's notebook cache (./scripts/serve): keyed on the code, pruned of old keys,
and always the project's own `.cache/mkdocs-jupyter`, whatever directory MkDocs runs in.

The hook's on_config runs on a stand-in for MkDocs's config (the fields it reads), so no site
is built here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("notebooks_hook", ROOT / "hooks" / "notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_project(root: Path) -> SimpleNamespace:
    """A project at root (mkdocs.yml, ffn/, requirements.lock) with the notebook cache on."""
    (root / "ffn").mkdir(parents=True)
    (root / "ffn" / "__init__.py").write_text("")
    (root / "requirements.lock").write_text("")
    (root / "mkdocs.yml").write_text("site_name: x\n")
    jupyter = SimpleNamespace(config={"cache": True, "cache_dir": ".cache/mkdocs-jupyter"})
    return SimpleNamespace(config_file_path=str(root / "mkdocs.yml"),
                           plugins={"mkdocs-jupyter": jupyter})


def old_entries(cache: Path) -> list[Path]:
    """Entries under two keys of code that is gone: a directory and a stray file."""
    (cache / "0123456789abcdef").mkdir(parents=True)
    (cache / "0123456789abcdef" / "entry.json").write_text("{}")
    (cache / "stray.json").write_text("{}")
    return [cache / "0123456789abcdef" / "entry.json", cache / "stray.json"]


def test_the_cache_of_the_directory_mkdocs_runs_in_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config: Any = fake_project(tmp_path / "project")
    elsewhere = tmp_path / "another-project"
    theirs = old_entries(elsewhere / ".cache" / "mkdocs-jupyter")
    ours = old_entries(tmp_path / "project" / ".cache" / "mkdocs-jupyter")
    monkeypatch.chdir(elsewhere)  # `mkdocs serve -f project/mkdocs.yml` started elsewhere

    load_hook().on_config(config)

    assert all(path.exists() for path in theirs), "another project's cache was pruned"
    assert not any(path.exists() for path in ours), "the project's old entries were kept"
    cache_dir = Path(config.plugins["mkdocs-jupyter"].config["cache_dir"])
    assert cache_dir.parent == tmp_path / "project" / ".cache" / "mkdocs-jupyter"
    assert len(cache_dir.name) == 16  # the code key


def test_an_absolute_cache_dir_is_kept(tmp_path: Path) -> None:
    config: Any = fake_project(tmp_path / "project")
    jupyter = config.plugins["mkdocs-jupyter"].config
    jupyter["cache_dir"] = str(tmp_path / "cache")
    old = old_entries(tmp_path / "cache")

    load_hook().on_config(config)

    assert not any(path.exists() for path in old)
    assert Path(jupyter["cache_dir"]).parent == tmp_path / "cache"


def test_nothing_is_pruned_when_the_cache_is_off(tmp_path: Path) -> None:
    config: Any = fake_project(tmp_path / "project")
    config.plugins["mkdocs-jupyter"].config["cache"] = False
    old = old_entries(tmp_path / "project" / ".cache" / "mkdocs-jupyter")

    load_hook().on_config(config)

    assert all(path.exists() for path in old)
