"""Build-time helpers for the site, kept out of `ffn`: Python-Markdown extensions that
mkdocs.yml names under `markdown_extensions`, so that MkDocs and Zensical both run them, and
the CSS pruning that hooks/notebooks.py applies to notebook pages (notebook_css).

Importable without being in the wheel: the editable install (`pip install -e .`, done by
scripts/_env.sh) puts the repository root on sys.path, as `ffn`'s parent directory.
"""
