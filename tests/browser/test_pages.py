"""Checks on every page of the built site, in both colour schemes (see conftest.visits)."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterable

import pytest

from tests.browser.conftest import MATERIAL_SCHEME, Site, Visit
from tooling import site as sitetools


def check(visits: Iterable[Visit], problems_of: Callable[[Visit], Iterable[str]]) -> None:
    """Fail listing every problem found, page by page."""
    lines = []
    for v in visits:
        problems = list(problems_of(v))
        if problems:
            lines.append(f"{v.name}:")
            lines += [f"    {p}" for p in problems]
    if lines:
        pytest.fail("\n".join(lines), pytrace=False)


def test_sitemap_lists_every_page(site: Site) -> None:
    on_disk = sitetools.html_pages(site.dir)
    assert sorted(site.pages) == sorted(on_disk), "sitemap.xml and the built pages differ"
    nav = {p.url for p in sitetools.nav_pages()}
    assert nav <= set(site.pages), f"nav pages missing from the site: {nav - set(site.pages)}"


def test_every_page_visited_in_both_schemes(site: Site, visits: list[Visit]) -> None:
    assert len(site.pages) >= len(sitetools.nav_pages()) > 1
    check(visits, lambda v: [] if v.status == 200 else [f"HTTP {v.status}"])
    check(visits, lambda v: [] if v.facts["scheme"] == MATERIAL_SCHEME[v.scheme]
                  else [f"colour scheme is {v.facts['scheme']!r}"])


def test_no_console_errors(visits: list[Visit]) -> None:
    check(visits, lambda v: v.console_errors)


def test_no_failed_requests(visits: list[Visit]) -> None:
    check(visits, lambda v: v.failed_requests)


def test_no_request_to_another_host(visits: list[Visit]) -> None:
    check(visits, lambda v: v.foreign_requests)


# A src/href that makes the browser fetch something: scripts, styles, icons, images, frames.
_RESOURCE = re.compile(
    r"<(?:script|img|iframe|source|audio|video|embed)\b[^>]*?\bsrc=[\"']?(https?:)?//"
    r"|<link\b(?=[^>]*\brel=[\"']?(?:stylesheet|preload|modulepreload|icon|manifest))"
    r"[^>]*?\bhref=[\"']?(https?:)?//"
    r"|@import\s+(?:url\()?[\"']?(https?:)?//"
    r"|url\([\"']?(https?:)?//",
    re.IGNORECASE,
)


def test_no_third_party_resource_in_html(site: Site) -> None:
    """Also catches what the visits cannot: resources a page loads only on some interaction."""
    found = []
    for path in sorted(site.dir.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        for match in _RESOURCE.finditer(text):
            found.append(f"{path.relative_to(site.dir)}: {text[match.start():match.end() + 60]!r}")
    if found:
        pytest.fail("resources from another host:\n" + "\n".join(found), pytrace=False)


def test_images_load_and_have_alt_text(visits: list[Visit]) -> None:
    def problems(v: Visit) -> Iterable[str]:
        for img in v.facts["images"]:
            if img["width"] == 0:
                yield f"image did not load: {img['src']}"
            if not (img["alt"] or "").strip():
                yield f"image without alt text: {img['src']}"

    check(visits, problems)


# TeX that reached the reader: delimiters, commands, or $..$ with TeX inside.
_RAW_TEX = re.compile(r"\\[()\[\]]|\\[A-Za-z]{2,}|\$\$|\$[^$\s][^$\n]*?[\\^_{}][^$\n]*?\$")


def test_math_typeset(site: Site, visits: list[Visit]) -> None:
    def problems(v: Visit) -> Iterable[str]:
        facts = v.facts
        for match in _RAW_TEX.finditer(facts["prose"]):
            context = facts["prose"][max(match.start() - 30, 0):match.end() + 30]
            yield f"raw TeX on the page: {context!r}"
        if facts["arithmatexLeft"]:
            yield f"{facts['arithmatexLeft']} arithmatex element(s) not converted to MathML"
        if facts["mathUntypeset"]:
            yield f"{facts['mathUntypeset']} visible <math> element(s) not typeset as MathML"
        expected = site.formulas.get(v.url, 0)
        if facts["math"] < expected:
            yield f"{expected} formulas in its Markdown, {facts['math']} <math> on the page"

    check(visits, problems)
    assert any(v.facts["math"] for v in visits), "no page has math: is the math check blind?"


def test_code_blocks_have_copy_buttons(visits: list[Visit]) -> None:
    def problems(v: Visit) -> Iterable[str]:
        if v.facts["codeWithoutCopy"]:
            yield f"{v.facts['codeWithoutCopy']} of {v.facts['codeBlocks']} code blocks lack copy"
        if v.facts["notebookCellsWithoutCopy"]:
            yield (f"{v.facts['notebookCellsWithoutCopy']} of {v.facts['notebookCells']} "
                   "notebook cells lack a copy button")

    check(visits, problems)
    assert any(v.facts["codeBlocks"] for v in visits), "no code block anywhere: check is blind"


def test_axe_finds_no_violation(visits: list[Visit]) -> None:
    """axe-core, WCAG 2.0/2.1 A and AA and best practice, every page, both schemes."""

    def problems(v: Visit) -> Iterable[str]:
        for violation in v.axe_violations:
            yield f"{violation['id']} ({violation['impact']}): {violation['help']}"
            yield from (f"    {node}" for node in violation["nodes"][:5])
            if len(violation["nodes"]) > 5:
                yield f"    ... and {len(violation['nodes']) - 5} more"

    check(visits, problems)


def test_internal_links_resolve(site: Site, visits: list[Visit]) -> None:
    """Every link on every page (theme included) to this site reaches a page or file that
    exists, and its #fragment, if any, is an id on the target page."""
    ids = {v.url: set(v.facts["ids"]) for v in visits if v.scheme == "light"}

    def problems(v: Visit) -> Iterable[str]:
        for href in sorted(set(v.facts["links"])):
            if not href.startswith(v.base_url):  # where the visit's server served the site
                continue  # another host: GitHub (repository, edit links), Material's site
            target, _, fragment = href.partition("#")
            target = target.split("?")[0][len(v.base_url):]  # site-relative
            if target in ids:
                if fragment and urllib.parse.unquote(fragment) not in ids[target]:
                    yield f"{href}: no element with id {fragment!r}"
            elif not (site.dir / urllib.parse.unquote(target)).is_file():
                yield f"{href}: no such page or file"

    check([v for v in visits if v.scheme == "light"], problems)


def test_every_page_has_title_description_and_canonical(site: Site, visits: list[Visit]) -> None:
    site_url = sitetools.mkdocs_config()["site_url"]
    site_description = sitetools.mkdocs_config()["site_description"]

    def problems(v: Visit) -> Iterable[str]:
        facts = v.facts
        if not facts["h1"]:
            yield "no <h1>"
        if not facts["title"].strip():
            yield "empty <title>"
        if facts["lang"] != "en":
            yield f"<html lang={facts['lang']!r}>"
        if not (facts["description"] or "").strip():
            yield "no meta description"
        elif facts["description"] == site_description and v.url not in ("", "404.html"):
            yield "meta description is the site's: give the page a `description:` of its own"
        if facts["canonical"] != site_url + v.url:
            yield f"canonical link {facts['canonical']!r}, expected {site_url + v.url!r}"

    check([v for v in visits if v.scheme == "light"], problems)
