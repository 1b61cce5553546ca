"""Lighthouse on a freshly built, locally served site: `python -m tooling.lighthouse`, which
scripts/lighthouse runs, and tests/browser/test_lighthouse.py on the tests' build.

Audits three pages (the home page, the longest chapter, and the Lab with its five widgets)
with Lighthouse 12 (npm, node_modules/.bin) in Debian's Chromium, twice: served
gzip-compressed, as GitHub Pages serves it ("gzip"), and uncompressed, as `python -m
http.server` serves it ("plain"). Prints the four category scores and the main performance
figures of each, and exits non-zero when Accessibility, Best Practices or SEO is under 95 on
any of them. Performance is reported, not gated: see PERFORMANCE_MIN.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from tooling import chromium, site

LIGHTHOUSE = site.ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
GATED = {"accessibility": 95, "best-practices": 95, "seo": 95}  # minimum score, 0-100
# Performance is not gated. Lighthouse's mobile score simulates a 4x slower CPU from the wall
# time of the tasks it measures on this one, so other work on a shared 2-core machine inflates
# them. Since the tables are written in Material's wrapper (ffn_docs/tables.py), three runs at
# a load average of 1-2 gave home 100/98/98, the chapter 100/95/96, the Lab 97/98/98 (gzip);
# at a load average of 9-14 the chapter scored 75-91 and the Lab 89-99: a gate at 95 would
# fail with the load, not when a page gets slower (CONTRIBUTING, "Lighthouse"). Printed only.
PERFORMANCE_MIN: int | None = None
SERVES = {"gzip": True, "plain": False}  # name -> served compressed
# Figures printed under the scores: audit id -> (label, unit).
FIGURES = {
    "first-contentful-paint": ("FCP", "s"),
    "largest-contentful-paint": ("LCP", "s"),
    "total-blocking-time": ("TBT", "s"),
    "cumulative-layout-shift": ("CLS", ""),
    "dom-size": ("DOM", "elements"),
    "total-byte-weight": ("bytes", "KiB"),
}
REPORTS = site.ROOT / ".cache" / "lighthouse"  # gitignored
SCORES = REPORTS / "scores.txt"  # the last table the tests measured


LAB = "lab.md"  # the page that gathers the widgets (docs/lab.md)


def pages(site_dir: Path) -> dict[str, str]:
    """name -> site-relative URL of the pages to audit: the home page, the longest chapter and
    the Lab, whose five widgets make it the heaviest page to start (issue 41)."""
    lab = site.page_url(LAB)

    def text_length(url: str) -> int:
        html = (site_dir / url / "index.html").read_text(encoding="utf-8")
        article = html[html.find("<article"):html.find("</article>")]
        return len(re.sub(r"<[^>]+>", "", article))

    chapter = max((p.url for p in site.chapters() if p.url != lab), key=text_length)
    return {"home": "", "chapter": chapter, "lab": lab}


def widget_pages(site_dir: Path) -> dict[str, str]:
    """name -> URL of every page of the nav with a widget of the FFN lab (hooks/lab.py)."""
    return {p.url.strip("/"): p.url for p in site.nav_pages()
            if 'class="ffn-widget"' in (site_dir / p.url / "index.html").read_text("utf-8")}


def audit(url: str, out: Path, preset: str | None) -> dict[str, object]:
    """Run Lighthouse on ``url`` in Debian's Chromium, started by Lighthouse's own launcher
    with a fresh profile; writes out.report.json and out.report.html, returns the JSON."""
    command = [
        str(LIGHTHOUSE), url,
        f"--only-categories={','.join(CATEGORIES)}",
        "--output=json", "--output=html", f"--output-path={out}",
        f"--chrome-flags=--headless=new {' '.join(chromium.ARGS)}",
        # The full-page screenshot only illustrates the HTML report (no audit scores it)
        # and takes seconds on a long page.
        "--disable-full-page-screenshot",
        "--quiet",
    ]
    if preset:
        command.append(f"--preset={preset}")
    result = subprocess.run(command, capture_output=True, text=True, check=False,
                            env={**os.environ, "CHROME_PATH": chromium.PATH})
    if result.returncode != 0:
        raise RuntimeError(f"lighthouse failed on {url}:\n{result.stdout}{result.stderr}")
    report: dict[str, object] = json.loads(Path(f"{out}.report.json").read_text("utf-8"))
    return report


def failing_audits(report: dict[str, object], category: str) -> list[str]:
    """The audits of a category that did not pass, with their titles."""
    audits = report["audits"]
    assert isinstance(audits, dict)
    categories = report["categories"]
    assert isinstance(categories, dict)
    lines = []
    for ref in categories[category]["auditRefs"]:
        result = audits[ref["id"]]
        if ref["weight"] and result["score"] is not None and result["score"] < 1:
            lines.append(f"{ref['id']} ({result['score']:.2f}): {result['title']}")
    return lines


def figures(report: dict[str, object]) -> str:
    """The main performance figures of a report, in one line."""
    audits = report["audits"]
    assert isinstance(audits, dict)
    parts = []
    for audit_id, (label, unit) in FIGURES.items():
        value = audits.get(audit_id, {}).get("numericValue")
        if value is None:
            continue
        if unit == "s":
            parts.append(f"{label} {value / 1000:.2f} s")
        elif unit == "KiB":
            parts.append(f"{value / 1024:.0f} KiB")
        elif unit:
            parts.append(f"{value:.0f} {unit}")
        else:
            parts.append(f"{label} {value:.3f}")
    return ", ".join(parts)


Row = tuple[str, str, str, dict[str, int], str]  # page name, URL, serve, scores, figures


def run(site_dir: Path, base_url: str, preset: str | None = None, serve: str = "plain",
        which: Callable[[Path], dict[str, str]] = pages) -> tuple[list[Row], list[str]]:
    """Audit the pages of the site served at ``base_url`` (``serve``: how, for the table):
    (name, URL, serve, scores, figures) per page, and the failures (scores under the minimum,
    with the audits that lost points)."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = []
    failures = []
    gated = {**GATED, **({"performance": PERFORMANCE_MIN}
                         if PERFORMANCE_MIN is not None and serve == "gzip" else {})}
    for name, url in which(site_dir).items():
        report = audit(base_url + url, REPORTS / f"{name}-{serve}", preset)
        categories = report["categories"]
        assert isinstance(categories, dict)
        scores = {c: round(100 * (categories[c]["score"] or 0)) for c in CATEGORIES}
        rows.append((name, "/" + url, serve, scores, figures(report)))
        for category, minimum in gated.items():
            if scores[category] < minimum:
                failures.append(f"{name} /{url} ({serve}): {category} {scores[category]}"
                                f" < {minimum}")
                failures += [f"    {line}" for line in failing_audits(report, category)]
    return rows, failures


def run_served(site_dir: Path, preset: str | None = None, serves: Sequence[str] = tuple(SERVES),
               which: Callable[[Path], dict[str, str]] = pages
               ) -> tuple[list[Row], list[str]]:
    """Serve the site each way of ``serves`` (SERVES) and audit it each time."""
    rows: list[Row] = []
    failures: list[str] = []
    for serve in serves:
        with site.serve(site_dir, compress=SERVES[serve]) as base_url:
            more_rows, more_failures = run(site_dir, base_url, preset, serve, which)
        rows += more_rows
        failures += more_failures
    return rows, failures


def table(rows: list[Row]) -> list[str]:
    width = max(len(f"{name} {url} ({serve})") for name, url, serve, _, _ in rows)
    lines = [f"{'page':<{width}}  " + "  ".join(f"{c:>14}" for c in CATEGORIES)]
    for name, url, serve, scores, line in rows:
        lines.append(f"{f'{name} {url} ({serve})':<{width}}  "
                     + "  ".join(f"{scores[c]:>14}" for c in CATEGORIES))
        lines.append(f"    {line}")
    # Performance depends on what else the machine does: the 1, 5 and 15 minute load averages.
    lines.append("load average while measured: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/lighthouse", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=["desktop"], default=None,
                        help="Lighthouse's desktop settings (default: its mobile emulation)")
    parser.add_argument("--site", type=Path, default=None, metavar="DIR",
                        help="audit this already built site (the directory holding its"
                        " index.html, built under the site_url path) instead of building one")
    parser.add_argument("--widget-pages", action="store_true",
                        help="audit every page with a widget of the FFN lab instead, served"
                        " gzip-compressed only")
    args = parser.parse_args(argv)
    serves, which = (["gzip"], widget_pages) if args.widget_pages else (list(SERVES), pages)
    missing = [] if LIGHTHOUSE.exists() else ["lighthouse (npm ci)"]
    if not chromium.installed():
        missing.append(f"{chromium.PATH} (apt-get install -y chromium)")
    if missing:
        print("scripts/lighthouse needs: " + "; ".join(missing), file=sys.stderr)
        return 2
    if args.site is not None:
        rows, failures = run_served(args.site.resolve(), args.preset, serves, which)
    else:
        with tempfile.TemporaryDirectory(prefix="ffn-site-") as tmp:
            built = site.build(Path(tmp))
            if built.dir is None:
                print(built.log, file=sys.stderr)
                return 1
            rows, failures = run_served(built.dir, args.preset, serves, which)
    print("\n".join(table(rows)))
    print(f"reports: {REPORTS}")
    if failures:
        print("\n".join(["", "under the minimum:", *failures]), file=sys.stderr)
        return 1
    gated = ", ".join(f"{c} >= {m}" for c, m in GATED.items())
    print(f"lighthouse: {len(rows)} audits, {gated} on each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
