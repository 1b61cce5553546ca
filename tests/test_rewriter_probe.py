"""Probe: adversarial pages through `--update-docs` (issue 26).

Each page is checked, updated, checked again and updated again. A page is *corrupted* when the
update changed it and then the plain check fails (after an update that said it succeeded), a
second update changes it again, or text outside outputs and tied numbers changed. A page is
*untested* when the plain check passes although fewer blocks ran than the page has, or
although a tied number was made wrong. A page the harness refuses (fails, naming the problem,
and leaves the page as it is) is neither. Run this file alone to see the counts:
`./scripts/test tests/test_rewriter_probe.py -q -rf | grep -c corrupted`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.test_harness import ARGS

# An opening python fence, found without the harness's parser (at most one per line).
PYTHON_FENCE = re.compile(r"^[ \t\ufeff]*(`{3,}|~{3,})[ \t]*(\{[^}]*\.(python3?|py)\b[^}]*\}"
                          r"|(python3?|py)\b.*)$")
# A number right before a tie comment: what the rewriter may change in prose.
TIED_NUMBER = re.compile(r"[-+−]?\d(?:[\d.,]*\d)?%?(?=[*_]{0,3}[.,;:]?<!--=)")  # noqa: RUF001


@dataclass
class Case:
    id: str
    page: str
    blocks: int | None = None  # python blocks that must run; None: count the python fences


B = "```python\n{}\n```\n"  # a python block holding {}
CASES = [
    # Output regions holding what closes or opens them
    Case("md-prints-closing", B.format("print('a')\nprint('<!-- /output -->')") +
         "\n<!-- output: markdown -->\n\na\n\n<!-- /output -->\n"),
    Case("md-prints-opening", B.format("print('<!-- output: markdown -->')\nprint('b')") +
         "\n<!-- output: markdown -->\n\nb\n\n<!-- /output -->\n"),
    Case("md-prints-open-fence", B.format("print('```')\nprint('x')") +
         "\n<!-- output: markdown -->\n\nstale\n\n<!-- /output -->\n\n" +
         B.format("print(2)") + "\n```text\n2\n```\n"),
    Case("md-prints-python-fence", B.format("print('```python')\nprint('x = 1')\nprint('```')") +
         "\n<!-- output: markdown -->\n\nstale\n\n<!-- /output -->\n"),
    Case("md-prints-html-comment-start", B.format("print('<!--')\nprint('x')") +
         "\n<!-- output: markdown -->\n\nstale\n\n<!-- /output -->\n\n" +
         B.format("y = 2") + "\nIt is 3<!--= {y} -->.\n"),
    Case("md-prints-tie", B.format("print('It is 5<!--= {1} -->')") +
         "\n<!-- output: markdown -->\n\nstale\n\n<!-- /output -->\n"),
    Case("md-stale-under-silent", B.format("x = 1") +
         "\n<!-- output: markdown -->\n\nstale\n\n<!-- /output -->\n"),
    Case("text-prints-fences", B.format("print('```')\nprint('~~~~')\nprint('``````')") +
         "\n```text\nstale\n```\n"),
    Case("text-prints-python-fence", B.format("print('```python')\nprint('raise SystemExit')")),
    Case("tilde-output", B.format("print('~~~')") + "\n~~~text\nstale\n~~~\n"),
    Case("text-unclosed-at-end", B.format("print(1)") + "\n```text\nstale\n"),
    Case("text-prints-tie", B.format("print('1<!--= {2} -->')")),
    Case("text-prints-md-open", B.format("print('<!-- output: markdown -->')")),
    # Characters a page cannot hold as printed: each block prints "a", this character, "b"
    *(Case(f"prints-{name}", B.format(f"print({'a' + char + 'b'!r})")) for name, char in {
        "cr": "\r", "crlf": "\r\n", "nul": "\x00", "form-feed": "\x0c", "vertical-tab": "\x0b",
        "line-separator": "\u2028", "next-line": "\x85", "bom": "\ufeff", "tab": "\t",
        "unicode": "μ−σ ½ 😀"}.items()),  # noqa: RUF001
    Case("prints-cr-at-end", B.format("print('progress 50%', end='\\r')\nprint('done')")),
    Case("prints-tabs-and-spaces", B.format("print('\\ta  ')\nprint('   ')\nprint('b\\t')")),
    Case("prints-blank-lines-only", B.format("print()\nprint()")),
    Case("prints-leading-blank", B.format("print()\nprint('a')")),
    # Page encodings and line endings
    Case("bom-first-fence", "\ufeff" + B.format("print(1)") + "\n```text\n2\n```\n"),
    Case("bom-then-heading", "\ufeff# T\n\n" + B.format("n = 3") + "\nIt is 4<!--= {n} -->.\n"),
    Case("bare-cr-page", (B.format("print(1)") + "\n```text\n2\n```\n").replace("\n", "\r")),
    Case("crlf-page", (B.format("print(1)") + "\nIt is 2<!--= {1} -->.\n").replace("\n", "\r\n")),
    Case("mixed-endings", B.format("print(1)").replace("\n", "\r\n", 1) + "\n```text\n2\n```\n"),
    Case("no-final-newline", B.format("print(1)") + "\n```text\n2\n```"),
    Case("block-at-eof-no-newline", "```python\nprint(1)\n```"),
    Case("unclosed-python-fence", "# T\n\n```python\nprint(1)\n"),
    # Ties
    Case("tie-prefix-underscore", B.format("n = 768") + "\nIt is size_512<!--= {n} -->.\n"),
    Case("tie-then-period", B.format("n = 768") + "\nIt is 42.<!--= {n} -->\n"),
    Case("tie-then-comma", B.format("n = 768") + "\nIt is 1,024,<!--= {n} --> then\n"),
    Case("tie-emphasis-period", B.format("n = 768") + "\nIt is _512_.<!--= {n} -->\n"),
    Case("tie-letters-before", B.format("n = 768") + "\nIt is d512<!--= {n} -->.\n"),
    Case("tie-in-heading", B.format("n = 7") + "\n## Step 6<!--= {n} -->\n"),
    Case("tie-in-table", B.format("n = 7") + "\n| a | b |\n|---|---|\n| 6<!--= {n} --> | x |\n"),
    Case("tie-in-list", B.format("n = 7") + "\n- item 6<!--= {n} -->\n  1. sub 6<!--= {n} -->\n"),
    Case("tie-in-admonition", B.format("n = 7") + '\n!!! note "N"\n\n    It is 6<!--= {n} -->.\n'),
    Case("tie-adjacent-pair", B.format("n = 7") + "\nIt is 6<!--= {n} -->6<!--= {n} -->.\n"),
    Case("tie-format-brace", B.format("n = 0.25") + "\nIt is 1<!--= {n:.0%} -->.\n"),
    Case("tie-negative", B.format("n = -3") + "\nIt is 3<!--= {n} -->.\n"),
    Case("tie-minus-sign", B.format("n = '−3'") + "\nIt is −4<!--= {n} -->.\n"),  # noqa: RUF001
    Case("tie-expr-has-close", B.format("n = 1") + "\nIt is 1<!--= {'-->'} -->.\n"),
    Case("tie-split-lines", B.format("n = 768") + "\nIt is 768<!--= {n}\n-->.\n"),
    Case("tie-space-before", B.format("n = 768") + "\nIt is 768 <!--= {n} -->.\n"),
    Case("tie-empty-expr", B.format("n = 768") + "\nIt is 768<!--= -->.\n"),
    Case("tie-gives-empty", B.format("n = ''") + "\nIt is 768<!--= {n} -->.\n"),
    Case("tie-gives-newline", B.format("n = '7\\n8'") + "\nIt is 768<!--= {n} -->.\n"),
    Case("tie-gives-period-end", B.format("n = 7") + "\nIt is 8<!--= {n}. -->\n"),
    Case("ties-only-page", "# T\n\nIt is 5<!--= {2 + 3} -->.\n"),
    Case("ties-notest-only", "```{.python notest}\nx = 5\n```\n\nIt is 5<!--= {x} -->.\n"),
    Case("ties-before-block", "It is 5<!--= {2} -->.\n\n" + B.format("x = 1")),
    Case("tie-in-inline-code", B.format("n = 7") + "\nWrite `6<!--= {n} -->` like this.\n"),
    # Block shapes
    Case("block-in-list", "1. Step\n\n   ```python\n   print(1)\n   ```\n"),
    Case("block-in-tab-in-admonition", '!!! note "N"\n\n    === "T"\n\n        ```python\n'
         "        print(1)\n        ```\n"),
    Case("four-backtick-block", "````python\nprint('```')\n````\n"),
    Case("tilde-block", "~~~python\nprint(1)\n~~~\n"),
    Case("output-no-blank-line", "```python\nprint(1)\n```\n```text\n2\n```\n"),
    Case("prose-right-under", "```python\nprint(1)\n```\nProse.\n"),
    Case("two-blocks-touching", "```python\nprint(1)\n```\n```python\nprint(2)\n```\n"),
    Case("annotation-list", "```python\nprint(1)  # (1)!\n```\n\n1.  Note.\n\n```text\n2\n```\n"),
    Case("commented-out-block", "<!--\n```python\nraise SystemExit\n```\n-->\n", blocks=0),
    Case("long-output", B.format("for i in range(300):\n    print(i)")),
    Case("title-output", B.format("print(1)") + '\n```text title="Out"\n2\n```\n'),
]


def outcomes(result: pytest.RunResult) -> tuple[int, int]:
    """(blocks that ran or were skipped with a reason, failures)."""
    o = result.parseoutcomes()
    failed = o.get("failed", 0) + o.get("errors", 0) + o.get("error", 0)
    return o.get("passed", 0) + o.get("skipped", 0) + failed, failed


def prose(data: bytes, where: Path, code: bool = False) -> list[str] | None:
    """The page's lines, blank where the harness sees output (and code, unless ``code``).

    None when the harness refuses the page.
    """
    from ffn_docs import markdown_page as pages

    where.write_bytes(data)
    try:
        page = pages.load(where)
    except Exception:
        return None
    lines = list(page.lines)
    for b in page.blocks:
        spans = [] if code else [(b.start - 1, b.end)]
        if b.output is not None:
            spans.append((b.output.first, b.output.last))
        for first, last in spans:
            lines[first:last] = [""] * (last - first)
    return lines


def skeleton(data: bytes, where: Path) -> list[str]:
    """The page without its output regions, blank lines and tied numbers."""
    lines = prose(data, where, code=True)
    if lines is None:  # a page the harness refuses: compare all of it
        return data.decode("utf8", "replace").splitlines()
    return [TIED_NUMBER.sub("#", ln) for ln in lines if ln.strip()]


def wrong_ties(data: bytes, where: Path) -> bytes:
    """The page with the number before each tie in prose changed."""
    lines = prose(data, where)
    if lines is None:
        return data
    text = data.decode("utf8")
    for ln in {ln for ln in lines if "<!--=" in ln}:
        wrong = re.sub(r"(\d)(?=[*_]{0,3}[.,;:]?<!--=)", lambda m: str((int(m[1]) + 1) % 10), ln)
        text = text.replace(ln, wrong if wrong != ln else ln.replace("<!--=", "9<!--="))
    return text.encode()


def python_fences(text: str) -> int:
    lines = re.split(r"\r\n|\r|\n", text)
    return sum(1 for ln in lines if PYTHON_FENCE.match(ln) and "notest" not in ln)


def problems(pytester: pytest.Pytester, case: Case) -> list[str]:
    path = pytester.path / "page.md"
    before = case.page.encode()
    path.write_bytes(before)
    found: list[str] = []
    updated = pytester.runpytest(*ARGS, "--update-docs", "page.md")
    after = path.read_bytes()
    if after != before:
        if updated.ret == 0 and pytester.runpytest(*ARGS, "page.md").ret != 0:
            found.append("corrupted: the plain check fails after an update that passed")
        pytester.runpytest(*ARGS, "--update-docs", "page.md")
        if path.read_bytes() != after:
            found.append("corrupted: a second --update-docs changed the page")
        if skeleton(before, pytester.path / "a.txt") != skeleton(after, pytester.path / "b.txt"):
            found.append("corrupted: text outside outputs and tied numbers changed")
    path.write_bytes(after)
    checked = pytester.runpytest(*ARGS, "page.md")
    if checked.ret in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        ran = outcomes(checked)[0] if checked.ret == pytest.ExitCode.OK else 0
        expected = python_fences(case.page) if case.blocks is None else case.blocks
        if ran < expected:
            found.append(f"untested: the check passes but {ran} of {expected} blocks ran")
        wrong = wrong_ties(after, pytester.path / "c.txt")
        if wrong != after:
            path.write_bytes(wrong)
            if pytester.runpytest(*ARGS, "page.md").ret in (0, 5):
                found.append("untested: the check passes with a tied number made wrong")
    return found


def test_enough_cases() -> None:
    assert len(CASES) >= 50
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_update_docs_neither_corrupts_nor_hides(pytester: pytest.Pytester, case: Case) -> None:
    found = problems(pytester, case)
    assert not found, "; ".join(found)
