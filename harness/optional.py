"""PyTorch as an optional, test-only dependency: skipped where missing, required in CI.

`FFN_REQUIRE_TORCH=1` (set by .ci/run) turns a skip into a failure. `FFN_HIDE_TORCH=1` is for
the harness's own tests only: it makes torch count as missing, so that the skip and failure
paths can be tested on a machine that has torch.
"""

from __future__ import annotations

import functools
import importlib
import os
import types

import pytest

REQUIRE = "FFN_REQUIRE_TORCH"
HIDE = "FFN_HIDE_TORCH"


def required() -> bool:
    """True when a missing torch must fail the run instead of skipping (CI)."""
    return os.environ.get(REQUIRE) == "1"


def torch_missing() -> str | None:
    """Why `import torch` does not work here, or None when it does."""
    if os.environ.get(HIDE) == "1":
        return f"{HIDE}=1 hides it"
    return _import_error("torch")


@functools.cache
def _import_error(name: str) -> str | None:
    try:
        importlib.import_module(name)
    except ImportError as error:
        return f"{type(error).__name__}: {error}"
    return None


def import_torch(what: str) -> types.ModuleType:
    """torch, or a skip naming `what` was not run (a failure under FFN_REQUIRE_TORCH=1).

    Args:
        what: what cannot run without torch, for the message ("the gloo test").

    Returns:
        The torch module.

    Raises:
        pytest.skip.Exception: torch is missing.
        pytest.fail.Exception: torch is missing and FFN_REQUIRE_TORCH=1.
    """
    reason = torch_missing()
    if reason is None:
        return importlib.import_module("torch")
    if required():
        pytest.fail(f"{REQUIRE}=1 but torch cannot be imported ({reason}): {what} must run; "
                    "install the `torch` dependency group", pytrace=False)
    pytest.skip(f"torch is not installed: {what} not run ({reason}; "
                f"set {REQUIRE}=1 to fail instead)")
