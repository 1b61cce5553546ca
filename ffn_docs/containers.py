"""Material's boxes and tabs unwrapped, so that a CommonMark parser reads what is inside them.

A box (`!!! note`, `??? note` collapsed, `???+ note` open) or a content tab (`=== "Tab"`)
indents its body by four spaces, which CommonMark reads as indented code: the fences and
paragraphs inside would be hidden. Unwrapping blanks the header line and takes the four spaces
off the body, line for line, so that a line keeps its number (the harness reports pages by line).
"""

from __future__ import annotations

import re

# A box or tab header, and the indentation its body is written under (plus four spaces).
HEADER = re.compile(r"^(?P<indent> *)(?P<mark>!!!|\?\?\?\+?|===) ")
# A fence's opening run (CommonMark: three or more backticks or tildes).
FENCE = re.compile(r"^ *(?P<fence>`{3,}|~{3,})")
COLLAPSED = "???"


def flatten_containers(text: str, *, collapsed: bool = True) -> str:
    """``text`` with every box and tab unwrapped, nested ones too, keeping line numbers.

    Args:
        text: Markdown source, lines separated by "\\n".
        collapsed: keep the bodies of collapsed boxes (`???`); False blanks them, header and
            body, as a reader who does not open them sees the page.
    """
    lines = text.split("\n")
    changed = True
    while changed:  # one nesting level per pass
        changed = False
        out: list[str] = []
        fence = ""  # the open fence's run: inside a fence, `!!! x` is printed text, not a header
        i = 0
        while i < len(lines):
            f = FENCE.match(lines[i])
            if fence and re.fullmatch(rf" *{re.escape(fence[0])}{{{len(fence)},}} *", lines[i]):
                fence = ""
            elif f and not fence:
                fence = f["fence"]
            m = None if fence else HEADER.match(lines[i])
            if not m:
                out.append(lines[i])
                i += 1
                continue
            changed = True
            n = len(m["indent"])
            keep = collapsed or m["mark"] != COLLAPSED
            out.append("")  # the header line becomes blank
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" " * (n + 4))):
                body = lines[i][:n] + lines[i][n + 4 :] if lines[i].strip() else ""
                out.append(body if keep else "")
                i += 1
        lines = out
    return "\n".join(lines)
