# Plugins for every run, including `./scripts/test docs/some-page.md`:
# the docs harness (output and prose-number checks) and pytester (the harness's own tests).
pytest_plugins = ["harness.plugin", "harness.requires", "pytester"]
