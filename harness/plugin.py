"""pytest plugin: run the docs' python blocks and check what the page shows against what they print.

Each python fence of a Markdown file is a test (`page.md::[CodeFence#2][line:40]`) that runs
it and then checks the page against what it did:
- fences inside admonitions and content tabs are collected too (a container-aware parser);
- stdout of each block is compared with the output block under it (a ```text fence or a
  `<!-- output: markdown -->` region); a block that prints with nothing under it fails unless
  its code says `# output not shown: <reason>`;
- prose numbers tied to code (`0.602<!--= {expr:.3f} -->`) are compared with the f-string
  evaluated in the namespace of the last block above them (plus `words`, harness/words.py);
- `continuation` chains reuse the previous block's namespace instead of re-running the chain;
- `torch` blocks (PyTorch tabs) run only where `import torch` works, else they are skipped
  with a visible reason (failed under FFN_REQUIRE_TORCH=1); they are side branches of a chain;
- `--update-docs` rewrites outputs and prose numbers in place instead of failing.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import stat
import sys
import tempfile
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness import optional, words
from harness import page as pages
from harness.page import Block, Page

UPDATE_OPTION = "--update-docs"
# numpy's print options as the harness found them; every chain of blocks starts from these.
_NUMPY_DEFAULTS = dict(np.get_printoptions())


class DocMismatch(AssertionError):
    """The page shows something other than what its code produces."""


class HarnessError(Exception):
    """The harness itself failed while checking a block that ran: a bug here, not in the page."""


@dataclass
class Edit:
    start: int  # first line replaced
    end: int  # one past the last line replaced
    lines: list[str]
    what: str


@dataclass
class Live:
    """What the last block of a page that ran cleanly leaves for a continuation block."""

    start: int  # its first code line
    namespace: dict[str, Any]
    print_options: dict[str, Any]
    cwd: str  # a chain keeps its own working directory, as it keeps its print options


@dataclass
class State:
    """Per-session state: parsed pages, live namespaces, pending rewrites."""

    update: bool
    pages: dict[Path, Page | None] = field(default_factory=dict)  # None: malformed, reported
    live: dict[Path, Live] = field(default_factory=dict)
    branch: dict[Path, Live] = field(default_factory=dict)  # the last torch block's, likewise
    edits: dict[Path, list[Edit]] = field(default_factory=dict)
    # What each block that ran printed and gave its ties, by page and start line: a rewritten
    # page is read back and must show exactly this before it is written; `page_outputs` too.
    ran: dict[Path, dict[int, tuple[str, list[str | Exception]]]] = field(default_factory=dict)

    def page(self, path: Path) -> Page:
        if path not in self.pages:
            try:
                self.pages[path] = pages.load(path)
            except ValueError as exc:  # a malformed page: report it like a wrong number, once
                self.pages[path] = None
                raise DocMismatch(str(exc)) from None
        page = self.pages[path]
        if page is None:  # its other blocks cannot be checked; the failure above says why
            pytest.skip(f"{pages.display(path)} is malformed (reported once, above)")
        return page

    def store(self, block: Block) -> dict[Path, Live]:
        """Where the namespace a block leaves is kept: torch blocks apart from the rest."""
        return self.branch if block.torch else self.live


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


@pytest.hookimpl(trylast=True)  # after any shuffle (pytest-randomly) or sort of the tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A page's blocks run from the top of the page down, wherever its tests are placed: a
    `continuation` block builds on the block above it (run out of order, each would run its
    chain again). Other tests, and the pages among them, keep the order they were given."""
    places = [i for i, item in enumerate(items) if isinstance(item, BlockItem)]
    blocks = [item for item in items if isinstance(item, BlockItem)]
    pages_in_order: dict[Path, int] = {}  # by where each page's first test was placed
    for block in blocks:
        pages_in_order.setdefault(block.path, len(pages_in_order))
    blocks.sort(key=lambda block: (pages_in_order[block.path], block.start))
    for i, block in zip(places, blocks, strict=True):
        items[i] = block


class TiesWithoutCode(pytest.Item):
    """A page with prose ties and no python block to run: nothing would check its ties."""

    def runtest(self) -> None:
        try:
            page = pages.load(self.path)
        except ValueError as exc:
            raise DocMismatch(str(exc)) from None
        n, m = page.orphan_ties[0]
        raise DocMismatch(f"{page.name}:{n + 1}: prose number {m['shown']!r} is tied to code "
                          "but no python block comes before it (the page runs none)")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, DocMismatch):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{pages.display(self.path)}: prose ties"


class MarkdownPage(pytest.File):
    """A Markdown file: a test for each python block, or one for prose ties with none to run."""

    def collect(self) -> list[pytest.Item]:
        text = "\n".join(pages.NEWLINES.split(self.path.read_bytes().decode("utf8", "replace")))
        starts = pages.block_starts(text)
        if starts:
            return [BlockItem.from_parent(self, name=f"[CodeFence#{i}][line:{start}]",
                                          start=start)
                    for i, start in enumerate(starts, 1)]
        if pages.TIE_OPEN not in text:
            return []
        try:
            if not pages.load(self.path).orphan_ties:  # `<!--=` only inside fences: no ties
                return []
        except ValueError:
            pass  # the item reports it
        return [TiesWithoutCode.from_parent(self, name="[prose ties]")]


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.File | None:
    return MarkdownPage.from_parent(parent, path=file_path) if file_path.suffix == ".md" else None


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


def _enter(state: State, page: Page, block: Block, args: dict[str, Any]) -> dict[str, Any]:
    """Set up print options and cwd for the block; return the namespace it runs in."""
    chain = page.chain_before(block)
    if not chain:
        for store in (state.branch,) if block.torch else (state.live, state.branch):
            store.pop(page.path, None)
        _reset_print_state(None)
        return args
    last = state.store(chain[-1]).get(page.path)
    if last is not None and last.start == chain[-1].start:
        _reset_print_state(last.print_options)
        os.chdir(last.cwd)
        if block.torch and not chain[-1].torch:  # a side branch: numpy's names stay as
            return dict(last.namespace)  # they were for the numpy blocks after it
        return last.namespace
    # Run alone (say with -k): replay the chain quietly, then run this block.
    _reset_print_state(None)
    with contextlib.redirect_stdout(io.StringIO()):
        for earlier in chain:
            _exec(earlier, page.path, args)
    return args


def run_block(state: State, page: Page, block: Block) -> tuple[str, list[str | Exception]]:
    """Run ``block`` as its test does, in its chain's namespace, print options and working
    directory; return (and keep in ``state.ran``) what it printed and what its ties gave."""
    home = os.getcwd()  # a block's os.chdir must not leak into other chains and pages
    printed = io.StringIO()
    try:
        # A chain's first block starts in a fresh module's globals, as `python page.py` would.
        namespace = _enter(state, page, block, vars(types.ModuleType("fence")))
        with contextlib.redirect_stdout(printed):
            _exec(block, page.path, namespace)
        try:
            state.store(block)[page.path] = Live(block.start, namespace, _print_options(),
                                                 os.getcwd())
            values = tie_values(block, namespace)  # in the block's print options
        except Exception as exc:  # the block ran: what failed is the harness
            raise HarnessError(f"{page.name}:{block.start}") from exc
    finally:
        os.chdir(home)
        _reset_print_state(None)
    state.ran.setdefault(page.path, {})[block.start] = (printed.getvalue(), values)
    return printed.getvalue(), values


class BlockItem(pytest.Item):
    """Runs one block, then checks its printed output and the prose numbers after it."""

    def __init__(self, *, start: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start = start  # the block's first code line (0-based), the fence's 1-based line

    def runtest(self) -> None:
        state = _states[-1]
        path = self.path
        page = state.page(path)
        block = page.block_at(self.start)
        if page.orphan_ties and block is page.blocks[0]:
            n, m = page.orphan_ties[0]
            raise DocMismatch(f"{page.name}:{n + 1}: prose number {m['shown']!r} is tied to code "
                              "but no python block comes before it")
        if block.torch:
            _require_torch(page, block)

        printed, values = run_block(state, page, block)
        try:
            problems = _check_output(state, page, block, printed)
            problems += _check_ties(state, page, block, values)
        except DocMismatch:
            raise
        except Exception as exc:  # the block ran: what failed is the harness
            raise HarnessError(f"{page.name}:{block.start}") from exc
        if problems:
            raise DocMismatch("\n\n".join(problems))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, DocMismatch):
            return str(excinfo.value)
        if isinstance(excinfo.value, HarnessError):
            cause = excinfo.value.__cause__
            return (f"{excinfo.value}: the doc-test harness failed (a bug in harness/, not in "
                    "the page)\n" + "".join(traceback.format_exception(cause)))
        # The deepest frame in the page names the Markdown line that raised; the traceback
        # starts at the page's first frame (the harness's own frames above it say nothing).
        frames = traceback.extract_tb(excinfo.tb)
        in_page = [i for i, f in enumerate(frames) if f.filename == str(self.path)]
        line = frames[in_page[-1]].lineno if in_page else self.start
        code = self.code().rstrip("\n").split("\n")
        width = len(str(self.start + len(code)))
        numbered = [f"{n:>{width}}   {ln}" for n, ln in enumerate(code, self.start + 1)]
        shown = traceback.format_list(frames[in_page[0]:] if in_page else frames)
        return "\n".join([
            f"{pages.display(self.path)}:{line}: the code block raised",
            "Error in code block:", f"{'':>{width}}   ```", *numbered, f"{'':>{width}}   ```",
            "Traceback (most recent call last):", "".join(shown).rstrip("\n"),
            excinfo.exconly()])

    def code(self) -> str:
        """The block's code, as this session read the page."""
        page = _states[-1].pages.get(self.path)
        return page.block_at(self.start).code if page is not None else ""

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.start, self.name


def _require_torch(page: Page, block: Block) -> None:
    """Skip a torch block where torch cannot be imported (fail under FFN_REQUIRE_TORCH=1).

    A skipped block's output fence is neither checked nor rewritten: nothing ran to say
    what it should be.
    """
    reason = optional.torch_missing()
    if reason is None:
        return
    where = f"{page.name}:{block.start}"
    if optional.required():
        raise DocMismatch(f"{where}: {optional.REQUIRE}=1 but torch cannot be imported "
                          f"({reason}): the PyTorch tab must run")
    pytest.skip(f"{where}: torch is not installed: PyTorch tab not run ({reason})")


Outputs = dict[int, tuple[str, list[str | Exception]]]


@pytest.fixture
def page_outputs() -> Callable[[Path], Outputs]:
    """``page_outputs(path)``: what each block of the page prints and what each of its prose
    ties gives, by block start line, for the blocks the harness runs here (a PyTorch tab only
    where torch imports). From this session's run of the page's tests when they all ran in
    this process before; otherwise the blocks are run here first, quietly, in page order."""
    def outputs(path: Path) -> Outputs:
        state = _states[-1]
        page = state.page(path)
        blocks = [b for b in page.blocks if not (b.torch and optional.torch_missing() is not None
                                                 and not optional.required())]
        ran = state.ran.get(page.path, {})
        if any(b.start not in ran for b in blocks):
            for block in blocks:
                if block.torch:
                    _require_torch(page, block)  # FFN_REQUIRE_TORCH=1 without torch: fails
                run_block(state, page, block)
            ran = state.ran[page.path]
        return {b.start: ran[b.start] for b in blocks}
    return outputs


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


def _fence_for(produced: list[str], fence: str = "```") -> str:
    """`fence`, made longer than any run of its character in the output: no line closes it."""
    runs = [len(r) for ln in produced for r in re.findall(re.escape(fence[0]) + "+", ln)]
    return fence[0] * max(len(fence), max(runs, default=0) + 1)


def _shown(page: Page, block: Block) -> list[str]:
    """The output the page shows under the block (stripped lines; none: [])."""
    out = block.output
    return [] if out is None else _strip([ln[len(out.indent):]
                                          for ln in page.lines[out.start:out.end]])


def _produced(printed: str) -> list[str]:
    """What the block printed, as the lines its output should show (CRLF is a line break)."""
    return _strip(printed.replace("\r\n", "\n").split("\n"))


def _check_output(state: State, page: Page, block: Block, printed: str) -> list[str]:
    where = f"{page.name}:{block.start}"  # the opening fence's 1-based line
    if "\r" in printed.replace("\r\n", "\n"):
        return [(f"{where}: the block prints a carriage return (\\r), which a page cannot show "
                 "(Markdown reads it as a line break): print '\\n' or the repr() of the text")]
    produced = _produced(printed)
    out = block.output
    if out is not None and out.kind == "markdown" and pages.MD_OUTPUT_CLOSE in (
            ln.strip() for ln in produced):
        return [(f"{page.name}:{out.first + 1}: the block at line {block.start} prints "
                 f"{pages.MD_OUTPUT_CLOSE!r}, which would end its Markdown output early (show "
                 "this output in a ```text block instead)")]
    if out is None:
        if not produced or block.exempt:
            return []
        if state.update:
            ind, fence = block.indent, _fence_for(produced)
            new = ["", f'{ind}{fence}text title="Output"',
                   *[ind + ln if ln else "" for ln in produced], f"{ind}{fence}"]
            if block.after < len(page.lines) and page.lines[block.after].strip():
                new.append("")  # prose right under the block stays a paragraph of its own
            _record(state, page, Edit(block.after, block.after, new, "output block added"))
            return []
        return [f"{where}: the block prints but no output block follows it "
                "(add one, run with --update-docs, or write `# output not shown: <reason>`)\n"
                + _diff([], produced)]
    raw = [ln[len(out.indent):] for ln in page.lines[out.start:out.end]]
    shown = _shown(page, block)
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
            fence = _fence_for(produced, out.fence) if out.kind == "text" else ""
            if fence != out.fence or not out.closed:  # rewrite the fence lines too
                opening = page.lines[out.first]
                opening = out.indent + fence + opening.lstrip()[len(out.fence):]
                _record(state, page, Edit(out.first, out.last,
                                          [opening, *body, out.indent + fence], "output updated"))
            else:
                _record(state, page, Edit(out.start, out.end, body, "output updated"))
        return []
    return [f"{page.name}:{line}: the output block differs from what the block at line "
            f"{block.start} prints\n" + _diff(shown, produced)]


def tie_values(block: Block, namespace: dict[str, Any]) -> list[str | Exception]:
    """What each prose tie after the block gives in its namespace (or the exception it raises)."""
    values: list[str | Exception] = []
    if not block.ties:  # most blocks: no copy of their namespace to make
        return values
    scope = {"words": words, **namespace}  # a copy: the blocks do not see `words` (nor, if they
    # define their own `words`, do the ties see the harness's)
    for _, m in block.ties:
        try:
            values.append(eval("f" + repr(m["expr"]), scope))  # the comment is an f-string
        except Exception as exc:  # reported at the page's line by _check_ties
            values.append(exc)
    return values


def _check_ties(state: State, page: Page, block: Block, values: list[str | Exception]
                ) -> list[str]:
    problems: list[str] = []
    fixes: dict[int, list[tuple[int, int, str]]] = {}  # line -> (start, end, new text)
    for (n, m), value in zip(block.ties, values, strict=True):
        if "][" in m["expr"]:  # caught here, in every tier, not only by the site's build
            problems.append(f"{page.name}:{n + 1}: prose tie {m['expr']!r} holds '][', which "
                            "mkdocs-autorefs reads as a cross-reference ([text][id]) and the "
                            "strict build refuses: name the value in the block above instead")
            continue
        if isinstance(value, Exception):  # report it at the page's line, not deep in eval
            problems.append(f"{page.name}:{n + 1}: prose tie {m['expr']!r} cannot be "
                            f"evaluated: {type(value).__name__}: {value}")
            continue
        if value == m["shown"]:
            continue
        if not pages.SHOWN.fullmatch(value):  # written to the page, it would not read back
            problems.append(f"{page.name}:{n + 1}: prose tie {m['expr']!r} gives {value!r}, "
                            "which a tie cannot show (only digits, letters and .,+-−%×·, "  # noqa: RUF001
                            "not starting or ending with _)")
        elif state.update:  # only the shown number changes: its emphasis and comment stay
            fixes.setdefault(n, []).append((m.start("shown"), m.end("shown"), value))
        else:
            problems.append(f"{page.name}:{n + 1}: prose number shows {m['shown']!r} but "
                            f"{m['expr']!r} gives {value!r}")
    for n, spans in fixes.items():
        line = page.lines[n]
        for start, end, value in sorted(spans, reverse=True):  # right to left: columns stay valid
            line = line[:start] + value + line[end:]
        _record(state, page, Edit(n, n + 1, [line], "prose number updated"))
    return problems


def _record(state: State, page: Page, edit: Edit) -> None:
    state.edits.setdefault(page.path, []).append(edit)


def rewrite(lines: list[str], edits: list[Edit]) -> list[str]:
    """The lines with the edits applied. Edits are in the lines' numbering and must not overlap.

    An insertion before line n (start == end == n) goes before an edit of line n itself.
    """
    out: list[str] = []
    done = 0  # lines before this one are in `out`
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < done:
            raise ValueError(f"line {e.start + 1}: two rewrites overlap ({e.what})")
        out += lines[done : e.start] + e.lines
        done = e.end
    return out + lines[done:]


def _reads_back(state: State, page: Page, lines: list[str]) -> str | None:
    """Why the rewritten lines would not read back as what the blocks gave (None: they do)."""
    try:
        new = pages.parse(page.path, lines)
    except ValueError as exc:
        return f"it would no longer read as a page ({exc})"
    if [(b.code, b.options) for b in new.blocks] != [(b.code, b.options) for b in page.blocks]:
        return "its code blocks would change"
    if len(new.orphan_ties) != len(page.orphan_ties):
        return "its prose ties would change"
    ran = state.ran.get(page.path, {})
    for old, block in zip(page.blocks, new.blocks, strict=True):
        if [m["expr"] for _, m in block.ties] != [m["expr"] for _, m in old.ties]:
            return f"the prose ties after line {block.start} would change"
        if old.start not in ran:  # not run (deselected, or a torch block without torch)
            continue
        printed, values = ran[old.start]
        produced = _produced(printed)
        if _shown(new, block) != produced and not (old.exempt and block.output is None):
            return f"the output of the block at line {block.start} would not read back"
        for (_, m), value in zip(block.ties, values, strict=False):
            if isinstance(value, str) and pages.SHOWN.fullmatch(value) and m["shown"] != value:
                return f"the prose tie {m['expr']!r} would not read back"
    return None


def write_atomically(path: Path, data: bytes) -> None:
    """Replace the file's content: a crash (or a full disk) leaves the old file or the new one."""
    target = path.resolve()  # through a symbolic link, the page it points to
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(target.stat().st_mode))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = _states[-1]
    write = session.config.get_terminal_writer().line
    for path, edits in state.edits.items():
        page = state.pages[path]
        assert page is not None  # a malformed page records no edits

        def refuse(why: str, page: Page = page) -> None:
            write(f"{UPDATE_OPTION}: NOT rewritten: {page.name}: {why}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

        if pages.read(path)[0] != page.lines:  # edited while we ran: our line numbers are stale
            refuse("it changed while the tests ran")
            continue
        try:
            lines = rewrite(page.lines, edits)
        except ValueError as exc:  # a harness bug: leave the page as it is
            refuse(str(exc))
            continue
        why = _reads_back(state, page, lines)
        if why is not None:  # a harness bug, or output that Markdown would misread
            refuse(f"{why} (the page is left as it was)")
            continue
        try:
            write_atomically(path, page.newline.join(lines).encode("utf8"))
        except OSError as exc:
            refuse(f"{exc} (the page is left as it was)")
            continue
        counts: dict[str, int] = {}
        for e in edits:
            counts[e.what] = counts.get(e.what, 0) + 1
        summary = ", ".join(f"{k}: {v}" for k, v in counts.items())
        write(f"{UPDATE_OPTION}: rewrote {page.name} ({summary})")
