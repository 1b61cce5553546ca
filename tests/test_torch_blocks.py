"""The `torch` fence option: PyTorch tabs run where torch imports, are skipped where it does not.

Missing torch is simulated with FFN_HIDE_TORCH=1 (harness/optional.py), so that the
skip and failure paths are tested on a machine that has torch; the path where the tab runs
needs torch itself (skipped without it, failed under FFN_REQUIRE_TORCH=1).
"""

from __future__ import annotations

import textwrap

import pytest

from harness import optional
from tests.test_harness import ARGS, run, titled_page

# A numpy block, its PyTorch tab continuing it, then a numpy block continuing the chain. The
# torch block defines `t_only` and rebinds `x`; neither may reach the numpy block after it.
PAGE = titled_page('x = 2.0\nprint(f"{x:.1f}")', "2.0", '''\
    === "numpy (ffn)"

        ```{.python continuation}
        y = x * 3
        print(f"{y:.1f}")
        ```

        ```text
        6.0
        ```

    === "PyTorch"

        ```{.python continuation torch}
        import torch
        t_only = torch.tensor(x) * 3
        x = -1.0
        assert float(t_only) == y
        print(f"{float(t_only):.1f}")
        ```

        ```text
        6.0
        ```

    Three times x is 6.0<!--= {y:.1f} -->.

    ```{.python continuation}
    print(f"{x + y:.1f}", "t_only" in globals())
    ```

    ```text
    8.0 False
    ```
    ''')
SKIP_REASON = "torch is not installed: PyTorch tab not run"

# Import torch (where it is installed) now, before any in-process pytester run: pytester drops
# the modules a run imported when it ends, and torch cannot be imported a second time.
optional.torch_missing()


@pytest.fixture
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(optional.HIDE, "1")
    monkeypatch.delenv(optional.REQUIRE, raising=False)


def test_with_torch_the_tab_runs_and_its_output_is_checked(pytester: pytest.Pytester) -> None:
    optional.import_torch("the PyTorch tab test")
    run(pytester, PAGE).assert_outcomes(passed=4)
    wrong = PAGE.replace("    6.0\n    ```\n\nThree", "    6.5\n    ```\n\nThree")
    assert wrong.count("6.5") == 1
    result = run(pytester, wrong)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([("*page.md:34: the output block differs from what the block at "
                                 "line 25 prints*")])


def test_without_torch_the_tab_is_skipped_with_a_reason(
    pytester: pytest.Pytester, no_torch: None
) -> None:
    result = run(pytester, PAGE, "-rs")
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines([f"*page.md:25: {SKIP_REASON}*FFN_HIDE_TORCH=1*"])


def test_without_torch_a_stale_tab_output_is_left_alone(
    pytester: pytest.Pytester, no_torch: None
) -> None:
    # Nothing ran to say what the tab prints: neither reported nor rewritten, while the numpy
    # outputs on the page are still rewritten.
    stale = PAGE.replace("    6.0\n    ```\n\nThree", "    stale\n    ```\n\nThree")
    broken = stale.replace("2.0\n```", "2.5\n```")
    run(pytester, broken, "--update-docs").assert_outcomes(passed=3, skipped=1)
    assert (pytester.path / "page.md").read_text() == stale
    pytester.runpytest(*ARGS).assert_outcomes(passed=3, skipped=1)


def test_without_torch_under_require_the_tab_fails(
    pytester: pytest.Pytester, no_torch: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(optional.REQUIRE, "1")
    result = run(pytester, PAGE)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [("*page.md:25: FFN_REQUIRE_TORCH=1 but torch cannot be imported*the PyTorch tab must "
         "run*")])


def test_a_tie_after_a_tab_belongs_to_the_numpy_block(
    pytester: pytest.Pytester, no_torch: None
) -> None:
    # Checked even without torch: a wrong prose number after the skipped tab still fails.
    result = run(pytester, PAGE.replace("is 6.0<!--", "is 6.1<!--"))
    result.assert_outcomes(passed=2, failed=1, skipped=1)
    result.stdout.fnmatch_lines([("*page.md:37: prose number shows '6.1' but '{y:.1f}' gives "
                                 "'6.0'*")])


def test_a_numpy_block_cannot_continue_only_torch_blocks(pytester: pytest.Pytester) -> None:
    page = "```{.python torch}\nx = 1\n```\n\n```{.python continuation}\nprint(x)\n```\n"
    result = run(pytester, page)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*page.md:5: `continuation` but only torch blocks run above it*"])


def test_a_torch_block_continues_a_torch_block(pytester: pytest.Pytester) -> None:
    optional.import_torch("the PyTorch chain test")
    page = textwrap.dedent('''\
        ```python
        a = 1
        ```

        ```{.python continuation torch}
        b = a + 1
        ```

        ```{.python continuation torch}
        print(a + b)
        ```

        ```text
        3
        ```
        ''')
    run(pytester, page).assert_outcomes(passed=3)
    run(pytester, page, "-k", "line:9").assert_outcomes(passed=1)  # alone: replays a, then b


def test_a_misspelt_torch_option_names_the_valid_ones(pytester: pytest.Pytester) -> None:
    result = run(pytester, "```{.python torhc}\nx = 1\n```\n")
    assert result.ret != 0
    result.stdout.fnmatch_lines([("*unknown fence option 'torhc' (valid: continuation, notest, "
                                 "torch, *")])
