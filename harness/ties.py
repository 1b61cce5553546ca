"""Checking the numbers a page's prose ties to code: `0.602<!--= {gelu_0772:.3f} -->`.

A tie's comment is an f-string, evaluated in the namespace of the last block above it (which
owns the tie), with `words` (harness/words.py) beside the block's names. Given a list of edits
(`--update-docs`), a check records the new number instead of reporting the difference.
"""

from __future__ import annotations

from typing import Any

from ffn_docs.markdown_page import SHOWN, Block, Page
from harness import words
from harness.edits import Edit


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
        except Exception as exc:  # reported at the page's line by check_ties
            values.append(exc)
    return values


def check_ties(page: Page, block: Block, values: list[str | Exception],
               edits: list[Edit] | None = None) -> list[str]:
    """What is wrong with the prose numbers ``block`` owns, whose ties gave ``values``.

    Args:
        page: the page, as read before any block ran.
        block: one of its blocks.
        values: what `tie_values` gave for its ties, in their order.
        edits: None to report every difference; a list (`--update-docs`) to append the edits
            that make the page show ``values`` instead (what cannot be fixed is still reported).

    Returns:
        One message per problem, each naming the page's line (none: the page is right).
    """
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
        if not SHOWN.fullmatch(value):  # written to the page, it would not read back
            problems.append(f"{page.name}:{n + 1}: prose tie {m['expr']!r} gives {value!r}, "
                            "which a tie cannot show (only digits, letters and .,+-−%×·, "  # noqa: RUF001
                            "not starting or ending with _)")
        elif edits is not None:  # only the shown number changes: its emphasis and comment stay
            fixes.setdefault(n, []).append((m.start("shown"), m.end("shown"), value))
        else:
            problems.append(f"{page.name}:{n + 1}: prose number shows {m['shown']!r} but "
                            f"{m['expr']!r} gives {value!r}")
    for n, spans in fixes.items():
        line = page.lines[n]
        for start, end, value in sorted(spans, reverse=True):  # right to left: columns stay valid
            line = line[:start] + value + line[end:]
        assert edits is not None  # fixes are made only when edits are recorded
        edits.append(Edit(n, n + 1, [line], "prose number updated"))
    return problems
