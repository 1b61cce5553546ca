"""What builds, serves and inspects the site for the tests, scripts/ and CI; not part of the
site's pages (ffn_docs) nor of `ffn`: `site` (build, serve, list the pages), `chromium` (its
path and flags), `lighthouse`, `system` (the Debian packages the tests need) and `requires`
(the pytest plugin of the `needs` marker that skips a test whose package is missing).

Importable without being in the wheel, as ffn_docs is: the editable install puts the
repository root on sys.path.
"""
