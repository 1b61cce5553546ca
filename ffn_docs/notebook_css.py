"""The CSS a notebook page uses, out of the ~590 KB that mkdocs-jupyter inlines into it.

mkdocs-jupyter puts JupyterLab's stylesheets in `<style>` blocks in every notebook page's body;
the browser parses all of it before the first paint (5.7 s on Lighthouse's mobile profile,
uncompressed). `take_out` removes those blocks and returns the rules whose classes the page
uses (and Material's `md-*`), with only the custom properties some `var()` reads: ~18 KB, which
hooks/notebooks.py writes to one cached stylesheet. One block, the Python repr of a list of
CSS strings (a mkdocs-jupyter bug), is invalid CSS that never applied; it is dropped.

Plain string work, no MkDocs: a module of its own so that it can be read and tested alone.
"""

from __future__ import annotations

import re

_STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_CLASS_ATTR = re.compile(r'\bclass\s*=\s*"([^"]*)"')
_CSS_CLASS = re.compile(r"\.(-?[_a-zA-Z][_a-zA-Z0-9-]*)")
_SELECTOR_COMMA = re.compile(r",(?![^()]*\))")  # a comma outside :is(...), :not(...)
_DECLARATION_END = re.compile(r";(?![^()]*\))")  # a semicolon outside url(data:...;...)
_CUSTOM_PROPERTY = re.compile(r"^\s*(--[\w-]+)\s*:")


def css_blocks(css: str) -> list[tuple[str, str]]:
    """Split CSS into its top-level (prelude, body) pairs; body is "" for a statement such
    as `@charset ...;`."""
    blocks, depth, start, prelude = [], 0, 0, ""
    i, quote = 0, ""
    while i < len(css):
        c = css[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "{":
            if depth == 0:
                prelude, start = css[start:i].strip(), i + 1
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                blocks.append((prelude, css[start:i]))
                start = i + 1
        elif c == ";" and depth == 0:
            blocks.append((css[start:i].strip(), ""))
            start = i + 1
        i += 1
    return blocks


def prune(css: str, used: set[str]) -> str:
    """The rules of ``css`` whose selectors name only classes in ``used`` (or Material's
    `md-*`; a class inside `:not()` does not count), inside @media and @supports too; other
    at-rules are kept whole, except @charset and @import, which are dropped."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    out = []
    for prelude, body in css_blocks(css):
        if prelude.startswith("@"):
            if prelude.startswith("@charset"):
                continue
            if prelude.startswith(("@media", "@supports")):
                inner = prune(body, used)
                if inner:
                    out.append(f"{prelude}{{{inner}}}")
            elif body or not prelude.startswith("@import"):
                out.append(f"{prelude}{{{body}}}" if body else f"{prelude};")
            continue
        selectors = [sel.strip() for sel in _SELECTOR_COMMA.split(prelude)]
        kept = [sel for sel in selectors if all(
            name in used or name.startswith("md-")
            for name in _CSS_CLASS.findall(re.sub(r":not\([^)]*\)", "", sel)))]
        if kept and body.strip():
            out.append(f"{','.join(kept)}{{{body.strip()}}}")
    return "\n".join(out)


def drop_unused_properties(css: str) -> str:
    """Drop custom property declarations (`--jp-icon-...: url(data:...)`, ~80 KB) that no
    `var()` of the CSS reads."""
    for _ in range(2):  # a property read only by a dropped one goes in the second round
        read = set(re.findall(r"var\(\s*(--[\w-]+)", css))

        def keep(match: re.Match[str], read: set[str] = read) -> str:
            declarations = _DECLARATION_END.split(match.group(2))
            kept = [d for d in declarations if (m := _CUSTOM_PROPERTY.match(d)) is None
                    or m.group(1) in read]
            return f"{match.group(1)}{{{';'.join(kept)}}}"

        css = re.sub(r"([^{}]*)\{((?:[^{}]|\([^()]*\))*)\}", keep, css)
    return css


def take_out(page: str) -> tuple[str, str]:
    """(the page's HTML without its `<style>` blocks, the CSS of those blocks it uses)."""
    used = {name for attr in _CLASS_ATTR.findall(page) for name in attr.split()}
    styles = [css for css in _STYLE.findall(page) if not css.lstrip().startswith("[")]
    return _STYLE.sub("", page), drop_unused_properties(prune("\n".join(styles), used))
