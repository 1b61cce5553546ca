"""A Markdown page as the doc-tests and the site's build read it: its python blocks (fences,
options, the output shown under each) and the numbers its prose ties to code.

The harness (harness/) runs and checks these blocks; the build (hooks/reader_notebooks.py,
reader_notebook.py) turns them into a reader's notebook. Both read a page here, the same way.
Line numbers are 0-based indices into the page's lines everywhere in this module; the
harness adds 1 when it talks to a person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from ffn_docs.containers import FENCE, flatten_containers

# Python fence languages the harness runs.
PYTHON_LANGS = ("py", "python", "python3")
# Opening and closing lines of an output region rendered as Markdown (tables, lists).
MD_OUTPUT_OPEN = "<!-- output: markdown -->"
MD_OUTPUT_CLOSE = "<!-- /output -->"
# A number in prose tied to code: `0.602<!--= {gelu_0772:.3f} -->`. The comment is an f-string;
# the shown text is what is right before it: a number (a digit, maybe after a sign or a point,
# then digits, letters and .,+-−%×·, ending in a digit, a letter, % or ×: `−3`, `1,024`,  # noqa: RUF003
# `4.7e-04`, `46.7B`, `12%`) or a word (letters and inner hyphens: `two-thirds`). Neither holds
# `_`, so `size_512` shows 512, and `_0.602_<!--= ... -->` and `**53**<!--= ... -->` show 0.602
# and 53 (emphasis may close around the number). One mark of punctuation may come between the
# number (and its emphasis) and the comment: `It is 42.<!--= {n} -->` shows 42.
_NUMBER = r"[+\-−]?\.?\d(?:(?:[^\W_]|[.,+\-−%×·])*(?:[^\W_]|[%×]))?"  # noqa: RUF001
_WORD = r"[^\W\d_]+(?:-[^\W\d_]+)*"
SHOWN = re.compile(rf"(?:{_NUMBER}|{_WORD})")
TIE = re.compile(rf"(?P<shown>{SHOWN.pattern})(?P<emphasis>[*_]{{0,3}})(?P<punctuation>[.,;:]?)"
                 r"<!--=\s*(?P<expr>.*?)\s*-->")
TIE_OPEN = "<!--="
BOM = "\ufeff"
# Line endings as CommonMark (and so MkDocs) reads them: a bare CR ends a line too.
NEWLINES = re.compile(r"\r\n|\r|\n")
# Fence options the harness acts on. Anything else on a python fence is a typo
# (`continuaton`) that would silently change what runs, except `key="value"` attributes
# (Material's `title="..."`, `linenums="1"`, `hl_lines="2 3"`), which only change the looks.
# `torch` marks a PyTorch block: run only where `import torch` works (harness/running.py).
OPTIONS = ("continuation", "notest", "torch")
_ATTRIBUTE = re.compile(r"""[\w-]+=(?:"[^"]*"|'[^']*'|\S*)""")
# A block that prints but shows no output says why, in a comment the reader sees.
EXEMPT = re.compile(r"#[ \t]*output not shown:[ \t]*\S")


class ContainerAwareMarkdownIt(MarkdownIt):
    """CommonMark parser that also sees fences inside admonitions and content tabs."""

    def parse(self, src: str, env: object = None) -> list:  # type: ignore[override]
        # A byte-order mark hides a fence on the first line from CommonMark; MkDocs drops it.
        return super().parse(flatten_containers(src.removeprefix(BOM)), env)


def parser() -> MarkdownIt:
    return ContainerAwareMarkdownIt("commonmark")


@dataclass
class Output:
    """What the page shows under a block: a ```text fence or a Markdown region."""

    kind: str  # "text" or "markdown"
    first: int  # first line of the whole construct (opening fence or comment)
    start: int  # first content line
    end: int  # one past the last content line
    last: int  # one past the closing fence or comment
    indent: str
    fence: str = ""  # a text fence's opening run, e.g. "```"
    closed: bool = True  # False for a text fence that runs to the end of the page


@dataclass
class Block:
    """An executed python fence and what the page attaches to it."""

    start: int  # first code line
    end: int  # one past the closing fence
    options: frozenset[str]
    indent: str
    code: str
    output: Output | None = None
    after: int = 0  # where a missing output block would be inserted
    ties: list[tuple[int, re.Match[str]]] = field(default_factory=list)

    @property
    def continuation(self) -> bool:
        return "continuation" in self.options

    @property
    def torch(self) -> bool:
        return "torch" in self.options

    @property
    def exempt(self) -> bool:
        return bool(EXEMPT.search(self.code))


@dataclass
class Page:
    path: Path
    lines: list[str]
    blocks: list[Block]
    orphan_ties: list[tuple[int, re.Match[str]]]
    newline: str = "\n"  # the page's line ending, kept when it is rewritten

    @property
    def name(self) -> str:
        return display(self.path)

    def block_at(self, start: int) -> Block:
        for b in self.blocks:
            if b.start == start:
                return b
        raise LookupError(f"{self.path}: no python block starts at line {start + 1}")

    def parent(self, block: Block) -> Block | None:
        """The block whose namespace a continuation block continues (None: it starts afresh).

        That is the block above it, except that a numpy block passes over torch blocks: they
        are side branches, so a page computes the same with torch as without it.
        """
        if not block.continuation:
            return None
        above = self.blocks[: self.blocks.index(block)]
        if not block.torch:
            above = [b for b in above if not b.torch]
        return above[-1] if above else None

    def chain_before(self, block: Block) -> list[Block]:
        """The blocks a continuation block builds on, first to last."""
        chain: list[Block] = []
        parent = self.parent(block)
        while parent is not None:
            chain.insert(0, parent)
            parent = self.parent(parent)
        return chain


def display(path: Path) -> str:
    """The path as a person would type it: relative to the current directory when possible."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" "))]


def read(path: Path) -> tuple[list[str], str]:
    """The page's lines (without line endings) and its line ending, "\\r\\n", "\\r" or "\\n".

    A mixed page is written back with CRLF if it has any, else with LF.
    """
    text = path.read_bytes().decode("utf8")
    newline = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
    return NEWLINES.split(text), newline


def fence_info(info: str) -> list[str]:
    """A fence's language, then its options and attributes: from `python continuation`, or
    from PyMdown superfences' `{.python continuation title="x"}`, where the language is the
    first word that starts with a dot."""
    info = info.strip()
    if not info.startswith("{"):
        return info.split()
    words = info.strip("{}").split()
    lang = next((w for w in words if w.startswith(".")), None)
    if lang is None:
        return words
    words.remove(lang)
    return [lang[1:], *words]


def block_starts(text: str) -> list[int]:
    """The first code line (0-based) of each python block of the page's text that runs, even
    on a page too malformed to `parse` (each block's test then reports it)."""
    starts = []
    for tok in parser().parse(text):
        info = fence_info(tok.info) if tok.type == "fence" else []
        if tok.map and info and info[0] in PYTHON_LANGS and "notest" not in info:
            starts.append(tok.map[0] + 1)
    return starts


def _check_options(info: str, where: str) -> None:
    words = _ATTRIBUTE.sub(" ", info.strip().strip("{}")).split()
    lang = next((w for w in words if w.startswith(".")), None) if info.strip()[:1] == "{" else None
    for word in words[1:] if lang is None else [w for w in words if w != lang]:
        if word not in OPTIONS:
            valid = ", ".join(OPTIONS)
            raise ValueError(f"{where}: unknown fence option {word!r} (valid: {valid}, "
                             'and attributes such as title="...")')


def load(path: Path) -> Page:
    return parse(path, *read(path))


def parse(path: Path, lines: list[str], newline: str = "\n") -> Page:
    """The page whose lines are ``lines`` (read from ``path``, or to be written there)."""
    text = "\n".join(lines)
    tokens = parser().parse(text)
    blocks: list[Block] = []
    fenced: set[int] = set()  # lines inside any fence: ties are not searched there
    for i, tok in enumerate(tokens):
        if tok.type != "fence" or not tok.map:
            continue
        fenced.update(range(*tok.map))
        info = fence_info(tok.info)
        if not info or info[0] not in PYTHON_LANGS:
            continue
        _check_options(tok.info, f"{display(path)}:{tok.map[0] + 1}")
        if "notest" in info:
            continue
        if not _closed(tok, lines):  # an output added under it would become code
            raise ValueError(f"{display(path)}:{tok.map[0] + 1}: the python fence is never "
                             "closed: it runs to the end of the page (close it)")
        block = Block(
            start=tok.map[0] + 1,
            end=tok.map[1],
            options=frozenset(info[1:]),
            indent=_indent_of(lines[tok.map[0]]),
            code=tok.content,
        )
        block.after = block.end
        j = i + 1
        if j < len(tokens) and tokens[j].type == "ordered_list_open":  # code annotations
            while tokens[j].type != "ordered_list_close" or tokens[j].level != tokens[i].level:
                j += 1
            block.after = max(t.map[1] for t in tokens[i + 1 : j] if t.map)
            j += 1
        block.output = _output_at(tokens, j, lines, path)
        if block.continuation and not blocks:
            raise ValueError(f"{display(path)}:{block.start}: `continuation` but no python block "
                             "above it runs, so there is nothing to continue (remove the option)")
        if block.continuation and not block.torch and all(b.torch for b in blocks):
            raise ValueError(f"{display(path)}:{block.start}: `continuation` but only torch "
                             "blocks run above it, and a numpy block never continues a torch "
                             "block (it must run without torch); start it afresh, or mark it "
                             "`torch`")
        if block.output is not None:  # printed Markdown is output, not prose: no ties in it
            fenced.update(range(block.output.start, block.output.end))
        blocks.append(block)

    orphans: list[tuple[int, re.Match[str]]] = []
    for n, line in enumerate(lines):
        if n in fenced:
            continue
        ties = list(TIE.finditer(line))
        _check_ties(line, ties, f"{display(path)}:{n + 1}")
        for m in ties:
            # A torch block owns no ties: a prose number is checked with or without torch.
            owner = [b for b in blocks if b.start <= n and not b.torch]
            (owner[-1].ties if owner else orphans).append((n, m))
    return Page(path, lines, blocks, orphans, newline)


def _check_ties(line: str, ties: list[re.Match[str]], where: str) -> None:
    """Raise ValueError for a `<!--=` on the line that is not a well-formed tie."""
    starts = {m.end("punctuation") for m in ties}  # where each tie's comment opens
    for at in (m.start() for m in re.finditer(re.escape(TIE_OPEN), line)):
        if at in starts:
            continue
        if "-->" not in line[at:]:
            raise ValueError(f"{where}: a tie comment (`{TIE_OPEN}`) must end (`-->`) on the line "
                             "where it starts")
        # e.g. `(53)<!--= ... -->`: nothing number-like right before it, so nothing checked
        raise ValueError(f"{where}: a `{TIE_OPEN}` comment does not follow a number directly "
                         "(write the number right before it)")
    for m in ties:
        try:
            compile("f" + repr(m["expr"]), where, "eval")
        except SyntaxError as exc:
            if "-->" in line[m.end():]:
                raise ValueError(f"{where}: a tie comment ends at its first `-->`, so its "
                                 f"expression is cut to {m['expr']!r}: an expression cannot "
                                 "contain `-->`") from None
            raise ValueError(f"{where}: prose tie {m['expr']!r} is not a valid f-string: "
                             f"{exc.msg}") from None


def _closed(tok: object, lines: list[str]) -> bool:
    """Whether a fence token ends with a closing fence line (not at the end of the page)."""
    first, last = tok.map  # type: ignore[attr-defined]
    opening = FENCE.match(lines[first].removeprefix(BOM))
    if opening is None:  # a fence in a block quote (`> ````): left to CommonMark
        return True
    fence = opening["fence"]
    closing = rf" *{fence[0]}{{{len(fence)},}} *"
    return last - first >= 2 and re.fullmatch(closing, lines[last - 1]) is not None


def _output_at(tokens: list, j: int, lines: list[str], path: Path) -> Output | None:
    if j >= len(tokens) or not tokens[j].map:
        return None
    tok = tokens[j]
    first, last = tok.map
    if tok.type == "fence" and fence_info(tok.info)[:1] == ["text"]:
        fence = FENCE.match(lines[first])["fence"]  # type: ignore[index]
        closed = _closed(tok, lines)
        return Output("text", first, first + 1, last - 1 if closed else last, last,
                      _indent_of(lines[first]), fence, closed)
    if tok.type == "html_block" and lines[first].strip() == MD_OUTPUT_OPEN:
        for n in range(first + 1, len(lines)):
            if lines[n].strip() == MD_OUTPUT_CLOSE:
                if not any(t.type == "html_block" and t.map and t.map[0] == n for t in tokens):
                    raise ValueError(
                        f"{display(path)}:{first + 1}: the Markdown output's {MD_OUTPUT_CLOSE} "
                        f"(line {n + 1}) is swallowed by what comes before it (an unclosed "
                        "fence or HTML comment?): the rest of the page would be misread")
                return Output("markdown", first, first + 1, n, n + 1, _indent_of(lines[first]))
        raise ValueError(f"{display(path)}:{first + 1}: {MD_OUTPUT_OPEN} has no "
                         f"{MD_OUTPUT_CLOSE} after it")
    return None
