"""A page's running prose: its sentences, their lengths, its reading time, and receipts in it.

How it counts, so that the figures can be argued with:
- Running prose is what a reader reads straight through: paragraphs and list items, also
  inside open boxes (`!!!`, `???+`) and tabs. Left out: front matter, headings, code and its
  output, tables, raw HTML, display math, image alt text, and collapsed boxes (`???`), which
  hold the receipts on purpose.
- Inside a sentence, inline math `\\(...\\)` and inline code count as one word each; a link
  counts as its text; a tie's comment (`<!--= ... -->`) is not read.
- A sentence ends at `.`, `?` or `!` followed by a space and a capital letter, digit, quote or
  bracket, or at the end of its paragraph or list item; abbreviations ("e.g.", "et al.",
  "Fig.", "vs.") and decimals do not end one. A word is a run of non-space characters holding
  a letter or a digit.
- Reading time: prose words (collapsed boxes included, since a reader may open them) at 200 a
  minute, plus 3 seconds for each line of code or output, rounded up to whole minutes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from ffn_docs.containers import flatten_containers

WORDS_PER_MINUTE = 200  # an unhurried reading speed for technical prose
SECONDS_PER_CODE_LINE = 3  # a glance at each line of code or printed output
LONG = 40  # a sentence of more words than this is long

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_INLINE_MATH = re.compile(r"\\\((.+?)\\\)|(?<![\\$])\$(?!\s)([^$\n]+?)\$", re.S)
_MATH_IN_PARAGRAPH = re.compile(r"\\\[.*?\\\]|\$\$.*?\$\$", re.S)  # display math inside a paragraph
_DISPLAY_MATH = re.compile(r"^\s*(\\\[|\$\$)")
# Words after which a full stop does not end a sentence.
_ABBREVIATIONS = ("e.g", "i.e", "al", "Fig", "fig", "vs", "cf", "etc", "approx", "No", "Eq",
                  "eq", "Sec", "sec", "St", "Dr", "Mr", "Ms", "Jr", "resp", "incl")
_CLOSERS = "\"'\u201d\u2019)]*_"  # what may follow a full stop before the space
_END = re.compile(rf"(?<=[.?!])[{re.escape(_CLOSERS)}]*\s+(?=[\"'\u201c\u2018(\[*_]*[A-Z0-9`])")
_WORD = re.compile(r"\S*[^\W_]\S*")


@dataclass(frozen=True)
class Prose:
    """The running prose of one page, and its reading time."""

    sentences: tuple[str, ...]  # running prose, one sentence each
    minutes: int  # reading time, as the module docstring says

    @property
    def words(self) -> tuple[int, ...]:
        return tuple(len(_WORD.findall(s)) for s in self.sentences)

    @property
    def mean_words(self) -> float:
        return sum(self.words) / len(self.words) if self.words else 0.0

    @property
    def long_share(self) -> float:
        """The share of sentences longer than `LONG` words."""
        return sum(w > LONG for w in self.words) / len(self.words) if self.words else 0.0


def _inline_text(source: str) -> str:
    """A paragraph's source as the words a reader reads."""
    text = _MATH_IN_PARAGRAPH.sub(" ", _COMMENT.sub("", source))
    text = _INLINE_MATH.sub(" M ", text)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)(\{[^}]*\})?", " ", text)  # images
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", text)
    # Inline code: one word, its spaces taken out (its text stays, for `receipts`).
    # A backtick stays in front, so that a sentence opening with code still starts a sentence.
    text = re.sub(r"(`+)(.+?)\1", lambda m: " `" + "".join(m[2].split()) + " ", text)
    text = re.sub(r"<[^>]+>", " ", text)  # inline HTML tags
    text = re.sub(r"\{[^}]*\}", " ", text)  # attribute lists
    return " ".join(text.split())


def _split(paragraph: str) -> list[str]:
    parts = _END.split(paragraph)
    sentences: list[str] = []
    for part in parts:
        if sentences and sentences[-1].rstrip(_CLOSERS).rsplit(" ", 1)[-1].rstrip(".") in \
                _ABBREVIATIONS:
            sentences[-1] += " " + part
        else:
            sentences.append(part)
    return [s for s in sentences if _WORD.search(s)]


def _blocks(markdown: str) -> tuple[list[str], int]:
    """The paragraphs of running prose, and the lines of code and output."""
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(markdown)
    paragraphs: list[str] = []
    code_lines = 0
    depth = {"table": 0, "heading": 0}
    for token in tokens:
        for kind in depth:
            if token.type == f"{kind}_open":
                depth[kind] += 1
            elif token.type == f"{kind}_close":
                depth[kind] -= 1
        if token.type in ("fence", "code_block"):
            code_lines += token.content.count("\n")
        elif token.type == "inline" and not any(depth.values()):
            if _DISPLAY_MATH.match(token.content) or token.content.lstrip().startswith("!["):
                continue
            paragraphs.append(_inline_text(token.content))
    return [p for p in paragraphs if p], code_lines


def read(markdown: str) -> Prose:
    """Measure a page's Markdown source."""
    markdown = _FRONT_MATTER.sub("", markdown.replace("\r\n", "\n"))
    running, _ = _blocks(flatten_containers(markdown, collapsed=False))
    everything, code_lines = _blocks(flatten_containers(markdown))
    sentences = tuple(s for p in running for s in _split(p))
    all_words = sum(len(_WORD.findall(p)) for p in everything)
    seconds = all_words / WORDS_PER_MINUTE * 60 + code_lines * SECONDS_PER_CODE_LINE
    return Prose(sentences=sentences, minutes=max(1, math.ceil(seconds / 60)))


def read_page(path: Path) -> Prose:
    return read(path.read_text(encoding="utf-8"))


# `<!-- reading-time -->`: this page's reading time; `<!-- reading-time: a.md b.md -->`: the
# sum of those pages' (paths under docs/). Filled in by `fill_reading_times`.
READING_TIME = re.compile(r"<!--\s*reading-time(?::\s*(?P<pages>[^>]*?))?\s*-->")
DOCS = Path(__file__).resolve().parent.parent / "docs"


def fill_reading_times(markdown: str, docs: Path = DOCS) -> str:
    """Replace each reading-time mark with "N minutes", computed from the pages' lengths."""
    def minutes(m: re.Match[str]) -> str:
        if m["pages"] is None:
            n = read(markdown).minutes
        else:
            paths = [docs / name for name in m["pages"].split()]
            missing = [str(p) for p in paths if not p.is_file()]
            if missing:
                raise ValueError(f"reading-time names pages that do not exist: {missing}")
            n = sum(read_page(p).minutes for p in paths)
        return f"{n} minute{'s' if n != 1 else ''}"

    return READING_TIME.sub(minutes, markdown)


# Receipts: what belongs in a collapsed box or references.md, not in running prose.
RECEIPTS = {
    "a test's name": re.compile(r"\btest_\w+|\btests/"),
    "a source line number": re.compile(r"\.(?:py|js|json|md):\d+|\blines? \d+\b"),
    "a tool of the project": re.compile(r"\bpytest\b|\bscripts/|--update-docs|\bfarm-\w+"),
    "a note about this machine": re.compile(
        r"\bthis machine\b|\bcould not be (?:opened|read|reached|fetched) here\b|"
        r"\b(?:not |un)available here\b|\bin this sandbox\b", re.I),
}


# A pointer into a source: "Section 2.1.2", "Table 3", "Figure 4", "§3", "Appendix B".
POINTER = re.compile(r"\b(?:Sections?|Tables?|Figures?|Fig\.|Appendix|Eq\.|Equation)\s+"
                     r"[A-Z]?\d+(?:\.\d+)*|§\s*\d+")
MAX_POINTERS = 2  # a sentence may point into its sources this often; more is a string of them


def receipts(markdown: str) -> list[tuple[str, str]]:
    """(kind, sentence) for each receipt left in running prose."""
    found = []
    for sentence in read(markdown).sentences:
        for kind, pattern in RECEIPTS.items():
            if pattern.search(sentence):
                found.append((kind, sentence))
        if len(POINTER.findall(sentence)) > MAX_POINTERS:
            found.append(("a string of section pointers", sentence))
    return found
