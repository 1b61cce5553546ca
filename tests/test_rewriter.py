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
    from ffn_docs import markdown_page as pages

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
                                  "continuation, notest, torch, and attributes*")])


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
    # `!!! note` printed inside a fence is not an admonition: flattening it as one would de-indent
    # the `    ```` line below it into a closing fence, which would hide the next block.
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


# Issue 26, items 9-14: each test below failed before its fix.


def refused(pytester: pytest.Pytester, page: str | bytes, message: str) -> None:
    """The page fails with ``message`` both checked and updated, and the update leaves it alone."""
    path = pytester.path / "page.md"
    path.write_bytes(page.encode() if isinstance(page, str) else page)
    for args in ([], ["--update-docs"]):
        result = pytester.runpytest(*ARGS, *args)
        assert result.ret == pytest.ExitCode.TESTS_FAILED, args
        result.stdout.fnmatch_lines([f"*{message}*"])
        assert path.read_bytes() == (page.encode() if isinstance(page, str) else page), args


def test_markdown_output_printing_its_closing_comment_is_refused(
    pytester: pytest.Pytester,
) -> None:
    # Item 9: each --update-docs appended another copy, and the plain check then failed.
    page = ("```python\nprint('a')\nprint('<!-- /output -->')\n```\n\n"
            "<!-- output: markdown -->\n\na\n\n<!-- /output -->\n")
    refused(pytester, page, "page.md:6: the block at line 1 prints '<!-- /output -->', which "
            "would end its Markdown output early*")


def test_printed_carriage_return_is_refused(pytester: pytest.Pytester) -> None:
    # Item 10: run 1 wrote a bare CR, run 2 dropped the final newline, then an IndexError.
    refused(pytester, "```python\nprint('a\\rb')\n```\n",
            "page.md:1: the block prints a carriage return*which a page cannot show*")


def test_printed_crlf_is_a_line_break(pytester: pytest.Pytester) -> None:
    page = "```python\nprint('a\\r\\nb')\n```\n"
    assert update(pytester, page).decode() == page + '\n```text title="Output"\na\nb\n```\n'


def test_page_with_bare_cr_line_endings_keeps_them_and_its_line_numbers(
    pytester: pytest.Pytester,
) -> None:
    # Markdown (and so MkDocs) reads a bare CR as a line ending; the harness read one line.
    page = "```python\rprint(1)\r```\r\r```text\r2\r```\r\rIt is 5<!--= {1} -->.\r"
    path = pytester.path / "page.md"
    path.write_bytes(page.encode())
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:6: the output block differs*"])
    assert update(pytester, page) == page.replace("2\r", "1\r").replace("5<", "1<").encode()


def test_harness_error_is_not_blamed_on_the_page(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness import outputs

    def broken(*_: object) -> list[str]:
        raise IndexError("list index out of range")

    monkeypatch.setattr(outputs, "check_output", broken)
    (pytester.path / "page.md").write_text("```python\nx = 1\n```\n")
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([("*page.md:1: the doc-test harness failed (a bug in harness/, "
                                  "not in the page)*"), "*IndexError*"])
    result.stdout.no_fnmatch_line("*the code block raised*")


@pytest.mark.parametrize(("before", "after"), [
    ("size_512<!--= {n} -->", "size_768<!--= {n} -->"),  # the prefix was lost
    ("42.<!--= {n} -->", "768.<!--= {n} -->"),  # the period was lost
    ("1,024,<!--= {n} -->", "768,<!--= {n} -->"),
    ("_512_.<!--= {n} -->", "_768_.<!--= {n} -->"),
])
def test_tie_rewrite_keeps_the_text_around_the_number(
    pytester: pytest.Pytester, before: str, after: str
) -> None:
    # Item 11.
    page = "```python\nn = 768\n```\n\nIt is {}\n"
    assert update(pytester, page.format(before)).decode() == page.format(after)


def test_tie_ending_in_a_period_passes_when_right(pytester: pytest.Pytester) -> None:
    (pytester.path / "page.md").write_text("```python\nn = 42\n```\n\nIt is 42.<!--= {n} -->\n")
    pytester.runpytest(*ARGS).assert_outcomes(passed=1)


def test_byte_order_mark_before_the_first_fence_is_read_past(pytester: pytest.Pytester) -> None:
    # Item 12: no block of such a page was collected, yet MkDocs renders them.
    page = "\ufeff```python\nprint(1)\n```\n\n```text\n2\n```\n"
    (pytester.path / "page.md").write_bytes(page.encode())
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:6: the output block differs*"])
    assert update(pytester, page) == page.replace("2\n```\n", "1\n```\n").encode()


@pytest.mark.parametrize(("page", "message"), [
    ("# Ties only\n\nIt is 5<!--= {2 + 3} -->.\n",
     "page.md:3: prose number '5' is tied to code but no python block comes before it"),
    ("```{.python notest}\nx = 5\n```\n\nIt is 5<!--= {x} -->.\n",
     "page.md:5: prose number '5' is tied to code but no python block comes before it"),
    ("```text\nno python here\n```\n\nIt is (5)<!--= {x} -->.\n",
     "page.md:5: a `<!--=` comment does not follow a number directly"),
], ids=["no-block", "notest-only", "malformed"])
def test_ties_on_a_page_without_python_blocks_fail(
    pytester: pytest.Pytester, page: str, message: str
) -> None:
    # Item 12: nothing was collected on such a page, so its ties were never checked.
    refused(pytester, page, message)
    pytester.runpytest(*ARGS).assert_outcomes(failed=1)


def test_tie_expression_containing_the_comment_end_is_named(pytester: pytest.Pytester) -> None:
    # Item 13: reported as "SyntaxError: f-string: expecting '}'" on `{'`.
    refused(pytester, "```python\nx = 1\n```\n\nIt is 1<!--= {'-->'} -->.\n",
            "page.md:5: a tie comment ends at its first `-->`, so its expression is cut to "
            "\"{'\": an expression cannot contain `-->`*")


def test_tie_holding_a_cross_reference_is_refused_before_the_build(
        pytester: pytest.Pytester) -> None:
    # `{runs["a"][0]}` passed the page's checks, then failed the strict build: mkdocs-autorefs
    # reads `["a"][0]` as a reference link. The harness says so in every tier.
    refused(pytester, "```python\nruns = {'a': [3]}\n```\n\nIt is 3<!--= {runs['a'][0]} -->.\n",
            # (fnmatch: `[` opens a character class, so the expression is matched by `*`)
            "page.md:5: prose tie \"{runs*0]}\" holds '*', which mkdocs-autorefs reads as "
            "a cross-reference*")


def test_tie_comment_split_across_lines_is_named(pytester: pytest.Pytester) -> None:
    # Item 13: reported as "does not follow a number directly".
    refused(pytester, "```python\nn = 768\n```\n\nIt is 768<!--= {n}\n-->.\n",
            "page.md:5: a tie comment (`<!--=`) must end (`-->`) on the line where it starts*")


def test_failed_write_leaves_the_page_whole(pytester: pytest.Pytester) -> None:
    # Item 14: the page was rewritten in place; a write that fails part-way (here: the file
    # size limit, as on a full disk) left it truncated.
    import os
    import resource
    import signal
    import subprocess
    import sys

    page = "```python\nprint('x' * 100)\n" + "#\n" * 30_000 + "```\n"
    path = pytester.path / "page.md"
    path.write_text(page)
    limit = path.stat().st_size + 50  # the old page fits; the page with the output does not

    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # fail the write (EFBIG), not the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run([sys.executable, "-m", "pytest", *ARGS, "--update-docs"],
                            cwd=pytester.path, env=env, preexec_fn=small_files,
                            capture_output=True, text=True, timeout=120, check=False)
    assert path.read_text() == page, result.stdout[-2000:]
    assert "NOT rewritten: page.md" in result.stdout, result.stdout[-2000:]
    assert result.returncode == 1
    assert sorted(p.name for p in pytester.path.iterdir()) == ["page.md"]  # no temporary left
