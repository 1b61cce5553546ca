"""Debian's Chromium, the one browser the project uses: for the book's PDF (hooks/pdf.py), the
browser tests (tests/browser), Lighthouse (tooling/lighthouse.py) and the install step of
scripts/test (tooling/system.py). Its path comes from one setting, FFN_CHROMIUM."""

from __future__ import annotations

import os
import shutil

PATH = os.environ.get("FFN_CHROMIUM", "/usr/bin/chromium")

# Headless, as root (no sandbox there), and nothing that talks to the network by itself: this
# machine's closed network refuses those connections, many at a time.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def installed() -> bool:
    """Whether PATH names a Chromium here (a file, or a command on $PATH)."""
    return os.path.isfile(PATH) or shutil.which(PATH) is not None
