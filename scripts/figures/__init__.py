"""The site's figures, drawn with `ffn` and matplotlib: `python -m scripts.figures` (build.py)."""
