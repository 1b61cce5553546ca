"""Lighthouse on a freshly built, locally served site: run by scripts/lighthouse.

Audits three pages (the home page, the longest chapter, and the first notebook of the nav, or
the worked example while there is none) with Lighthouse 12 (npm, node_modules/.bin) in
Debian's Chromium, prints the four category scores of each, and exits non-zero when
Accessibility, Best Practices or SEO is under 95 on any of them. Performance is reported
only: http.server sends nothing compressed and the machine is shared, so it says little here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.browser import builtsite

LIGHTHOUSE = builtsite.ROOT / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ["performance", "accessibility", "best-practices", "seo"]
GATED = {"accessibility": 95, "best-practices": 95, "seo": 95}  # minimum score, 0-100
REPORTS = builtsite.ROOT / "tests" / "browser" / "out" / "lighthouse"


def pages(site_dir: Path) -> dict[str, str]:
    """name -> site-relative URL of the pages to audit."""
    notebooks = [p.url for p in builtsite.nav_pages() if p.src.endswith(".ipynb")]
    third = notebooks[0] if notebooks else "worked-example/"

    def text_length(url: str) -> int:
        html = (site_dir / url / "index.html").read_text(encoding="utf-8")
        article = html[html.find("<article"):html.find("</article>")]
        return len(re.sub(r"<[^>]+>", "", article))

    chapter = max((p.url for p in builtsite.chapters() if p.url != third), key=text_length)
    return {"home": "", "chapter": chapter, "notebook" if notebooks else "worked-example": third}


def audit(url: str, out: Path, preset: str | None) -> dict[str, object]:
    """Run Lighthouse on ``url``; writes out.report.json and out.report.html, returns the
    parsed JSON report."""
    with tempfile.TemporaryDirectory(prefix="lighthouse-profile-") as profile:
        flags = ["--headless=new", *builtsite.CHROMIUM_ARGS, f"--user-data-dir={profile}"]
        command = [
            str(LIGHTHOUSE), url,
            f"--only-categories={','.join(CATEGORIES)}",
            "--output=json", "--output=html", f"--output-path={out}",
            f"--chrome-flags={' '.join(flags)}",
            "--quiet",
        ]
        if preset:
            command.append(f"--preset={preset}")
        env = {**os.environ, "CHROME_PATH": builtsite.CHROMIUM}
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
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


def run(site_dir: Path, base_url: str, preset: str | None = None
        ) -> tuple[list[tuple[str, str, dict[str, int]]], list[str]]:
    """Audit the pages of the site served at ``base_url``: (name, URL, scores) per page, and
    the failures (scores under the minimum, with the audits that lost points)."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    rows, failures = [], []
    for name, url in pages(site_dir).items():
        report = audit(base_url + url, REPORTS / name, preset)
        categories = report["categories"]
        assert isinstance(categories, dict)
        scores = {c: round(100 * (categories[c]["score"] or 0)) for c in CATEGORIES}
        rows.append((name, "/" + url, scores))
        for category, minimum in GATED.items():
            if scores[category] < minimum:
                failures.append(f"{name} /{url}: {category} {scores[category]} < {minimum}")
                failures += [f"    {line}" for line in failing_audits(report, category)]
    return rows, failures


def table(rows: list[tuple[str, str, dict[str, int]]]) -> list[str]:
    width = max(len(f"{name} {url}") for name, url, _ in rows)
    lines = [f"{'page':<{width}}  " + "  ".join(f"{c:>14}" for c in CATEGORIES)]
    for name, url, scores in rows:
        lines.append(f"{name + ' ' + url:<{width}}  "
                     + "  ".join(f"{scores[c]:>14}" for c in CATEGORIES))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/lighthouse", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=["desktop"], default=None,
                        help="Lighthouse's desktop settings (default: its mobile emulation)")
    args = parser.parse_args(argv)
    missing = builtsite.missing_tools() + ([] if LIGHTHOUSE.exists() else ["lighthouse (npm ci)"])
    if missing:
        print("scripts/lighthouse needs: " + "; ".join(missing), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ffn-site-") as tmp:
        site_dir = builtsite.build(Path(tmp))
        with builtsite.serve(site_dir) as base_url:
            rows, failures = run(site_dir, base_url, args.preset)
    print("\n".join(table(rows)))
    print(f"reports: {REPORTS}")
    if failures:
        print("\n".join(["", "under the minimum:", *failures]), file=sys.stderr)
        return 1
    gated = ", ".join(f"{c} >= {m}" for c, m in GATED.items())
    print(f"lighthouse: {len(rows)} pages, {gated} on each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
