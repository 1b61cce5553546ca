"""Property: `--update-docs` turns any page built from our constructs into exactly the page an
author would have written, which then passes and which a second run leaves alone.

A page is generated twice from one description: as it should read, and as a stale copy (wrong
tie numbers, stale or missing outputs, a stale output under a silent block). The only
differences between the two are in output regions and tied numbers, so "the rewritten stale page
equals the right page" also says that nothing else changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from harness.outputs import fence_for
from tests.test_harness import ARGS

# Values tied in prose. 68 inside 768 once made the rewriter fix the wrong place.
VALUES = ["7", "68", "768", "0.5", "1.5%", "−3", "12a"]  # noqa: RUF001 (a minus sign)
# Lines a block prints into a ```text fence: fence runs, tabs, container-like lines, a tie-like
# comment (in a fence it is text, not a tie).
TEXT_LINES = ["a", "x = 1", "```", "a ``` b", "````", "~~~", "\tby a tab", "a\tb",
              '!!! note "Printed"', "    indented", '=== "Printed tab"', "1<!--= {v} -->", ""]
MARKDOWN_LINES = ["| a | b |", "|---|---|", "| 1 | 2 |", "- item", "**bold** 0.5", ""]
CONTAINERS = [None, '!!! note "Box"', '=== "Tab"']
EMPHASIS = ["", "_", "*", "**", "__"]


@dataclass
class Tie:
    var: int
    emphasis: str
    stale: str | None  # what the stale page shows instead of the value


@dataclass
class Spec:
    continuation: bool
    container: str | None
    values: list[str]
    printed: list[str]
    kind: str  # "text" or "markdown"
    fence: str  # the author's fence, "```" or "~~~"
    shown: str  # on the stale page: "right", "stale" or "missing"
    ties: list[list[Tie]]  # lines of prose, each with its ties
    adjacent: bool  # prose right under the last construct, no blank line


def strip(lines: list[str]) -> list[str]:
    while lines and not lines[0]:
        lines = lines[1:]
    while lines and not lines[-1]:
        lines = lines[:-1]
    return lines


@st.composite
def specs(draw: st.DrawFn, first: bool) -> Spec:
    values = draw(st.lists(st.sampled_from(VALUES), max_size=3))
    kind = draw(st.sampled_from(["text", "markdown"]))
    pool = TEXT_LINES if kind == "text" else MARKDOWN_LINES
    printed = strip(draw(st.lists(st.sampled_from(pool), max_size=4)))
    tie = st.builds(Tie, st.integers(0, max(len(values) - 1, 0)), st.sampled_from(EMPHASIS),
                    st.none() | st.sampled_from(VALUES))
    return Spec(
        continuation=not first and draw(st.booleans()),
        container=draw(st.sampled_from(CONTAINERS)),
        values=values,
        printed=printed,
        kind=kind if printed else "text",
        fence=draw(st.sampled_from(["```", "~~~"])),
        shown=draw(st.sampled_from(["right", "stale", "missing"])),
        ties=draw(st.lists(st.lists(tie, min_size=1, max_size=3), max_size=2)) if values else [],
        adjacent=draw(st.booleans()),
    )


def render(n: int, spec: Spec, stale: bool) -> list[str]:
    """Block n of the page, as it should read or (stale) as the page before the update."""
    info = "{.python continuation}" if spec.continuation else "python"
    code = [f"v{n}_{i} = {v!r}" for i, v in enumerate(spec.values)]
    code += [f"print({line!r})" for line in spec.printed]
    lines = [f"```{info}", *(code or ["pass"]), "```"]
    shown = spec.shown if stale else "added" if spec.shown == "missing" else "right"
    if not spec.printed:
        if shown == "stale":  # an output under a block that prints nothing
            lines += ["", f"{spec.fence}text", "stale", spec.fence]
    elif shown == "added":  # as --update-docs adds it
        fence = fence_for(spec.printed)
        lines += ["", f'{fence}text title="Output"', *spec.printed, fence]
        if spec.ties and spec.adjacent:
            lines.append("")
    elif shown == "missing":
        pass
    elif spec.kind == "markdown":
        body = spec.printed if shown == "right" else ["stale"]
        lines += ["", "<!-- output: markdown -->", "", *body, "", "<!-- /output -->"]
    else:
        fence = fence_for(spec.printed, spec.fence) if shown == "right" else spec.fence
        body = spec.printed if shown == "right" else ["stale"]
        lines += ["", f"{fence}text", *body, fence]
    if spec.ties and not spec.adjacent:
        lines.append("")
    for ties in spec.ties:
        words = [f"{t.emphasis}{t.stale if stale and t.stale else spec.values[t.var]}"
                 f"{t.emphasis[::-1]}<!--= {{v{n}_{t.var}}} -->" for t in ties]
        lines.append("It is " + " and ".join(words) + ".")
    if spec.container:
        lines = [spec.container, "", *("    " + ln if ln else "" for ln in lines)]
    return lines


def page(blocks: list[Spec], stale: bool, newline: str) -> bytes:
    lines = ["# A page", ""]
    for n, spec in enumerate(blocks):
        lines += [*render(n, spec, stale), ""]
    return newline.join(lines).encode()


# Deterministic for CI (derandomize, no database); ~25 s. No shrinking: at three pytest runs an
# example it took over five minutes, and the unshrunk page (at most four blocks) is readable.
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])
@given(first=specs(first=True), rest=st.lists(specs(first=False), max_size=3),
       newline=st.sampled_from(["\n", "\r\n"]))
def test_update_docs_writes_the_right_page_and_settles(
    pytester: pytest.Pytester, first: Spec, rest: list[Spec], newline: str
) -> None:
    blocks = [first, *rest]
    path = pytester.path / "page.md"
    path.write_bytes(page(blocks, stale=True, newline=newline))
    pytester.runpytest(*ARGS, "--update-docs").assert_outcomes(passed=len(blocks))
    right = page(blocks, stale=False, newline=newline)
    assert path.read_bytes().decode() == right.decode()
    pytester.runpytest(*ARGS).assert_outcomes(passed=len(blocks))
    pytester.runpytest(*ARGS, "--update-docs")
    assert path.read_bytes() == right, "a second --update-docs changed the page"
