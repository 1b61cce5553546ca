"""pytest plugin: run the docs' python blocks and check what the page shows against what they print.

Each python fence of a Markdown file is a test (`page.md::[CodeFence#2][line:40]`) that runs
it and then checks the page against what it did:
- fences inside admonitions and content tabs are collected too (ffn_docs/markdown_page.py reads
  the page as the site's build does);
- stdout of each block is compared with the output block under it (harness/outputs.py);
- prose numbers tied to code (`0.602<!--= {expr:.3f} -->`) are compared with what their
  f-strings give in the namespace of the last block above them (harness/ties.py);
- `continuation` chains reuse the previous block's namespace instead of re-running the chain;
  `torch` blocks (PyTorch tabs) run only where `import torch` works, else they are skipped
  with a visible reason (failed under FFN_REQUIRE_TORCH=1) (harness/running.py);
- `--update-docs` records edits instead of failing and rewrites the pages at the session's end
  (harness/rewriting.py); failures are reported at the page's line (harness/report.py).
This module is the glue: the option, collection, the tests, the fixture, the session's end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from ffn_docs import markdown_page as pages
from ffn_docs.markdown_page import Page
from harness import optional, outputs, report, ties
from harness.edits import Edit
from harness.report import DocMismatch, HarnessError
from harness.rewriting import NotRewritten, rewrite_page
from harness.running import Outputs, Runner, require_torch

UPDATE_OPTION = "--update-docs"


@dataclass
class State:
    """Per-session state: parsed pages, the blocks run, pending rewrites."""

    update: bool
    pages: dict[Path, Page | None] = field(default_factory=dict)  # None: malformed, reported
    runner: Runner = field(default_factory=Runner)
    edits: dict[Path, list[Edit]] = field(default_factory=dict)

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

    def edits_for(self, page: Page) -> list[Edit] | None:
        """Where the checks record the page's edits: None (report instead) without the option."""
        return self.edits.setdefault(page.path, []) if self.update else None


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


class BlockItem(pytest.Item):
    """Runs one block, then checks its printed output and the prose numbers after it."""

    def __init__(self, *, start: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start = start  # the block's first code line (0-based), the fence's 1-based line

    def runtest(self) -> None:
        state = _states[-1]
        page = state.page(self.path)
        block = page.block_at(self.start)
        if page.orphan_ties and block is page.blocks[0]:
            n, m = page.orphan_ties[0]
            raise DocMismatch(f"{page.name}:{n + 1}: prose number {m['shown']!r} is tied to code "
                              "but no python block comes before it")
        if block.torch:
            require_torch(page, block)

        printed, values = state.runner.run(page, block)
        edits = state.edits_for(page)
        try:  # through the modules, so that a test can stand in for a check
            problems = outputs.check_output(page, block, printed, edits)
            problems += ties.check_ties(page, block, values, edits)
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
            return report.harness_failed(excinfo.value)
        return report.block_raised(self.path, self.start, self.code(), excinfo)

    def code(self) -> str:
        """The block's code, as this session read the page."""
        page = _states[-1].pages.get(self.path)
        return page.block_at(self.start).code if page is not None else ""

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.start, self.name


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
        ran = state.runner.ran.get(page.path, {})
        if any(b.start not in ran for b in blocks):
            for block in blocks:
                if block.torch:
                    require_torch(page, block)  # FFN_REQUIRE_TORCH=1 without torch: fails
                state.runner.run(page, block)
            ran = state.runner.ran[page.path]
        return {b.start: ran[b.start] for b in blocks}
    return outputs


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = _states[-1]
    write = session.config.get_terminal_writer().line
    for path, edits in state.edits.items():
        if not edits:  # a page that was already right
            continue
        page = state.pages[path]
        assert page is not None  # a malformed page records no edits
        try:
            summary = rewrite_page(page, edits, state.runner.ran.get(path, {}))
        except NotRewritten as why:
            write(f"{UPDATE_OPTION}: NOT rewritten: {page.name}: {why}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
            continue
        write(f"{UPDATE_OPTION}: rewrote {page.name} ({summary})")
