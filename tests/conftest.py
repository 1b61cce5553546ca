"""Fixtures shared by tests/ and tests/browser/, and the order the tests run in.

The site's build, the browser's visit of every page and Lighthouse's audits take minutes,
each in processes of its own (mkdocs with the notebook kernels; a Python with Chromium per
colour scheme; a Python starting a Chromium per audit). So as soon as collection shows that
some test needs them, they start (the visits and the audits once the site is built), each
waited for on a thread of its own (`SiteWork`), and the tests that need them run last: the
unit tests and the pages run on one core while the site is built, visited and audited on the
other. The visits yield the CPU to the audits, which measure performance. The site tests
then check that one build exactly as before.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from harness.requires import missing as _missing
from tests.browser import builtsite

if TYPE_CHECKING:
    from tests.browser.conftest import Visit
    from tests.browser.lighthouse import Row

    Audits = tuple[list[Row], list[str], str]  # rows, failures, load average (lighthouse.py)

T = TypeVar("T")


def _in_background(work: Callable[[], T]) -> Future[T]:
    """Run ``work`` on a daemon thread (so a stopped session does not wait for it)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(work())
        except BaseException as error:  # re-raised in the test that asks for the result
            future.set_exception(error)

    threading.Thread(target=run, name="site-work", daemon=True).start()
    return future


class SiteWork:
    """The session's one site build, its visits and its audits, each started once, on first need."""

    def __init__(self, root: Path) -> None:
        self.root = root  # under pytest's basetemp, kept after the run as before
        # The environment as the session started: a test running meanwhile may change it
        # (pytester sets HOME, for one), and Chromium starts on a thread when the build is done.
        self.env = dict(os.environ)
        self._lock = threading.Lock()
        self._build: Future[builtsite.Build] | None = None
        self._after: dict[str, Future[Any]] = {}  # the visits and the audits (_after_build)
        self._processes: list[subprocess.Popen[str]] = []  # the build's, visits', audits'
        self._closed = False

    def build(self) -> Future[builtsite.Build]:
        with self._lock:
            if self._build is None:
                self._build = _in_background(lambda: builtsite.build_once(self.root, self._started))
            return self._build

    def _started(self, process: subprocess.Popen[str]) -> None:
        with self._lock:
            self._processes.append(process)
            if self._closed:  # the session ended while it was starting
                self._kill()

    def close(self) -> None:
        """Stop a build, visits or audits still running (with the kernels and Chromiums they
        started)."""
        with self._lock:
            self._closed = True
            self._kill()

    def _kill(self) -> None:
        for process in self._processes:
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                    os.killpg(process.pid, signal.SIGKILL)  # each its own process group
                process.wait()

    def _after_build(self, key: str, work: Callable[[Path], T]) -> Future[T]:
        """``work(site_dir)`` on a thread of its own once the site is built, started on the
        first call for ``key`` and shared by the later ones."""
        build = self.build()

        def run() -> T:
            site_dir = build.result().dir
            if site_dir is None:
                raise RuntimeError("the site did not build: see test_mkdocs_build_strict")
            return work(site_dir)

        with self._lock:
            if key not in self._after:
                self._after[key] = _in_background(run)
            future: Future[T] = self._after[key]
            return future

    def visits(self, scheme: str) -> Future[list[Visit]]:
        """Every page visited in ``scheme``, after the build; the two schemes run at once."""
        from tests.browser.conftest import visit_all_in_process  # only with the browser tests

        return self._after_build(f"visits {scheme}", lambda site_dir: visit_all_in_process(
            site_dir, scheme, self.env, self._started))

    def lighthouse(self) -> Future[Audits]:
        """Lighthouse's audits (tests/browser/lighthouse.py), started when the site is built,
        in a process of its own: they run beside the other tests, and the visits' processes
        and Chromiums yield the CPU to them (builtsite.cpu_priority), so that what they measure
        is not slowed by the visits."""
        from tests.browser import lighthouse  # only with the browser tests

        return self._after_build("lighthouse", lambda site_dir: lighthouse.run_in_process(
            site_dir, self.env, self._started))


_WORK = pytest.StashKey[SiteWork]()


def site_work(config: pytest.Config) -> SiteWork:
    if _WORK not in config.stash:
        # What the `tmp_path_factory` fixture returns; a hook has no fixtures to ask.
        tmp_path_factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
        config.stash[_WORK] = SiteWork(tmp_path_factory.mktemp("site"))
    return config.stash[_WORK]


def _rank(item: pytest.Item) -> int:
    fixtures = getattr(item, "fixturenames", ())
    if "lighthouse_audits" in fixtures:
        return 5  # last: the audits run beside everything else (SiteWork.lighthouse)
    if "visits" in fixtures:
        return 4  # they wait for both schemes' visits, which yield the CPU and end late
    if item.get_closest_marker("browser"):
        return 3  # a Chromium of their own, beside the visits' two, which yield to it
    if "site_build" in fixtures:
        return 2  # after the rest, while the site is built (and visited) in the background
    if item.nodeid.startswith("tests/test_docs_digits.py::"):
        return 1  # they reuse what the pages printed in this run (tests/test_docs_digits.py)
    return 0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: each group keeps the order pytest collected it in


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the build, the visits and the audits, now if a collected test needs them; not with
    --update-docs, which rewrites pages while the tests run (they are built when first asked
    for, after the pages)."""
    config = session.config
    if config.option.collectonly or session.testsfailed or config.getoption(
            "--update-docs", default=False):
        return
    needed = {name for item in session.items for name in getattr(item, "fixturenames", ())
              if not _missing(item)}  # else skipped, or failed at once
    if "site_build" in needed:
        site_work(session.config).build()
    if "visits" in needed:
        from tests.browser.conftest import SCHEMES

        for scheme in SCHEMES:
            site_work(session.config).visits(scheme)
    if "lighthouse_audits" in needed:
        from tests.browser import lighthouse

        if lighthouse.LIGHTHOUSE.exists():  # else its test says what is missing
            site_work(session.config).lighthouse()


def pytest_sessionfinish(session: pytest.Session) -> None:
    work = session.config.stash.get(_WORK, None)
    if work is not None:
        work.close()  # a build still running when the session stopped early


@pytest.fixture(scope="session")
def site_build(request: pytest.FixtureRequest) -> builtsite.Build:
    """The site, built once per session as CI builds it (`mkdocs build --strict`, links
    checked, notebooks run) for test_site, test_notebooks, test_pdf and the browser tests."""
    return site_work(request.config).build().result()

