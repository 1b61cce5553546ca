"""Draw every figure of the site into docs/figures/, or check that the committed ones are current.

    ./scripts/make-figures           # (re)draw all figures: python -m scripts.figures
    ./scripts/make-figures --check   # exit 1 if a committed figure is missing, stale or orphaned

Figures live in the modules of this package (MODULES): each defines `FIGURES`, a dict from a
file stem (like "activations") to a function that draws it with `ffn` and returns a Figure.
The plots (PLOT_MODULES) are also drawn narrow, for phones (`STEM-narrow.svg`, see _common),
and so are the diagrams a module lists in NARROW_FIGURES; on a phone the page lets the other
diagrams scroll sideways (hooks/figures.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from scripts.figures import (
    activations,
    advanced,
    diagrams,
    dynamics,
    errata,
    expansion,
    parameters,
    roofline,
    routing,
)
from scripts.figures._common import LAYOUTS, WIDE, Draw, render
from scripts.figures.palette import THEMES

OUT = Path(__file__).resolve().parents[2] / "docs" / "figures"
MODULES = (activations, advanced, diagrams, dynamics, errata, expansion, parameters, roofline,
           routing)
PLOT_MODULES = (activations, dynamics, expansion, parameters, roofline, routing)


def registry() -> dict[str, Draw]:
    """Every figure of every module in MODULES, by file stem."""
    figures: dict[str, Draw] = {}
    for module in MODULES:
        for stem, draw in module.FIGURES.items():
            if stem in figures:
                raise ValueError(f"figure {stem!r} is defined twice (again in {module.__name__})")
            figures[stem] = draw
    return figures


def plots() -> set[str]:
    """The stems of the plots (each has a narrow layout; its text is raised to min_font)."""
    return {stem for module in PLOT_MODULES for stem in module.FIGURES}


def narrow() -> set[str]:
    """The stems drawn in the narrow layout too: every plot, and the diagrams whose module
    lists them in NARROW_FIGURES."""
    return plots() | {stem for module in MODULES
                      for stem in getattr(module, "NARROW_FIGURES", ())}


def render_all() -> dict[str, bytes]:
    """File name -> SVG bytes for every figure in every theme (and layout, for the plots)."""
    narrows, plotted = narrow(), plots()
    return {f"{stem}{lay.suffix}{theme.suffix}.svg": render(draw, theme, lay, stem in plotted)
            for stem, draw in registry().items() for theme in THEMES for lay in LAYOUTS
            if lay is WIDE or stem in narrows}


def check(rendered: dict[str, bytes]) -> list[str]:
    """What is wrong with docs/figures/ compared with what the scripts draw now."""
    problems = []
    for name, data in rendered.items():
        path = OUT / name
        if not path.exists():
            problems.append(f"docs/figures/{name} is missing")
        elif path.read_bytes() != data:
            problems.append(f"docs/figures/{name} differs from what the scripts draw now")
    problems += [f"docs/figures/{p.name} is drawn by no script"
                 for p in sorted(OUT.glob("*.svg")) if p.name not in rendered]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    rendered = render_all()
    if args.check:
        problems = check(rendered)
        print("\n".join(problems) or f"{len(rendered)} figures are current")
        return 1 if problems else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for p in OUT.glob("*.svg"):
        if p.name not in rendered:
            p.unlink()
    for name, data in rendered.items():
        (OUT / name).write_bytes(data)
    print(f"wrote {len(rendered)} figures to docs/figures/")
    return 0
