"""What the site's pages are made of, kept out of `ffn`: Python-Markdown extensions that
mkdocs.yml names under `markdown_extensions`, so that MkDocs and Zensical both run them
(mathml, tables), the CSS pruning that hooks/notebooks.py applies to notebook pages
(notebook_css), a page as the notebook a reader runs and `ffn`'s wheel it installs
(reader_notebook, wheel), and purpose.md's key-value example, which its figure and the memory
explorer share (memory). The widgets are widgets/'s; building, serving and inspecting the site
is tooling/'s.

Importable without being in the wheel: the editable install (`pip install -e .`, done by
scripts/_env.sh) puts the repository root on sys.path, as `ffn`'s parent directory.
"""
