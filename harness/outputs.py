"""Checking the output a page shows under a block against what the block printed.

The output is a ```text fence or a `<!-- output: markdown -->` region right under the block
(after its code annotations). A block that prints with nothing under it fails, unless its code
says `# output not shown: <reason>`. Given a list of edits (`--update-docs`), a check records
the edit that makes the page right instead of reporting the difference.
"""

from __future__ import annotations

import difflib
import re

from ffn_docs.markdown_page import MD_OUTPUT_CLOSE, Block, Page
from harness.edits import Edit


def strip(lines: list[str]) -> list[str]:
    """Trailing spaces and blank lines at either end do not count (editors remove them)."""
    lines = [ln.rstrip() for ln in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def shown(page: Page, block: Block) -> list[str]:
    """The output the page shows under the block (stripped lines; none: [])."""
    out = block.output
    return [] if out is None else strip([ln[len(out.indent):]
                                         for ln in page.lines[out.start:out.end]])


def produced(printed: str) -> list[str]:
    """What the block printed, as the lines its output should show (CRLF is a line break)."""
    return strip(printed.replace("\r\n", "\n").split("\n"))


def fence_for(produced: list[str], fence: str = "```") -> str:
    """`fence`, made longer than any run of its character in the output: no line closes it."""
    runs = [len(r) for ln in produced for r in re.findall(re.escape(fence[0]) + "+", ln)]
    return fence[0] * max(len(fence), max(runs, default=0) + 1)


def diff(shown: list[str], produced: list[str]) -> str:
    return "\n".join(difflib.unified_diff(
        shown, produced, "shown on the page", "printed by the code", lineterm=""))


def check_output(page: Page, block: Block, printed: str,
                 edits: list[Edit] | None = None) -> list[str]:
    """What is wrong with the output the page shows under ``block``, which printed ``printed``.

    Args:
        page: the page, as read before any block ran.
        block: one of its blocks.
        printed: what the block wrote to stdout.
        edits: None to report every difference; a list (`--update-docs`) to append the edits
            that make the page show ``printed`` instead (what cannot be fixed is still reported).

    Returns:
        One message per problem, each naming the page's line (none: the page is right).
    """
    where = f"{page.name}:{block.start}"  # the opening fence's 1-based line
    if "\r" in printed.replace("\r\n", "\n"):
        return [(f"{where}: the block prints a carriage return (\\r), which a page cannot show "
                 "(Markdown reads it as a line break): print '\\n' or the repr() of the text")]
    lines = produced(printed)
    out = block.output
    if out is not None and out.kind == "markdown" and MD_OUTPUT_CLOSE in (
            ln.strip() for ln in lines):
        return [(f"{page.name}:{out.first + 1}: the block at line {block.start} prints "
                 f"{MD_OUTPUT_CLOSE!r}, which would end its Markdown output early (show "
                 "this output in a ```text block instead)")]
    if out is None:
        if not lines or block.exempt:
            return []
        if edits is not None:
            ind, fence = block.indent, fence_for(lines)
            new = ["", f'{ind}{fence}text title="Output"',
                   *[ind + ln if ln else "" for ln in lines], f"{ind}{fence}"]
            if block.after < len(page.lines) and page.lines[block.after].strip():
                new.append("")  # prose right under the block stays a paragraph of its own
            edits.append(Edit(block.after, block.after, new, "output block added"))
            return []
        return [f"{where}: the block prints but no output block follows it "
                "(add one, run with --update-docs, or write `# output not shown: <reason>`)\n"
                + diff([], lines)]
    raw = [ln[len(out.indent):] for ln in page.lines[out.start:out.end]]
    on_page = shown(page, block)
    if on_page == lines:
        return []
    # Name the first line that differs, as a line of the Markdown file.
    first = next((i for i, (a, b) in enumerate(zip(on_page, lines, strict=False)) if a != b),
                 min(len(on_page), len(lines)))
    lead = next((i for i, ln in enumerate(raw) if ln.strip()), 0)  # blank lines strip removed
    line = out.start + lead + first + 1
    if edits is not None:
        if not lines:
            edits.append(Edit(block.after, out.last, [], "output block removed"))
        else:
            body = [out.indent + ln if ln else "" for ln in lines]
            if out.kind == "markdown":
                body = ["", *body, ""]
            fence = fence_for(lines, out.fence) if out.kind == "text" else ""
            if fence != out.fence or not out.closed:  # rewrite the fence lines too
                opening = page.lines[out.first]
                opening = out.indent + fence + opening.lstrip()[len(out.fence):]
                edits.append(Edit(out.first, out.last,
                                  [opening, *body, out.indent + fence], "output updated"))
            else:
                edits.append(Edit(out.start, out.end, body, "output updated"))
        return []
    return [f"{page.name}:{line}: the output block differs from what the block at line "
            f"{block.start} prints\n" + diff(on_page, lines)]
