"""The docs harness, tested on small pages: it must catch wrong numbers and fix them on request."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Without hypothesis's pytest plugin: in-process, it re-imports hypothesis on every run (~5 s).
ARGS = ["-p", "harness.plugin", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


def titled_page(code: str, output: str, rest: str) -> str:
    """A page "# A page": a python block of ``code``, its ``output`` fence, then ``rest``.

    ``rest`` is dedented; the fence of ``code`` is at line 3, so ``code`` starts at line 4.
    """
    head = f"# A page\n\n```python\n{code}\n```\n\n```text\n{output}\n```\n\n"
    return head + textwrap.dedent(rest)


GOOD = titled_page('x = 0.5\nprint(f"{x * 2:.3f}")', "1.000", '''\
    Twice x is 1.000<!--= {x * 2:.3f} --> and x is 0.5<!--= {x} -->.

    ```{.python continuation}
    y = x + 1  # (1)!
    print(y)
    ```

    1.  An annotation between the code and its output.

    ```text
    1.5
    ```

    !!! note "Inside an admonition"

        ```{.python continuation}
        print(y * 2)
        ```

        ```text
        3.0
        ```

    === "Tab one"

        ```{.python continuation}
        print("tab", y)
        ```

        ```text
        tab 1.5
        ```

    ```{.python continuation}
    print("| a | b |")
    print("|---|---|")
    print(f"| {y} | {y * 2} |")
    ```

    <!-- output: markdown -->

    | a | b |
    |---|---|
    | 1.5 | 3.0 |

    <!-- /output -->

    ```python
    z = 3  # prints nothing, so needs no output block
    ```
    ''')


def run(pytester: pytest.Pytester, page: str, *args: str) -> pytest.RunResult:
    (pytester.path / "page.md").write_text(page)
    return pytester.runpytest(*ARGS, *args)


def test_good_page_passes_and_collects_blocks_in_containers(pytester: pytest.Pytester) -> None:
    result = run(pytester, GOOD)
    result.assert_outcomes(passed=6)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("1.000\n```", "1.001\n```", "page.md:9: the output block differs"),
        ("    3.0\n", "    3.1\n", "page.md:32: the output block differs"),
        ("| 1.5 | 3.0 |", "| 1.5 | 3.5 |", "page.md:55: the output block differs"),
        ("is 0.5<!--", "is 0.6<!--", "page.md:12: prose number shows '0.6' but '{x}' gives '0.5'"),
    ],
)
def test_one_wrong_digit_fails_naming_the_place(
    pytester: pytest.Pytester, old: str, new: str, message: str
) -> None:
    assert GOOD.count(old) == 1
    result = run(pytester, GOOD.replace(old, new))
    result.assert_outcomes(passed=5, failed=1)
    result.stdout.fnmatch_lines([f"*{message}*"])


def test_failure_shows_a_readable_diff(pytester: pytest.Pytester) -> None:
    result = run(pytester, GOOD.replace("1.000\n```", "1.001\n```"))
    result.stdout.fnmatch_lines(["*--- shown on the page", "*+++ printed by the code",
                                 "*-1.001", "*+1.000"])


def test_update_docs_restores_the_page(pytester: pytest.Pytester) -> None:
    broken = (GOOD.replace("1.000\n```", "1.001\n```").replace("    3.0\n", "    9.9\n")
              .replace("| 1.5 | 3.0 |", "| 7 | 7 |").replace("is 1.000<!--", "is 2<!--"))
    result = run(pytester, broken, "--update-docs")
    result.assert_outcomes(passed=6)
    assert (pytester.path / "page.md").read_text() == GOOD
    run_again = pytester.runpytest(*ARGS)
    run_again.assert_outcomes(passed=6)


def test_printing_without_an_output_block_fails_then_update_adds_one(
    pytester: pytest.Pytester,
) -> None:
    page = "Intro\n\n!!! tip\n\n    ```python\n    print(42)\n    ```\n\nEnd\n"
    result = run(pytester, page)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:5: the block prints but no output block follows it*"])
    run(pytester, page, "--update-docs").assert_outcomes(passed=1)
    assert (pytester.path / "page.md").read_text() == textwrap.dedent('''\
        Intro

        !!! tip

            ```python
            print(42)
            ```

            ```text title="Output"
            42
            ```

        End
        ''')
    pytester.runpytest(*ARGS).assert_outcomes(passed=1)


def test_exempt_block_needs_a_visible_reason(pytester: pytest.Pytester) -> None:
    ok = "```python\n# output not shown: it is long and says nothing new\nprint('x' * 500)\n```\n"
    run(pytester, ok).assert_outcomes(passed=1)
    no_reason = ok.replace(": it is long and says nothing new", ":")
    run(pytester, no_reason).assert_outcomes(failed=1)


def test_stale_output_block_under_a_silent_block_fails(pytester: pytest.Pytester) -> None:
    page = "```python\nx = 1\n```\n\n```text\n1\n```\n"
    result = run(pytester, page)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:6: the output block differs*", "*-1"])


def test_raising_block_names_the_markdown_line(pytester: pytest.Pytester) -> None:
    page = "# Title\n\n```python\nx = 1\ny = x / 0\n```\n"
    result = run(pytester, page)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:5: the code block raised*", "*ZeroDivisionError*"])


def test_prose_number_before_any_block_fails(pytester: pytest.Pytester) -> None:
    page = "Pi is 3.14<!--= {3.14} -->.\n\n```python\nx = 1\n```\n"
    result = run(pytester, page)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*page.md:1: prose number '3.14' is tied to code but no python block comes before it*"])


def test_unevaluable_tie_names_the_line(pytester: pytest.Pytester) -> None:
    page = "```python\nx = 1\n```\n\nIt is 1<!--= {nope} -->.\n"
    result = run(pytester, page)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*page.md:5: prose tie '{nope}' cannot be evaluated: NameError*"])


def test_chain_runs_each_block_once(pytester: pytest.Pytester) -> None:
    log = pytester.path / "runs.log"
    code = f"with open({str(log)!r}, 'a') as f:\n    f.write('x')\n"
    block = f"```{{.python continuation}}\n{code}```\n\n"
    run(pytester, f"```python\n{code}```\n\n" + block * 39).assert_outcomes(passed=40)
    assert log.read_text() == "x" * 40  # a re-run chain would have written 820 times


def test_continuation_run_alone_replays_the_chain_silently(pytester: pytest.Pytester) -> None:
    result = run(pytester, GOOD, "-k", "line:45")  # the Markdown-output block, run alone
    result.assert_outcomes(passed=1)


def test_numpy_print_options_do_not_leak_between_chains(pytester: pytest.Pytester) -> None:
    page = textwrap.dedent('''\
        ```python
        import numpy as np
        np.set_printoptions(precision=2)
        print(np.array([1 / 3]))
        ```

        ```text
        [0.33]
        ```

        ```{.python continuation}
        print(np.array([2 / 3]))
        ```

        ```text
        [0.67]
        ```

        ```python
        import numpy as np
        print(np.array([1 / 3]))
        ```

        ```text
        [0.33333333]
        ```
        ''')
    run(pytester, page).assert_outcomes(passed=3)


def test_tie_comment_not_right_after_a_number_is_an_error(pytester: pytest.Pytester) -> None:
    page = "```python\nx = 53\n```\n\nIt is (53)<!--= {x} -->.\n"
    result = run(pytester, page)
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*page.md:5: a `<!--=` comment does not follow a number directly*"])


@pytest.mark.parametrize("workers", [["-n", "0"], ["-n", "2", "--dist", "loadgroup"]],
                         ids=["one process", "xdist"])
def test_a_page_outside_docs_is_refused_in_one_line(workers: list[str]) -> None:
    """Issue 30: `./scripts/test some.md` for a page outside docs/ ended in an INTERNALERROR
    traceback (conftest.py's grouping took the page's path relative to docs/)."""
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "pytest", *workers, "-p", "no:cacheprovider",
                             "README.md"], cwd=root, capture_output=True, text=True,
                            timeout=300, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1 and "README.md" in errors[0] and "docs/" in errors[0], output
