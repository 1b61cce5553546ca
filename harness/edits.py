"""An edit of a page's lines, as `--update-docs` records it, and the lines with edits applied."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Edit:
    start: int  # first line replaced
    end: int  # one past the last line replaced
    lines: list[str]
    what: str  # for the summary: "output updated", "prose number updated", ...


def apply(lines: list[str], edits: list[Edit]) -> list[str]:
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
