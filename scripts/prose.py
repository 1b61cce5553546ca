"""How readable each page's running prose is: sentences, words a sentence, long sentences.

    python -m scripts.prose          # a table of every page, its targets, and any receipts

What counts as running prose, a sentence and a word is ffn_docs/prose.py's docstring. The
targets are the book's: the core path (home and chapters 1 to 6) at most 20 words a sentence
on average and at most 5 % of sentences over 40 words; every deeper page at most 24 and 10 %.
tests/test_prose.py holds every page to them and keeps receipts out of running prose.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ffn_docs import prose

DOCS = Path(__file__).resolve().parent.parent / "docs"
CORE = ("index.md", "purpose.md", "architecture.md", "gelu.md", "expand-contract.md",
        "parameters-flops.md", "worked-example.md", "trained-ffn.md")
# Not running prose: the references ledger and the API reference (ffn's docstrings).
NOT_PROSE = ("references.md", "api.md")


@dataclass(frozen=True)
class Target:
    mean_words: float  # at most this many words a sentence, on average
    long_share: float  # at most this share of sentences over prose.LONG words


CORE_TARGET = Target(mean_words=20, long_share=0.05)
DEEPER_TARGET = Target(mean_words=24, long_share=0.10)


def pages() -> list[Path]:
    """Every Markdown page of running prose under docs/."""
    return sorted(p for p in DOCS.glob("*.md") if p.name not in NOT_PROSE)


def target(page: Path) -> Target:
    return CORE_TARGET if page.name in CORE else DEEPER_TARGET


def meets(measured: prose.Prose, goal: Target) -> bool:
    return measured.mean_words <= goal.mean_words and measured.long_share <= goal.long_share


def main() -> int:
    print(f"{'page':24} {'sentences':>9} {'words/sentence':>14} {'over 40':>8} "
          f"{'minutes':>7}  target")
    failed = 0
    for page in pages():
        text = page.read_text(encoding="utf-8")
        measured, goal = prose.read(text), target(page)
        ok = meets(measured, goal)
        failed += not ok
        print(f"{page.name:24} {len(measured.sentences):9} {measured.mean_words:14.1f} "
              f"{measured.long_share:8.1%} {measured.minutes:7}  "
              f"<= {goal.mean_words:g}, <= {goal.long_share:.0%}: {'met' if ok else 'MISSED'}")
        for kind, sentence in prose.receipts(text):
            failed += 1
            print(f"    receipt ({kind}): {sentence[:100]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
