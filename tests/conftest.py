"""Fixtures shared by tests/ and tests/browser/."""

from __future__ import annotations

import pytest

from tests.browser import builtsite


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> builtsite.Build:
    """The site, built once per session as CI builds it (`mkdocs build --strict`, links
    checked, notebooks run) for test_site, test_notebooks and the browser tests; it takes a
    third of a minute and more, so it is not repeated for each of them."""
    return builtsite.build_once(tmp_path_factory.mktemp("site"))
