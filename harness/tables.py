"""`markdown_table` now lives in `ffn.tables` (it ships in the wheel the notebooks install);
this name stays so that `from harness.tables import markdown_table` keeps working."""

from ffn.tables import markdown_table

__all__ = ["markdown_table"]
