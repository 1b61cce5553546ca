"""`--update-docs` at the session's end: each page's recorded edits applied, the result read
back as a page that shows exactly what its blocks gave, and only then written, atomically."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ffn_docs import markdown_page as pages
from ffn_docs.markdown_page import Page
from harness import edits as edit_lines
from harness.edits import Edit
from harness.outputs import produced, shown
from harness.running import Outputs


class NotRewritten(Exception):
    """The page is left as it was; the message says why."""


def rewrite_page(page: Page, edits: list[Edit], ran: Outputs) -> str:
    """Write ``page`` with ``edits`` applied; return a summary of what changed.

    Args:
        page: the page as the session read it.
        edits: what the checks recorded for it.
        ran: what its blocks printed and their ties gave, by start line (the runner's record).

    Raises:
        NotRewritten: the page changed while the tests ran, the edits overlap, the result
            would not read back as what the blocks gave, or it could not be written.
    """
    if pages.read(page.path)[0] != page.lines:  # edited while we ran: our line numbers are stale
        raise NotRewritten("it changed while the tests ran")
    try:
        lines = edit_lines.apply(page.lines, edits)
    except ValueError as exc:  # a harness bug: leave the page as it is
        raise NotRewritten(str(exc)) from None
    why = reads_back(page, lines, ran)
    if why is not None:  # a harness bug, or output that Markdown would misread
        raise NotRewritten(f"{why} (the page is left as it was)")
    try:
        write_atomically(page.path, page.newline.join(lines).encode("utf8"))
    except OSError as exc:
        raise NotRewritten(f"{exc} (the page is left as it was)") from None
    counts: dict[str, int] = {}
    for e in edits:
        counts[e.what] = counts.get(e.what, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in counts.items())


def reads_back(page: Page, lines: list[str], ran: Outputs) -> str | None:
    """Why the rewritten lines would not read back as what the blocks gave (None: they do)."""
    try:
        new = pages.parse(page.path, lines)
    except ValueError as exc:
        return f"it would no longer read as a page ({exc})"
    if [(b.code, b.options) for b in new.blocks] != [(b.code, b.options) for b in page.blocks]:
        return "its code blocks would change"
    if len(new.orphan_ties) != len(page.orphan_ties):
        return "its prose ties would change"
    for old, block in zip(page.blocks, new.blocks, strict=True):
        if [m["expr"] for _, m in block.ties] != [m["expr"] for _, m in old.ties]:
            return f"the prose ties after line {block.start} would change"
        if old.start not in ran:  # not run (deselected, or a torch block without torch)
            continue
        printed, values = ran[old.start]
        if shown(new, block) != produced(printed) and not (old.exempt and block.output is None):
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
