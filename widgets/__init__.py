"""The FFN lab's widgets: one folder each, found here, so adding a folder adds the widget.

A page asks for a widget with an empty `<div class="ffn-widget" data-widget="NAME"></div>`
("NAME", or "NAME-PART" for one of several of a kind: the exercises' `answers-L2-1`).
hooks/lab.py replaces it with `render(NAME)`: the same div holding the widget's table of
ffn's numbers (what a reader without JavaScript, the print page and the PDF see) and its data
as JSON. In the browser, `_shared/loader.js` imports `NAME/mount.js`, which mounts the controls
and hides the table.

A widget's folder `widgets/NAME/` holds `data.py` (its table and data, computed by ffn;
`WIDGETS` maps each name it answers to the function writing them), `lab.js` (its arithmetic:
pure functions, no DOM, held to ffn in Node by tests/test_widget*.py) and `mount.js` (its
controls). `_shared/` holds what several use: the argument checks and number formats
(check.js, format.js), the DOM helpers and d3 (dom.js), the loader and the fallback markup.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def folders() -> list[Path]:
    """Every widget's folder: each folder here with a data.py, `_shared` aside."""
    return sorted(p.parent for p in HERE.glob("*/data.py") if not p.parent.name.startswith("_"))


@functools.cache
def registry() -> dict[str, Callable[[], str]]:
    """Every widget name a page may ask for, and the function writing its table and data.

    A name is its folder's, or the folder's then "-PART": the loader finds `mount.js` by the
    part before the first "-", so a name of another folder is refused here, at the build."""
    found: dict[str, Callable[[], str]] = {}
    for folder in folders():
        module = importlib.import_module(f"{__name__}.{folder.name}.data")
        for name, write in module.WIDGETS.items():
            if name.split("-")[0] != folder.name:
                raise ValueError(f"widgets/{folder.name}/data.py: the widget {name!r} would "
                                 f"load {name.split('-')[0]}/mount.js; name it "
                                 f"{folder.name!r} or {folder.name + '-PART'!r}")
            found[name] = write
    return found


def render(name: str) -> str:
    """The widget's div, filled: its fallback table and its data. KeyError for an unknown name."""
    return f'<div class="ffn-widget" data-widget="{name}">{registry()[name]()}</div>'


def scripts() -> list[Path]:
    """The JavaScript the site serves, under javascripts/widgets/ at the same relative paths
    (hooks/lab.py copies them): every widget's lab.js and mount.js, and _shared's."""
    return sorted(HERE.glob("*/*.js"))
