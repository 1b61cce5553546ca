"""The notebooks under docs/notebooks/: committed without outputs, executed at every build.

mkdocs-jupyter runs each notebook when the site is built. These tests check the session's one
build of the whole site (the root conftest.py, shared with tests/test_site.py and the browser
tests), and a small site built with the real mkdocs.yml (its plugins, hooks and theme
overrides) around a notebook that fails, that:

- a notebook cell that raises fails the build (`allow_errors: false` is in effect), and the
  build writes no cache (`cache` is off outside ./scripts/serve: mkdocs-jupyter's cache keys
  on the notebook's bytes, so it would serve stale outputs after a change in ffn);
- every committed notebook has no outputs and no execution counts, so nothing stale can be
  committed;
- the built notebook pages show the outputs of the run (printed text, plots, no stderr),
  offer the notebook for download from a link that resolves, and load nothing from another
  host.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
from mkdocs.config import load_config

from tooling import site as sitetools

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOTEBOOKS = sorted((DOCS / "notebooks").glob("*.ipynb"))

# Build with the real mkdocs.yml, overriding only the pages: docs_dir, site_dir and nav.
# Paths in mkdocs.yml (hooks, theme overrides) stay relative to the real file.
_BUILD = """
import json, sys
from mkdocs.commands.build import build
from mkdocs.config import load_config

config_file, docs_dir, site_dir, nav = sys.argv[1:]
config = load_config(config_file, docs_dir=docs_dir, site_dir=site_dir, nav=json.loads(nav))
config.plugins.on_startup(command="build", dirty=False)
try:
    build(config)
finally:
    config.plugins.on_shutdown()
"""


def _build(tmp_path: Path, notebooks: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Build a site from the real mkdocs.yml whose pages are a stub home page and
    ``notebooks`` (file name -> notebook JSON) under notebooks/; output in tmp_path/site.

    Everything in docs/ that is not a page (stylesheets, figures) is copied, so the theme's
    links resolve. The build runs in tmp_path, where a plugin cache would appear."""
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("*.md", "*.ipynb"))
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    (docs / "notebooks").mkdir(exist_ok=True)
    for name, text in notebooks.items():
        (docs / "notebooks" / name).write_text(text, encoding="utf-8")
    nav = [{"Home": "index.md"}, *({name: f"notebooks/{name}"} for name in notebooks)]
    env = {**os.environ, **sitetools.BUILD_ENV}  # no cache, links checked: as the tests build
    # The hooks import ffn_docs and ffn from this checkout (the run is in tmp_path), not from
    # wherever the environment's editable install points (another worktree's, say).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-c", _BUILD, str(ROOT / "mkdocs.yml"), str(docs),
               str(tmp_path / "site"), json.dumps(nav)]
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)


def _notebook(*sources: str) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# A throw-away notebook")]
    nb.cells += [nbformat.v4.new_code_cell(source) for source in sources]
    return nbformat.writes(nb)


# ------------------------------------------------------------------- configuration


def test_plugin_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The settings the other tests rely on, in one place, as mkdocs reads them for the tests'
    build (the defaults are the opposite for allow_errors, cache and include)."""
    for name, value in sitetools.BUILD_ENV.items():
        monkeypatch.setenv(name, value)
    config = load_config(str(ROOT / "mkdocs.yml")).plugins["mkdocs-jupyter"].config
    assert config["execute"] is True
    assert config["allow_errors"] is False
    assert config["cache"] is False
    assert config["include"] == ["notebooks/*.ipynb"]
    assert config["include_source"] is True


def test_failing_cell_fails_the_build(tmp_path: Path) -> None:
    notebook = _notebook('print("before the failure")',
                         'raise ValueError("deliberate failure in a notebook cell")')
    result = _build(tmp_path, {"broken.ipynb": notebook})
    output = result.stdout + result.stderr
    assert result.returncode != 0, f"the build passed despite a failing cell:\n{output}"
    # Failed for the right reason: the cell's exception, reported by the executor.
    assert "deliberate failure in a notebook cell" in output, output
    assert "CellExecutionError" in output, output
    assert not (tmp_path / ".cache").exists(), "mkdocs-jupyter wrote a cache"


# ------------------------------------------------------------------- committed files


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 2, NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, f"{path.name} has no code cell"
    stale = [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code"
             and (cell.outputs or cell.execution_count is not None)]
    assert not stale, (f"{path.name}: cells {stale} hold outputs or execution counts; clear "
                       "them (jupyter nbconvert --clear-output --inplace) before committing")
    assert "widgets" not in nb.metadata, f"{path.name} holds saved widget state"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_first_code_cell_installs_what_the_notebook_needs(path: Path) -> None:
    """A reader's Jupyter may have neither ffn nor matplotlib: the first code cell installs
    them (the wheel from the site's URL, which the site's copy puts in place of
    FFN_WHEEL_URL), only where missing, so that the build (and a checkout) installs nothing."""
    nb = nbformat.read(path, as_version=4)
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    assert first.get("id") == "install", f"{path.name}: the first code cell is not the install"
    assert 'wheel = "FFN_WHEEL_URL"' in first.source
    assert '%pip install {" ".join(need)}' in first.source
    assert 'need.append("matplotlib")' in first.source
    assert "1. Download" in nb.cells[0].source
    assert "`pip install FFN_WHEEL_URL matplotlib`" in nb.cells[0].source
    assert "upload it to any hosted Jupyter" in nb.cells[0].source
    uses = {m for cell in nb.cells[1:] if cell.cell_type == "code"
            for m in re.findall(r"^(?:import|from) (\w+)", cell.source, re.M)}
    # What the cells import beyond the standard library: what the first cell provides.
    assert uses - set(sys.stdlib_module_names) <= {"ffn", "numpy", "matplotlib"}, uses


# ------------------------------------------------------------------- built pages


@pytest.fixture(scope="module")
def built_site(site_build: sitetools.Build) -> Path:
    if site_build.dir is None:
        pytest.fail(f"mkdocs build --strict failed:\n{site_build.log}", pytrace=False)
    return site_build.dir


def _page(site: Path, notebook: Path) -> str:
    return (site / "notebooks" / notebook.stem / "index.html").read_text(encoding="utf-8")


def _outputs(page: str) -> str:
    """The text of the page's stdout outputs (tags stripped, entities left as they are)."""
    blocks = re.findall(
        r'data-mime-type="text/plain"[^>]*>\s*<pre>(.*?)</pre>', page, flags=re.S
    )
    return "\n".join(re.sub(r"<[^>]+>", "", block) for block in blocks)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_page_shows_what_the_run_produced(built_site: Path, notebook: Path) -> None:
    page = _page(built_site, notebook)
    nb = nbformat.read(notebook, as_version=4)
    printing = [c for c in nb.cells if c.cell_type == "code" and "print(" in c.source]
    plotting = [c for c in nb.cells if c.cell_type == "code" and "plt.show()" in c.source]
    outputs = len(re.findall(r'class="[^"]*\bjp-OutputArea-output\b', page))
    assert outputs >= len(printing) + len(plotting), (outputs, notebook.name)
    plots = re.findall(r'<img\b[^>]*\bsrc="data:image/png;base64,[^>]*>', page)
    assert len(plots) >= len(plotting), notebook.name
    # hooks/notebooks.py replaced nbconvert's placeholder with each plot's "# alt:" comment.
    alts = [re.search(r'\balt="([^"]*)"', img) for img in plots]
    assert all(a and len(a[1]) > 20 for a in alts), [a and a[1] for a in alts]
    assert "No description has been provided" not in page
    stderr = re.search(r'<div [^>]*data-mime-type="application/vnd\.jupyter\.stderr"', page)
    assert not stderr, f"{notebook.name} wrote to stderr (a warning?)"
    assert "Traceback" not in page


def test_playground_prints_the_shapes_of_its_settings(built_site: Path) -> None:
    """The shapes on the page follow the settings cell (read from the notebook, not copied
    here), so the outputs come from running this notebook as committed."""
    notebook = DOCS / "notebooks" / "playground.ipynb"
    settings_cell = next(c for c in nbformat.read(notebook, as_version=4).cells
                         if c.get("id") == "settings")
    settings: dict[str, object] = {}
    for node in ast.parse(settings_cell.source).body:
        assert isinstance(node, ast.Assign), "the settings cell holds only assignments"
        target = node.targets[0]
        assert isinstance(target, ast.Name)
        settings[target.id] = ast.literal_eval(node.value)
    n_tokens, d_model, d_ff = settings["n_tokens"], settings["d_model"], settings["d_ff"]
    text = _outputs(_page(built_site, notebook))
    assert f"h_pre: ({n_tokens}, {d_ff})" in text, text
    assert f"    y: ({n_tokens}, {d_model})" in text, text


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_download_link_resolves_to_the_notebook(built_site: Path, notebook: Path) -> None:
    page = _page(built_site, notebook)
    links = re.findall(r'<a href="([^"]+\.ipynb)"[^>]*\bdownload\b', page)
    assert len(links) == 1, f"{notebook.name}: download links {links}"
    # Resolve the link as a browser would, from the page's URL.
    page_url = f"http://127.0.0.1/notebooks/{notebook.stem}/"
    target = urlsplit(urljoin(page_url, links[0]))
    assert target.netloc == "127.0.0.1", f"the link leaves the site: {links[0]}"
    served = built_site / target.path.lstrip("/")
    assert served.is_file(), f"{links[0]} does not resolve from the page ({served})"
    # The site's copy names the site's wheel where the committed notebook has a placeholder
    # (hooks/reader_notebooks.py); tests/test_reader_notebooks.py runs it from the site.
    (wheel,) = built_site.glob("ffn-*-py3-none-any.whl")
    site_url = sitetools.mkdocs_config()["site_url"]
    assert served.read_text(encoding="utf-8") == notebook.read_text(encoding="utf-8").replace(
        "FFN_WHEEL_URL", site_url + wheel.name)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_page_loads_nothing_from_another_host(built_site: Path, notebook: Path) -> None:
    page = _page(built_site, notebook)
    remote = re.findall(r"""(?:\bsrc=|\bimport\(|\burl\()["']?((?:https?:)?//[^"' )]+)""",
                        page)
    assert not remote, remote
    for cdn in ("cdnjs", "jsdelivr", "unpkg", "mathjax"):
        assert cdn not in page.lower(), f"{notebook.name} mentions {cdn}"
