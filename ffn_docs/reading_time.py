"""Python-Markdown extension: fill `<!-- reading-time -->` marks with minutes to read.

A chapter's "In this chapter" box says how long it takes; the number is computed from the
page's length (ffn_docs.prose says how), never typed, so it follows the page as it changes.
A Markdown extension, like mathml, so that MkDocs and Zensical both run it.
"""

from __future__ import annotations

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from ffn_docs.prose import fill_reading_times


class ReadingTimePreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return fill_reading_times("\n".join(lines)).split("\n")


class ReadingTimeExtension(Extension):
    def extendMarkdown(self, md: Markdown) -> None:
        # Before snippets (32) and raw HTML (20): the page as written, its comments still there.
        md.preprocessors.register(ReadingTimePreprocessor(md), "ffn_reading_time", 35)


def makeExtension(**kwargs: object) -> ReadingTimeExtension:  # what Python-Markdown looks up
    return ReadingTimeExtension(**kwargs)
