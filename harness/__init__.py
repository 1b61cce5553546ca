"""The doc-test harness (the pytest plugin is `harness.plugin`) and what pages use from it.

Importing this package stays light: it does not load the plugin, pytest or numpy.
"""

from harness.tables import markdown_table

__all__ = ["markdown_table"]
