"""Results as a Markdown table, as the book's pages print them.

A page's code block prints one with `print(markdown_table(...))`; the site shows it as a table,
and a notebook of the page shows the same Markdown text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def _kind(value: object) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _items(value: object, what: str, of: str) -> list[object]:
    """The items of a sequence (any iterable but a string), or a TypeError naming ``what``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a sequence of {of}, not {_kind(value)}")
    return list(value)


def _cell(text: str, where: str) -> str:
    if "\n" in text or "\r" in text:  # it would end the row, and the table, early
        raise ValueError(f"{where} cannot hold a line break: {text!r}")
    return text.replace("|", "\\|")  # an unescaped `|` would split the cell


def markdown_table(headers: Sequence[str], rows: Iterable[Iterable[object]]) -> str:
    """A GitHub-style Markdown table; cells are written with `str()`, a `|` in one as `\\|`.

    Raises:
        TypeError: if ``headers`` is not a sequence of str, or ``rows`` or a row is not a
            sequence (a string is not one).
        ValueError: if there are no headers, a row has not one cell per header, or a cell or
            header holds a line break (which Markdown would read as the end of the table).
    """
    names = _items(headers, "headers", "str")
    if not names:
        raise ValueError("a table needs at least one header")
    for j, name in enumerate(names, 1):
        if not isinstance(name, str):
            raise TypeError(f"header {j} must be a str, not {_kind(name)}")
    head = [_cell(str(name), f"header {j}: a header") for j, name in enumerate(names, 1)]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in names) + "|"]
    for i, row in enumerate(_items(rows, "rows", "rows"), 1):
        cells = _items(row, f"row {i}", "cells")
        if len(cells) != len(names):
            raise ValueError(f"every row needs {len(names)} cells (one per header); row {i} "
                             f"has {len(cells)}")
        lines.append("| " + " | ".join(_cell(str(c), f"row {i}, column {name!r}: a cell")
                                        for c, name in zip(cells, names, strict=True)) + " |")
    return "\n".join(lines)
