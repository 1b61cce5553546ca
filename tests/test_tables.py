"""ffn.tables.markdown_table: the tables pages print into a `<!-- output: markdown -->` region."""

from __future__ import annotations

import pytest

from ffn.tables import markdown_table


def test_markdown_table() -> None:
    assert markdown_table(["a", "b"], [[1, 2.5], ["x", None]]) == (
        "| a | b |\n|---|---|\n| 1 | 2.5 |\n| x | None |"
    )
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        markdown_table(["a", "b"], [[1]])


def test_a_pipe_in_a_cell_or_header_is_escaped() -> None:
    # Issue 26, item 6: an unescaped `|` split the cell in two, silently.
    assert markdown_table(["a|b", "c"], [["x | y", 1]]) == (
        "| a\\|b | c |\n|---|---|\n| x \\| y | 1 |"
    )


@pytest.mark.parametrize(("headers", "rows", "message"), [
    (["a", "b"], [[1, "two\nlines"]], (r"row 1, column 'b': a cell cannot hold a line break: "
                                        r"'two\\nlines'")),
    (["a", "b"], [[1, 2], ["x\r", 3]], r"row 2, column 'a': a cell cannot hold a line break"),
    (["a", "b\nc"], [[1, 2]], r"header 2: a header cannot hold a line break: 'b\\nc'"),
    ([], [], "a table needs at least one header"),
    (["a", "b"], [[1, 2], [3]], r"every row needs 2 cells \(one per header\); row 2 has 1"),
])
def test_a_cell_or_header_that_breaks_the_table_is_refused(
    headers: list[str], rows: list[list[object]], message: str
) -> None:
    # Issue 26, item 6: a newline ended the table early, silently.
    with pytest.raises(ValueError, match=message):
        markdown_table(headers, rows)


@pytest.mark.parametrize(("headers", "rows", "message"), [
    (None, [[1]], "headers must be a sequence of str, not None"),
    ("ab", [[1, 2]], "headers must be a sequence of str, not a str"),
    (["a", None], [[1, 2]], "header 2 must be a str, not None"),
    (["a"], None, "rows must be a sequence of rows, not None"),
    (["a"], [None], "row 1 must be a sequence of cells, not None"),
    (["a", "b"], ["xy"], "row 1 must be a sequence of cells, not a str"),
])
def test_headers_or_rows_of_the_wrong_type_are_named(
    headers: object, rows: object, message: str
) -> None:
    # Issue 26, item 6: these raised bare TypeErrors (`object of type 'NoneType' has no len()`)
    # or, for a str, made a table silently.
    with pytest.raises(TypeError, match=message):
        markdown_table(headers, rows)  # type: ignore[arg-type]


def test_harness_package_stays_light() -> None:
    import subprocess
    import sys

    code = ("import sys, harness; print('harness.plugin' in sys.modules, 'pytest' in sys.modules,"
            " 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


def test_the_old_names_still_give_the_same_function() -> None:
    # Pages imported it from the harness before it moved into ffn (it ships in the wheel).
    import harness
    from harness.tables import markdown_table as old

    assert harness.markdown_table is old is markdown_table
