"""The machine's own tools that some tests need, from Debian's packages: which are missing,
installing them (as root, with apt-get: what scripts/test does before the tests), and which
tests cannot run without them (they are skipped with the package named, or fail where an
FFN_REQUIRE_* variable says they must run, as .ci/run sets).

    python -m tooling.system install    # what scripts/test runs
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

from tooling import chromium


@dataclass(frozen=True)
class Tool:
    package: str  # Debian's package
    commands: tuple[str, ...]  # what it installs; any of them missing: the tool is missing
    needed_by: str  # the tests that cannot run without it
    require: str  # FFN_REQUIRE_<X>=1: those tests fail where it is missing, instead of skipping
    recommends: bool = False  # apt's recommended packages too (Chromium's fonts)

    def missing(self) -> bool:
        return any(not os.path.isfile(c) and shutil.which(c) is None for c in self.commands)

    def required(self) -> bool:
        return os.environ.get(self.require) == "1"


TOOLS = {tool.package: tool for tool in (
    Tool("chromium", (chromium.PATH,), "the browser tests and the book's PDF",
         "FFN_REQUIRE_BROWSER", recommends=True),
    # npm installs d3, axe-core and Lighthouse (scripts/_env.sh runs `npm ci`).
    Tool("npm", ("npm", "node"), "the site's build (d3) and the browser tests (axe-core, "
         "Lighthouse)", "FFN_REQUIRE_BROWSER"),
    Tool("poppler-utils", ("pdftotext", "pdfimages", "pdfinfo"), "the PDF tests",
         "FFN_REQUIRE_PDF"),
)}


def why_missing(packages: Sequence[str]) -> str | None:
    """Why tests needing ``packages`` cannot run here (naming the packages), or None."""
    missing = [TOOLS[p] for p in packages if TOOLS[p].missing()]
    if not missing:
        return None
    names = " ".join(t.package for t in missing)
    return (f"needs Debian's {names} (apt-get install -y {names}; ./scripts/test installs it "
            f"when run as root on Debian)")


Run = Callable[[list[str]], object]


def install(tools: Sequence[Tool], *, root: bool, apt: bool, run: Run,
            log: TextIO) -> list[Tool]:
    """Install the missing ``tools`` with one `apt-get update` where we may (``root`` and
    ``apt``), saying so on ``log``; return those still missing, each named on ``log`` with the
    tests that will be skipped for it."""
    missing = [t for t in tools if t.missing()]
    if missing and root and apt:
        names = " ".join(t.package for t in missing)
        print(f"installing Debian's {names} for {'; '.join(t.needed_by for t in missing)}"
              " (apt-get, as root) ...", file=log)
        run(["apt-get", "update", "-qq"])
        plain = [t.package for t in missing if not t.recommends]
        if plain:
            run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *plain])
        with_recommends = [t.package for t in missing if t.recommends]
        if with_recommends:
            run(["apt-get", "install", "-y", "-qq", *with_recommends])
        missing = [t for t in missing if t.missing()]
    for tool in missing:
        action = ("they will fail, as " + tool.require + "=1 asks" if tool.required()
                  else "they will be skipped")
        print(f"note: Debian's {tool.package} is missing and can be installed only as root with"
              f" apt-get: {tool.needed_by} cannot run here; {action}", file=log)
    return missing


def _run(command: list[str]) -> None:
    # apt's progress goes nowhere, its errors to our stderr; a failed install is reported by
    # `install` as a tool still missing, and the tests then say which.
    subprocess.run(command, stdout=subprocess.DEVNULL, check=False)


def main(argv: Sequence[str]) -> int:
    if list(argv) != ["install"]:
        print("usage: python -m tooling.system install", file=sys.stderr)
        return 2
    install(list(TOOLS.values()), root=os.geteuid() == 0, apt=shutil.which("apt-get") is not None,
            run=_run, log=sys.stderr)
    return 0  # a tool still missing is the tests' to skip or fail, by name


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
