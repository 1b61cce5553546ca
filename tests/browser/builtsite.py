"""Build the site, serve it on 127.0.0.1, and list its pages: shared by the browser tests
(tests/browser/conftest.py) and the Lighthouse run (scripts/lighthouse)."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ffn_docs import chromium

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = chromium.PATH
CHROMIUM_ARGS = chromium.ARGS
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"


class _LenientLoader(yaml.SafeLoader):
    """Reads mkdocs.yml even when it holds `!!python/name:` or `!ENV` tags (as None)."""


_LenientLoader.add_multi_constructor("", lambda loader, suffix, node: None)


@functools.cache
def mkdocs_config() -> dict[str, Any]:
    with open(ROOT / "mkdocs.yml", encoding="utf-8") as f:
        config: dict[str, Any] = yaml.load(f, Loader=_LenientLoader)
    return config


def url_prefix() -> str:
    """The path the site is published under, from site_url: "/ffn-by-the-numbers/"."""
    return urllib.parse.urlsplit(mkdocs_config()["site_url"]).path.rstrip("/") + "/"


# The build the tests (and scripts/lighthouse) check: every link checked (htmlproofer) and
# every notebook run, whatever the shell says (./scripts/serve turns both off for speed).
BUILD_ENV = {"NO_MKDOCS_2_WARNING": "1", "FFN_CHECK_LINKS": "true", "FFN_NOTEBOOK_CACHE": "false"}


def run_in_own_group(args: list[str], env: dict[str, str],
                     started: Callable[[subprocess.Popen[str]], object] | None = None
                     ) -> subprocess.CompletedProcess[str]:
    """Run ``args`` from the repository root in a process group of its own, so the tests can
    stop it with every process it starts (kernels, Chromium); ``started`` is given the
    process as soon as it runs."""
    with subprocess.Popen(args, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True) as process:
        if started is not None:
            started(process)
        stdout, stderr = process.communicate()
    return subprocess.CompletedProcess(args, process.returncode, stdout, stderr)


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name: state, ppid, ... ([] if gone)."""
    try:
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def descendants(pid: int) -> list[int]:
    """The processes started, directly or not, by process ``pid`` (from /proc; none where
    there is no /proc, as on macOS)."""
    parents = {int(entry.name): int(fields[1]) for entry in Path("/proc").glob("[0-9]*")
               if len(fields := _stat(entry.name)) > 1}
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _alive(pid: int) -> bool:
    state = _stat(pid)[:1]
    return state not in ([], ["Z"])  # a zombie is gone but for its parent's wait


def stop_with_descendants(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Stop ``process`` (SIGTERM, then SIGKILL) and every process it started, and wait until
    they are gone: a browser's helper processes may outlive it for a moment, and a directory
    they write to can be removed only after them."""
    started = descendants(process.pid)
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for pid in started:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.05)


def cpu_priority(pids: list[int], nice: int) -> None:
    """Set the CPU weight of the sessions of ``pids`` to that of a nice value (-20 to 19),
    through Linux's autogroups (/proc/<pid>/autogroup): the scheduler first shares the CPU
    between sessions, whatever the nice values of the processes inside them, and every
    Chromium that Playwright starts is a session of its own. At 19, every other session has
    the CPU first. Lowering needs no privilege, raising needs CAP_SYS_NICE (root on these
    machines, where .ci/run runs; not in GitHub's container job). Autogroups apply only where
    the kernel has them on and the processes are in the root CPU cgroup (so here, but not in
    most containers); elsewhere, and on macOS, nothing changes."""
    for pid in pids:
        with contextlib.suppress(OSError):
            Path(f"/proc/{pid}/autogroup").write_text(str(nice))


def call_in_own_group(function: str, args: list[str], env: dict[str, str],
                      started: Callable[[subprocess.Popen[str]], object] | None = None) -> Any:
    """Call ``function`` ("module:name") with ``args`` in a Python process (and process group)
    of its own, with ``env`` (run_in_own_group), and return what it returned, passed back as
    JSON. The tests run the visits and the audits this way from threads, not on the threads:
    pytester's tests, running meanwhile, empty sys.modules and fill it again (pytest's
    SysModulesSnapshot.restore), and an import on another thread at that moment breaks the
    module for the rest of the session (seen: every visit failed, NameError in asyncio)."""
    module, name = function.split(":")
    with tempfile.TemporaryDirectory(prefix="ffn-call-") as tmp:
        out = Path(tmp) / "result.json"
        code = (f"import json, pathlib, sys; from {module} import {name}; "
                f"pathlib.Path(sys.argv[1]).write_text(json.dumps({name}(*sys.argv[2:])))")
        result = run_in_own_group([sys.executable, "-c", code, str(out), *args], env, started)
        if result.returncode != 0:
            raise RuntimeError(f"{function}{tuple(args)} failed:\n{result.stdout}{result.stderr}")
        return json.loads(out.read_text(encoding="utf-8"))


def _build(site_dir: Path, started: Callable[[subprocess.Popen[str]], object] | None = None
           ) -> subprocess.CompletedProcess[str]:
    """Run the build; ``started`` is given the process (to stop it if the tests stop)."""
    args = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)]
    return run_in_own_group(args, {**os.environ, **BUILD_ENV}, started)


def site_dir_under(root: Path) -> Path:
    """Where `build` puts the site: ``root`` + the site_url path, as GitHub Pages serves it."""
    return root.joinpath(*url_prefix().strip("/").split("/"))


def build(root: Path) -> Path:
    """`mkdocs build --strict` into ``root`` + the site_url path (where GitHub Pages serves
    it), so that 404.html's absolute links work; returns the site's directory. Raises with
    mkdocs' output when the build fails."""
    site_dir = site_dir_under(root)
    result = _build(site_dir)
    if result.returncode != 0:
        raise RuntimeError(f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}")
    return site_dir


def markdown_sources() -> dict[str, str]:
    """The text of every Markdown page under docs/, by its path there."""
    docs = ROOT / "docs"
    return {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(docs.rglob("*.md"))}


@dataclass(frozen=True)
class Build:
    """One `build` for a whole test session (tests/conftest.py), shared by the strict-build
    test, the notebook tests and the browser tests."""

    dir: Path | None  # the site, None when the build failed
    log: str  # mkdocs' output
    sources: dict[str, str]  # the Markdown pages that did not change while it was built


def build_once(root: Path, started: Callable[[subprocess.Popen[str]], object] | None = None
               ) -> Build:
    before = markdown_sources()
    site_dir = site_dir_under(root)
    result = _build(site_dir, started)
    after = markdown_sources()
    return Build(site_dir if result.returncode == 0 else None, result.stdout + result.stderr,
                 {src: text for src, text in before.items() if after.get(src) == text})


# What GitHub Pages sends gzip-compressed to a browser that accepts it: text, not images.
_COMPRESSIBLE = ("text/", "application/javascript", "application/json", "application/xml",
                 "image/svg+xml")


@functools.lru_cache(maxsize=256)
def _gzipped(path: str, mtime_ns: int, size: int) -> bytes:
    with open(path, "rb") as f:
        return gzip.compress(f.read(), compresslevel=6, mtime=0)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """http.server's handler, quiet, answering a missing path with the site's 404.html (as
    GitHub Pages does) instead of http.server's own error page; with ``compress``, it sends
    text files (HTML, CSS, JS, JSON, SVG, XML) gzip-compressed to a client that accepts gzip,
    as GitHub Pages does (http.server alone sends everything uncompressed)."""

    not_found: Path | None = None
    compress = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_head(self) -> Any:
        accepts = self.headers.get("Accept-Encoding", "")
        if not self.compress or "gzip" not in accepts.replace(" ", "").split(","):
            return super().send_head()
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            if not urllib.parse.urlsplit(self.path).path.endswith("/"):
                return super().send_head()  # http.server's redirect to the slash
            path = os.path.join(path, "index.html")
        content_type = self.guess_type(path)
        if not os.path.isfile(path) or not content_type.startswith(_COMPRESSIBLE):
            return super().send_head()
        stat = os.stat(path)
        body = _gzipped(path, stat.st_mtime_ns, stat.st_size)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return io.BytesIO(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        if code != 404 or self.not_found is None or not self.not_found.is_file():
            super().send_error(code, message, explain)
            return
        body = self.not_found.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # the browser hung up: fine
            super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(site_dir: Path, compress: bool = False) -> Iterator[str]:
    """Serve a site made by `build` on 127.0.0.1 at a free port, under its site_url path, from
    a thread (what `python -m http.server` does), text gzip-compressed with ``compress`` (as
    GitHub Pages serves it); yields the site's base URL, ending in "/"."""
    prefix = url_prefix()
    root = site_dir
    for _ in range(len(prefix.strip("/").split("/")) if prefix != "/" else 0):
        root = root.parent
    handler = type("Handler", (_Handler,), {"not_found": site_dir / "404.html",
                                            "compress": compress})
    with _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(root))) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}{prefix}"
        finally:
            server.shutdown()
            thread.join()


def page_url(src: str) -> str:
    """The site-relative URL MkDocs builds a nav source to: `gelu.md` -> `gelu/`,
    `index.md` -> ``, `notebooks/training.ipynb` -> `notebooks/training/`."""
    stem = src.rsplit(".", 1)[0]
    if stem == "index" or stem.endswith("/index"):
        return stem[: -len("index")]
    return stem + "/"


@dataclass(frozen=True)
class NavPage:
    title: str
    src: str  # path under docs/
    url: str  # site-relative, "" for the home page


def nav_pages() -> list[NavPage]:
    """The pages of mkdocs.yml's nav, in reading order (external links left out)."""
    pages: list[NavPage] = []

    def walk(items: list[Any]) -> None:
        for item in items:
            entries = [(item, item)] if isinstance(item, str) else list(item.items())
            for title, value in entries:
                if isinstance(value, list):
                    walk(value)
                elif isinstance(value, str) and "://" not in value:
                    pages.append(NavPage(str(title), value, page_url(value)))

    walk(mkdocs_config().get("nav") or [])
    return pages


def chapters() -> list[NavPage]:
    """The nav's Markdown pages other than the home page and generated API references."""
    docs = ROOT / "docs"
    return [p for p in nav_pages() if p.url and p.src.endswith(".md")
            and ":::" not in (docs / p.src).read_text(encoding="utf-8")]


def formulas(src: Path | str) -> int:
    """How many formulas (``\\(`` or ``\\[``) a Markdown page (a path or its text) has
    outside code."""
    text = src.read_text(encoding="utf-8") if isinstance(src, Path) else src
    text = re.sub(r"^( *)(```|~~~).*?^\1\2", "", text, flags=re.S | re.M)  # fences
    text = re.sub(r"`[^`\n]+`", "", text)  # inline code
    return len(re.findall(r"\\\(|\\\[", text))


def sitemap_pages(site_dir: Path) -> list[str]:
    """Site-relative URLs of every page in the built sitemap.xml, in its order."""
    site_url = mkdocs_config()["site_url"]
    ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    urls = []
    for loc in ET.parse(site_dir / "sitemap.xml").getroot().iterfind("sm:url/sm:loc", ns):
        text = (loc.text or "").strip()
        if not text.startswith(site_url):
            raise ValueError(f"sitemap.xml: {text!r} is not under site_url {site_url!r}")
        urls.append(text[len(site_url):])
    return urls


def html_pages(site_dir: Path) -> list[str]:
    """Site-relative URLs of every HTML page written to ``site_dir`` (404.html left out)."""
    urls = []
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir).as_posix()
        if rel != "404.html":
            urls.append(rel.removesuffix("index.html"))
    return urls
