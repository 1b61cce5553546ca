"""Fixtures shared by tests/ and tests/browser/."""

from __future__ import annotations

import pytest

from tests.browser import builtsite


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The digit-mutation tests last: they reuse what the docs pages printed in this run
    (tests/test_docs_digits.py), so they must come after the pages' own tests."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/test_docs_digits.py::"))  # stable


@pytest.fixture(scope="session")
def site_build(tmp_path_factory: pytest.TempPathFactory) -> builtsite.Build:
    """The site, built once per session as CI builds it (`mkdocs build --strict`, links
    checked, notebooks run) for test_site, test_notebooks and the browser tests; it takes a
    third of a minute and more, so it is not repeated for each of them."""
    return builtsite.build_once(tmp_path_factory.mktemp("site"))
