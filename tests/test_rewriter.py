"""`--update-docs` never corrupts a page: each case here once did (issue 13, item 4).

Every rewrite is checked three ways: the page is exactly what an author would write by hand,
the rewritten page passes, and a second `--update-docs` leaves it byte for byte as it is.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.test_harness import ARGS


def update(pytester: pytest.Pytester, page: str | bytes, name: str = "page.md") -> bytes:
    """Write the page, run `--update-docs` on it, check that it settles; return the result."""
    path = pytester.path / name
    path.write_bytes(page.encode() if isinstance(page, str) else page)
    pytester.runpytest(*ARGS, "--update-docs").assert_outcomes(passed=len(blocks(path)))
    once = path.read_bytes()
    pytester.runpytest(*ARGS).assert_outcomes(passed=len(blocks(path)))
    pytester.runpytest(*ARGS, "--update-docs")
    assert path.read_bytes() == once, "a second --update-docs changed the page again"
    return once


def blocks(path: Path) -> list[int]:
    from harness import page as pages

    return [b.start for b in pages.load(path).blocks]


def test_output_block_added_above_prose_keeps_the_prose(pytester: pytest.Pytester) -> None:
    # Once: the fixed prose line replaced the inserted blank line, and the stale line stayed
    # below the new fence; every further run added a fence and a copy of the line.
    page = "```python\nx = 768\nprint('a')\n```\nProse 7<!--= {x} -->.\n"
    assert update(pytester, page).decode() == (
        "```python\nx = 768\nprint('a')\n```\n\n"
        '```text title="Output"\na\n```\n\n'
        "Prose 768<!--= {x} -->.\n")


def test_same_tie_twice_on_a_line_is_fixed_where_each_is(pytester: pytest.Pytester) -> None:
    # Once: the second fix replaced the first matching text (inside `768<!--…`): 7768 … 68.
    page = "```python\nn = 768\n```\n\nIt is 768<!--= {n} --> and 68<!--= {n} -->.\n"
    assert update(pytester, page).decode() == (
        "```python\nn = 768\n```\n\nIt is 768<!--= {n} --> and 768<!--= {n} -->.\n")


@pytest.mark.parametrize("shown", ["", '\n```text\nstale\n```\n'], ids=["added", "updated"])
def test_output_holding_a_fence_line_gets_a_longer_fence(
    pytester: pytest.Pytester, shown: str
) -> None:
    # Once: a ``` line in the output closed the ```text fence early; each run added a line.
    code = '```python\nprint("a\\n```\\nb ````` c")\n```\n'
    opening = "``````text" if shown else '``````text title="Output"'
    assert update(pytester, code + shown).decode() == (
        code + "\n" + opening + "\na\n```\nb ````` c\n``````\n")


def test_crlf_page_stays_crlf(pytester: pytest.Pytester) -> None:
    page = "Intro\n\n```python\nprint(1)\n```\n\nIt is 2<!--= {1} -->.\n"
    result = update(pytester, page.replace("\n", "\r\n"))
    assert result == ("Intro\n\n```python\nprint(1)\n```\n\n```text title=\"Output\"\n1\n```\n\n"
                      "It is 1<!--= {1} -->.\n").replace("\n", "\r\n").encode()


def test_tie_inside_emphasis_keeps_it(pytester: pytest.Pytester) -> None:
    page = ("```python\nv = 0.123\n```\n\n"
            "It is _0.5_<!--= {v} -->, **0.5**<!--={v}--> and *0.5*<!--= {v:.2f} -->.\n")
    assert update(pytester, page).decode() == page.replace(
        "_0.5_", "_0.123_").replace("**0.5**", "**0.123**").replace("*0.5*", "*0.12*")


def test_tie_value_that_cannot_be_shown_is_an_error(pytester: pytest.Pytester) -> None:
    # Written to the page, "1 234" would read back as "234": it could never settle.
    page = "```python\nn = '1 234'\n```\n\nIt is 234<!--= {n} -->.\n"
    (pytester.path / "page.md").write_text(page)
    result = pytester.runpytest(*ARGS, "--update-docs")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:5: prose tie '{n}' gives '1 234', which a tie cannot*"])
    assert (pytester.path / "page.md").read_text() == page


def test_chdir_does_not_leak_into_other_chains_or_pages(pytester: pytest.Pytester) -> None:
    home = str(pytester.path)
    (pytester.path / "sub").mkdir()
    (pytester.path / "a.md").write_text(textwrap.dedent(f'''\
        ```python
        import os
        os.chdir("sub")
        ```

        ```{{.python continuation}}
        assert os.path.basename(os.getcwd()) == "sub"  # a chain keeps its own directory
        ```

        ```python
        import os
        assert os.getcwd() == {home!r}, os.getcwd()
        ```
        '''))
    (pytester.path / "b.md").write_text(f"```python\nimport os\nassert os.getcwd() == {home!r}\n"
                                        "```\n")
    pytester.runpytest(*ARGS, "a.md", "b.md").assert_outcomes(passed=4)


def test_continuation_with_nothing_above_fails(pytester: pytest.Pytester) -> None:
    page = "Intro\n\n```{.python continuation}\nx = 1\n```\n\n```python\ny = 2\n```\n"
    (pytester.path / "page.md").write_text(page)
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(["*page.md:3: `continuation` but no python block above it runs*"])


@pytest.mark.parametrize("info", ["{.python continuaton}", "python continuaton",
                                  '{.python continuaton title="Two words"}'])
def test_unknown_fence_option_fails_naming_it(pytester: pytest.Pytester, info: str) -> None:
    page = f"```python\nx = 1\n```\n\n```{info}\ny = 2\n```\n"
    (pytester.path / "page.md").write_text(page)
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines([("*page.md:5: unknown fence option 'continuaton' (valid: "
                                  "continuation, notest, torch, fixture:..., runner:..., "
                                  "retry:...*")])


def test_known_fence_options_and_attributes_pass(pytester: pytest.Pytester) -> None:
    page = ('```python title="Two words" linenums="1"\nx = 1\n```\n\n'
            '```{.python continuation hl_lines="1 2"}\ny = x\n```\n\n'
            "```{.python notest}\nraise SystemExit\n```\n")
    (pytester.path / "page.md").write_text(page)
    pytester.runpytest(*ARGS).assert_outcomes(passed=2)


def test_unclosed_markdown_output_is_reported_once_with_its_file(
    pytester: pytest.Pytester,
) -> None:
    page = ("```python\nprint(1)\n```\n\n<!-- output: markdown -->\n\n1\n\n"
            "```python\nprint(2)\n```\n\n```text\n2\n```\n")
    (pytester.path / "page.md").write_text(page)
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1, skipped=1)  # once: the page's other block is skipped
    result.stdout.fnmatch_lines(["*page.md:5: <!-- output: markdown --> has no <!-- /output -->*"])


def test_printed_admonition_lines_inside_a_fence_stay_text(pytester: pytest.Pytester) -> None:
    # `!!! note` printed inside a fence is not an admonition: flattening it used to de-indent
    # the `    ```` line below it into a closing fence, which hid the next block.
    page = textwrap.dedent('''\
        ```python
        print("!!! note x\\n    ```")
        ```

        ```text
        !!! note x
            ```
        ```

        ```python
        print(2)
        ```

        ```text
        2
        ```
        ''')
    (pytester.path / "page.md").write_text(page)
    pytester.runpytest(*ARGS).assert_outcomes(passed=2)
