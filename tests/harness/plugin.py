"""pytest plugin: run the docs' python blocks and check what the page shows against what they print.

pytest-markdown-docs collects and executes the fences; this plugin adds what it lacks:
- fences inside admonitions and content tabs are collected (a container-aware parser);
- stdout of each block is compared with the output block under it (a ```text fence or a
  `<!-- output: markdown -->` region); a block that prints with nothing under it fails unless
  its code says `# output not shown: <reason>`;
- prose numbers tied to code (`0.602<!--= {expr:.3f} -->`) are compared with the f-string
  evaluated in the namespace of the last block above them;
- `continuation` chains reuse the previous block's namespace instead of re-running the chain;
- `--update-docs` rewrites outputs and prose numbers in place instead of failing.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from markdown_it import MarkdownIt
from pytest_markdown_docs._runners import DefaultRunner, register_runner
from pytest_markdown_docs.definitions import FenceTestDefinition

from tests.harness import page as pages
from tests.harness.page import Block, Page

UPDATE_OPTION = "--update-docs"
# numpy's print options as the harness found them; every chain of blocks starts from these.
_NUMPY_DEFAULTS = dict(np.get_printoptions())


class DocMismatch(AssertionError):
    """The page shows something other than what its code produces."""


@dataclass
class Edit:
    start: int  # first line replaced
    end: int  # one past the last line replaced
    lines: list[str]
    what: str


@dataclass
class State:
    """Per-session state: parsed pages, live namespaces, pending rewrites."""

    update: bool
    pages: dict[Path, Page] = field(default_factory=dict)
    # path -> (start line of the last block that ran cleanly, its namespace, numpy print options)
    live: dict[Path, tuple[int, dict[str, Any], dict[str, Any] | None]] = field(
        default_factory=dict)
    edits: dict[Path, list[Edit]] = field(default_factory=dict)

    def page(self, path: Path) -> Page:
        if path not in self.pages:
            try:
                self.pages[path] = pages.load(path)
            except ValueError as exc:  # a malformed page: report it like a wrong number
                raise DocMismatch(str(exc)) from None
        return self.pages[path]


# A stack, so that a pytest run inside a test (the harness's own tests) gets its own state.
_states: list[State] = []


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        UPDATE_OPTION,
        action="store_true",
        help="rewrite output blocks and prose numbers in docs/ to what the code produces now",
    )


def pytest_configure(config: pytest.Config) -> None:
    _states.append(State(update=config.getoption(UPDATE_OPTION)))


def pytest_unconfigure(config: pytest.Config) -> None:
    _states.pop()


@pytest.hookimpl(tryfirst=True)  # before pytest-markdown-docs' own CommonMark parser
def pytest_markdown_docs_markdown_it() -> MarkdownIt:
    return pages.parser()


def _print_options() -> dict[str, Any]:
    return dict(np.get_printoptions())


def _reset_print_state(options: dict[str, Any] | None) -> None:
    """Restore numpy's print options (a chain's own, or the defaults) and close figures."""
    np.set_printoptions(**(options or _NUMPY_DEFAULTS))
    plt = sys.modules.get("matplotlib.pyplot")  # close figures only if a page imported pyplot
    if plt is not None:
        plt.close("all")


def _exec(block: Block, path: Path, namespace: dict[str, Any]) -> None:
    # Padding with blank lines makes tracebacks name the Markdown file's own line numbers.
    code = compile("\n" * block.start + block.code, str(path), "exec", dont_inherit=True)
    exec(code, namespace)


@register_runner(default=True)
class CheckedRunner(DefaultRunner):
    """Runs one block, then checks its printed output and the prose numbers after it."""

    def runtest(self, test: FenceTestDefinition, args: dict[str, Any], **_: Any) -> None:
        state = _states[-1]
        path = Path(test.source_path)
        page = state.page(path)
        block = page.block_at(test.start_line)
        if page.orphan_ties and block is page.blocks[0]:
            n, m = page.orphan_ties[0]
            raise DocMismatch(f"{page.name}:{n + 1}: prose number {m['shown']!r} is tied to code "
                              "but no python block comes before it")

        namespace, options = self._namespace(state, page, block, args)
        _reset_print_state(options)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                _exec(block, path, namespace)
            state.live[path] = (block.start, namespace, _print_options())
            problems = _check_output(state, page, block, printed.getvalue())
            problems += _check_ties(state, page, block, namespace)
        finally:
            _reset_print_state(None)
        if problems:
            raise DocMismatch("\n\n".join(problems))

    @staticmethod
    def _namespace(
        state: State, page: Page, block: Block, args: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        chain = page.chain_before(block)
        if not chain:
            state.live.pop(page.path, None)
            return args, None
        last = state.live.get(page.path)
        if last is not None and last[0] == chain[-1].start:
            return last[1], last[2]
        # Run alone (say with -k): replay the chain quietly, then run this block.
        _reset_print_state(None)
        with contextlib.redirect_stdout(io.StringIO()):
            for earlier in chain:
                _exec(earlier, page.path, args)
        return args, _print_options()

    def repr_failure(self, test: FenceTestDefinition, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, DocMismatch):
            return str(excinfo.value)
        # The deepest frame in the page names the Markdown line that raised.
        in_page = [n for f, n in traceback.walk_tb(excinfo.tb)
                   if f.f_code.co_filename == str(test.source_path)]
        line = in_page[-1] if in_page else test.start_line
        where = f"{pages.display(Path(test.source_path))}:{line}: the code block raised\n"
        return where + super().repr_failure(test, excinfo, style)


def _diff(shown: list[str], produced: list[str]) -> str:
    return "\n".join(difflib.unified_diff(
        shown, produced, "shown on the page", "printed by the code", lineterm=""))


def _strip(lines: list[str]) -> list[str]:
    """Trailing spaces and blank lines at either end do not count (editors remove them)."""
    lines = [ln.rstrip() for ln in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _check_output(state: State, page: Page, block: Block, printed: str) -> list[str]:
    produced = _strip(printed.split("\n"))
    out = block.output
    where = f"{page.name}:{block.start}"  # the opening fence's 1-based line
    if out is None:
        if not produced or block.exempt:
            return []
        if state.update:
            ind = block.indent
            new = ["", f'{ind}```text title="Output"', *[ind + ln if ln else "" for ln in produced],
                   f"{ind}```"]
            _record(state, page, Edit(block.after, block.after, new, "output block added"))
            return []
        return [f"{where}: the block prints but no output block follows it "
                "(add one, run with --update-docs, or write `# output not shown: <reason>`)\n"
                + _diff([], produced)]
    raw = [ln[len(out.indent):] for ln in page.lines[out.start:out.end]]
    shown = _strip(raw)
    if shown == produced:
        return []
    # Name the first line that differs, as a line of the Markdown file.
    first = next((i for i, (a, b) in enumerate(zip(shown, produced, strict=False)) if a != b),
                 min(len(shown), len(produced)))
    lead = next((i for i, ln in enumerate(raw) if ln.strip()), 0)  # blank lines _strip removed
    line = out.start + lead + first + 1
    if state.update:
        if not produced:
            _record(state, page, Edit(block.after, out.last, [], "output block removed"))
        else:
            body = [out.indent + ln if ln else "" for ln in produced]
            if out.kind == "markdown":
                body = ["", *body, ""]
            _record(state, page, Edit(out.start, out.end, body, "output updated"))
        return []
    return [f"{page.name}:{line}: the output block differs from what the block at line "
            f"{block.start} prints\n" + _diff(shown, produced)]


def _check_ties(state: State, page: Page, block: Block, namespace: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    fixed: dict[int, str] = {}
    for n, m in block.ties:
        try:
            value = eval("f" + repr(m["expr"]), namespace)  # the comment is an f-string
        except Exception as exc:  # report it at the page's line, not deep in eval
            problems.append(f"{page.name}:{n + 1}: prose tie {m['expr']!r} cannot be "
                            f"evaluated: {type(exc).__name__}: {exc}")
            continue
        if value == m["shown"]:
            continue
        if state.update:
            line = fixed.get(n, page.lines[n])
            fixed[n] = line.replace(m.group(0), f"{value}<!--= {m['expr']} -->", 1)
        else:
            problems.append(f"{page.name}:{n + 1}: prose number shows {m['shown']!r} but "
                            f"{m['expr']!r} gives {value!r}")
    for n, line in fixed.items():
        _record(state, page, Edit(n, n + 1, [line], "prose number updated"))
    return problems


def _record(state: State, page: Page, edit: Edit) -> None:
    state.edits.setdefault(page.path, []).append(edit)


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = _states[-1]
    for path, edits in state.edits.items():
        lines = path.read_text("utf8").split("\n")
        for e in sorted(edits, key=lambda e: e.start, reverse=True):  # bottom-up: lines stay valid
            lines[e.start : e.end] = e.lines
        path.write_text("\n".join(lines), "utf8")
        counts: dict[str, int] = {}
        for e in edits:
            counts[e.what] = counts.get(e.what, 0) + 1
        summary = ", ".join(f"{k}: {v}" for k, v in counts.items())
        session.config.get_terminal_writer().line(
            f"{UPDATE_OPTION}: rewrote {pages.display(path)} ({summary})")
