"""The doc-test harness (the pytest plugin is `harness.plugin`).

`markdown_table` moved to `ffn.tables` (the wheel the notebooks install holds it); the name
`harness.markdown_table` still works, loaded on first use, so that importing this package
stays light: it does not load the plugin, pytest or numpy.
"""

from __future__ import annotations

from typing import Any

__all__ = ["markdown_table"]


def __getattr__(name: str) -> Any:
    if name == "markdown_table":
        from ffn.tables import markdown_table

        return markdown_table
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
