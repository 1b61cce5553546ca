"""Plugins for every run, the test tiers, and the session's one build of the site.

Here at the root, so that a run of one page (`./scripts/test docs/gelu.md`) has them too:
the docs harness (output and prose-number checks, harness/plugin.py), the `needs` marker
(tooling/requires.py) and pytester (the harness's own tests).

- `./scripts/test`: everything.
- `./scripts/test --quick`: the unit tests, the harness's own tests and every page's blocks:
  no site build, no browser.
- Markers select the rest: `site` (needs the built site: marked here, from the fixture),
  `browser` (drives Chromium: tests/browser), `lighthouse`; e.g. `-m site`, `-m "not site"`.

The site is built once per session, by the first test that needs it (`site_build`), into a
temporary directory, or into `--site-dir DIR`, kept there (CI publishes that tree).

scripts/test runs two pytest-xdist workers (`-n 2 --dist loadgroup`). Groups keep together
what shares a process: the site's tests (one build), and each page's blocks with that page's
digit test (a chain reuses its namespace; the digit test reuses what the page printed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tooling import lighthouse, site

pytest_plugins = ["harness.plugin", "tooling.requires", "pytester"]

# Not part of --quick, which is the unit tests, the harness's own tests and the pages: these
# need no built site but check tooling or start other processes, for a minute and more in all:
# the lint of the whole tree (ruff, mypy), the figures drawn twice, the builds with a failing
# notebook and with Zensical, and the two torch.distributed tests (process groups over gloo).
# They run in the full tier and in CI's "tests" job (-m "not site").
SLOW = ("tests/test_lint.py", "tests/test_figures.py", "tests/test_notebooks.py",
        "tests/test_zensical.py", "tests/test_tensor_parallel.py", "tests/test_expert_parallel.py")
DOCS = Path(__file__).resolve().parent / "docs"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ffn", "FFN by the Numbers")
    group.addoption("--quick", action="store_true",
                    help="unit tests, the harness's tests and every page's blocks only")
    group.addoption("--site-dir", type=Path, default=None, metavar="DIR",
                    help="build the site into DIR (kept) instead of a temporary directory")


def pytest_configure(config: pytest.Config) -> None:
    """A page named on the command line must be in docs/: the harness checks the site's pages
    (grouped, ranked and rewritten by their path there). One line, not a traceback."""
    for arg in config.args:
        path = Path(arg.split("::")[0]).resolve()
        if path.suffix == ".md" and DOCS not in path.parents:
            raise pytest.UsageError(f"{arg}: only pages under docs/ are checked; move it there "
                                    "or name a page in docs/")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (its own hook)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "site_build" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.site)
            item.add_marker(pytest.mark.needs("npm"))  # the build copies d3 from node_modules
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    if config.getoption("--quick"):
        quick = [i for i in items if not i.get_closest_marker("site")
                 and not i.nodeid.startswith(SLOW)]
        config.hook.pytest_deselected(items=[i for i in items if i not in quick])
        items[:] = quick
    workers = hasattr(config, "workerinput")  # a pytest-xdist worker
    items.sort(key=lambda item: _rank(item, workers))  # stable: a group keeps its order


def _group(item: pytest.Item) -> str | None:
    """The pytest-xdist group ``item`` runs in: one worker runs a group, in this order."""
    if item.get_closest_marker("site"):
        return "site"
    if item.nodeid.startswith(("tests/test_moe_transformers.py", "tests/test_transformers_ref")):
        return "transformers"  # one worker imports transformers' model code (seconds)
    if item.nodeid.startswith("tests/test_smollm2"):
        return "smollm2"  # one worker loads SmolLM2-135M once (tests/smollm2_files.py)
    path = Path(str(item.path))
    if path.suffix == ".md":
        return f"page {path.relative_to(DOCS)}"
    params = getattr(getattr(item, "callspec", None), "params", {})
    if item.nodeid.startswith("tests/test_docs_digits.py::") and params.get("how") == "recorded":
        return f"page {params['path'].relative_to(DOCS)}"
    return None


def _rank(item: pytest.Item, workers: bool) -> int:
    """Where ``item`` runs. With workers, the longest groups start first (the site's build and
    browser tests, then the pages, whose chains are the slowest), so that neither worker is
    left alone with one at the end; in one process, the quick failures show first."""
    if item.get_closest_marker("site"):
        return -2 if workers else 2
    if item.nodeid.startswith("tests/test_docs_digits.py::"):
        return 1  # after the pages: they reuse the pages' run, not run them again (page_outputs)
    if Path(str(item.path)).suffix == ".md":
        return -1 if workers else 0
    return 0


_STARTED: list[float] = []  # when this session started (for the summary below)


def pytest_sessionstart() -> None:
    _STARTED[:] = [time.time()]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The shuffled order's seed (pytest-randomly prints it only in the header, which -q
    hides), then Lighthouse's table and the screenshots, when this session wrote them
    (through files: under pytest-xdist a worker runs those tests and this process writes the
    summary)."""
    seed = getattr(terminalreporter.config.option, "randomly_seed", None)
    if isinstance(seed, int):  # not with -p no:randomly
        terminalreporter.write_line(f"tests shuffled: --randomly-seed={seed} repeats the order")
    def fresh(path: Path) -> bool:
        return bool(_STARTED) and path.is_file() and path.stat().st_mtime >= _STARTED[0]

    if fresh(lighthouse.SCORES):
        terminalreporter.write_sep("-", f"Lighthouse scores (reports in {lighthouse.REPORTS})")
        for line in lighthouse.SCORES.read_text(encoding="utf-8").splitlines():
            terminalreporter.write_line(line)
    shots = [p for p in site.SCREENSHOTS.glob("*.png") if fresh(p)]
    if shots:
        terminalreporter.write_sep("-", "browser screenshots")
        terminalreporter.write_line(f"{len(shots)} screenshots in {site.SCREENSHOTS}")


@pytest.fixture(scope="session")
def site_build(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> site.Build:
    """The site, built once per session as CI builds it (`mkdocs build --strict`, links
    checked, notebooks run) for test_site, test_notebooks, test_pdf and the browser tests."""
    site_dir = request.config.getoption("--site-dir") or tmp_path_factory.mktemp("site")
    return site.build(Path(site_dir).resolve())
