"""The references ledger, read straight from the Markdown (no site build).

docs/references.md is a ledger: each entry ends with its anchor (`{#vaswani-2017}`) and says
where it is used ("Used in [GELU](gelu.md), ..."). These tests keep it true:

- every `references.md#...` link on a page points to an anchor the references page has;
- each entry's "Used in" list is exactly the set of pages that link to it, and no entry is
  without a use;
- a paragraph that credits "X et al." links the references page, so the claim has its entry;
- the home page's list of chapters links every page of mkdocs.yml's nav.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REFERENCES = DOCS / "references.md"

_ANCHOR = re.compile(r"^\{#(?P<anchor>[a-z0-9-]+)\}\s*$")
_LINK_TO_ENTRY = re.compile(r"\]\((?:\./)?references\.md#(?P<anchor>[^)\s]+)\)")
_PAGE_LINK = re.compile(r"\]\((?P<page>[\w./-]+\.(?:md|ipynb))(?:#[^)]*)?\)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def prose(path: Path) -> list[str]:
    """The page's lines with fenced code, HTML comments' bodies and output regions blanked,
    so that line numbers stay those of the file."""
    lines = path.read_text("utf8").splitlines()
    out, fence, in_output = [], None, False
    for line in lines:
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            out.append("")
        elif fence is not None:
            if match and match.group(1).startswith(fence[0]) and len(match.group(1)) >= len(
                    fence) and line.strip() == match.group(1):
                fence = None
            out.append("")
        elif line.strip() == "<!-- output: markdown -->":
            in_output = True
            out.append("")
        elif line.strip() == "<!-- /output -->":
            in_output = False
            out.append("")
        else:
            out.append("" if in_output else line)
    return out


def paragraphs(lines: list[str]) -> list[tuple[int, str]]:
    """(first line number, 1-based; text) of each run of non-blank lines."""
    found, start, text = [], None, []
    for n, line in enumerate([*lines, ""], 1):
        if line.strip():
            if start is None:
                start = n
            text.append(line.strip())
        elif start is not None:
            found.append((start, " ".join(text)))
            start, text = None, []
    return found


def entries() -> dict[str, set[str]]:
    """Each entry's anchor and the pages its "Used in" list names."""
    ledger: dict[str, set[str]] = {}
    for _, text in paragraphs(REFERENCES.read_text("utf8").splitlines()):
        anchor = re.search(r"\{#(?P<anchor>[a-z0-9-]+)\}$", text)
        if anchor is None:
            continue
        used = text.split("Used in", 1)[1] if "Used in" in text else ""
        ledger[anchor["anchor"]] = {m["page"] for m in _PAGE_LINK.finditer(used)}
    return ledger


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if p != REFERENCES)


def links_to_entries() -> dict[str, set[str]]:
    """Anchor -> the pages (paths relative to docs/) that link to it."""
    linked: dict[str, set[str]] = {}
    for path in pages():
        for line in prose(path):
            for m in _LINK_TO_ENTRY.finditer(line):
                linked.setdefault(m["anchor"], set()).add(path.relative_to(DOCS).as_posix())
    return linked


def test_the_ledger_parses() -> None:
    ledger = entries()
    assert len(ledger) >= 20, f"only {len(ledger)} entries found in references.md"


def test_every_link_to_the_references_names_an_existing_entry() -> None:
    ledger = entries()
    missing = sorted(f"{page} -> #{anchor}" for anchor, where in links_to_entries().items()
                     if anchor not in ledger for page in where)
    assert not missing, "links to anchors references.md does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize("anchor", sorted(entries()))
def test_used_in_lists_the_pages_that_link_to_the_entry(anchor: str) -> None:
    listed = entries()[anchor]
    linking = links_to_entries().get(anchor, set())
    assert linking, f"#{anchor} is linked from no page: cite it or remove the entry"
    assert listed == linking, (
        f"#{anchor}: 'Used in' lists {sorted(listed)}, but the pages that link to it are "
        f"{sorted(linking)} (missing from the list: {sorted(linking - listed)}; listed but "
        f"not linking: {sorted(listed - linking)})")


@pytest.mark.parametrize("path", pages(), ids=lambda p: p.name)
def test_a_paragraph_that_credits_et_al_links_its_entry(path: Path) -> None:
    """'Xiong et al. (2020) show ...' needs a link to the entry that says which paper.

    Headings and figures (alt text cannot hold a link) are exempt; the text around them
    links the entry."""
    unlinked = [n for n, text in paragraphs(prose(path))
                if re.search(r"\bet al\.", text) and "references.md#" not in text
                and not text.startswith(("#", "!["))]
    assert not unlinked, (f"{path.name}: paragraphs at lines {unlinked} credit 'et al.' "
                          "without linking references.md")


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's loader: unknown tags (`!ENV [...]`) read as plain values."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def nav_pages(nav: Any) -> list[str]:
    """Every page file of the nav, in order."""
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def test_the_home_page_lists_every_page_of_the_nav() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text("utf8"), Loader=_Loader)
    nav = [p for p in nav_pages(config["nav"]) if p != "index.md"]
    home = (DOCS / "index.md").read_text("utf8")
    section = home.split("## The chapters", 1)
    assert len(section) == 2, "index.md has no '## The chapters' section"
    linked = {m["page"] for m in _PAGE_LINK.finditer(section[1].split("\n## ", 1)[0])}
    missing = [page for page in nav if page not in linked]
    assert not missing, f"the home page's list of chapters does not link {missing}"
