"""The built site as the tests and Lighthouse see it: build it (`mkdocs build --strict`, links
checked, notebooks run), serve it on 127.0.0.1 as GitHub Pages does, and list its pages."""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import io
import os
import re
import subprocess
import sys
import threading
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
AXE_JS = ROOT / "node_modules" / "axe-core" / "axe.min.js"
# Where the browser tests leave screenshots (gitignored); FFN_SCREENSHOTS=DIR moves them.
SCREENSHOTS = Path(os.environ.get("FFN_SCREENSHOTS", ROOT / "tests" / "browser" / "out" /
                                  "screenshots"))


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


def markdown_sources() -> dict[str, str]:
    """The text of every Markdown page under docs/, by its path there."""
    docs = ROOT / "docs"
    return {p.relative_to(docs).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(docs.rglob("*.md"))}


@dataclass(frozen=True)
class Build:
    """One `build`: a test session shares one (the root conftest.py)."""

    dir: Path | None  # the site, None when the build failed
    log: str  # mkdocs' output
    sources: dict[str, str]  # the Markdown pages that did not change while it was built


def build(site_dir: Path) -> Build:
    """`mkdocs build --strict` into ``site_dir``, as CI builds it (BUILD_ENV); never raises
    for a failed build: the strict-build test shows its log."""
    before = markdown_sources()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site_dir)],
        cwd=ROOT, env={**os.environ, **BUILD_ENV}, capture_output=True, text=True, check=False)
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
    prefix = "/"  # the site_url path: the site's root is served there, as on GitHub Pages

    def translate_path(self, path: str) -> str:
        if not path.startswith(self.prefix):
            return os.devnull + "/nothing"  # outside the site: a 404
        return super().translate_path("/" + path[len(self.prefix):])

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
    """Serve a site made by `build` on 127.0.0.1 at a free port, under its site_url path (so
    that 404.html's absolute links work), from a thread, text gzip-compressed with ``compress``
    (as GitHub Pages serves it); yields the site's base URL, ending in "/"."""
    prefix = url_prefix()
    handler = type("Handler", (_Handler,), {"not_found": site_dir / "404.html",
                                            "compress": compress, "prefix": prefix})
    with _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(site_dir))) as server:
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
