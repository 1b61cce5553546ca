"""The dequantized weights on disk, keyed by the GGUF file's sha256, read back memory-mapped.

Dequantizing every tensor takes seconds; reading ``.npy`` files memory-mapped takes
milliseconds, and the pages that use a tensor read only that one. One folder per file content
and format of this code, ``<cache>/smollm2/<sha256>-v<FORMAT>/``, holds ``config.json``,
``tokenizer.json`` and one ``.npy`` per tensor. A changed file has another sha256, so it is
never served another file's weights. The folder is written under a temporary name and renamed
when complete, so a reader never sees half of one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ffn._validate import FloatArray
from ffn.smollm2.gguf_file import Config, open_reader, read_config, read_weights
from ffn.smollm2.tokenizer import build_tokenizer

CACHE_ENV = "FFN_CACHE_DIR"  # overrides the cache folder
FORMAT = 1  # what this code writes there; raise it when that changes, so old folders are not read


def cache_root() -> Path:
    """``$FFN_CACHE_DIR``, else ``$XDG_CACHE_HOME/ffn``, else ``~/.cache/ffn``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ffn"


def sha256(path: Path) -> str:
    """The hex sha256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def entry(path: Path, root: Path | None = None) -> Path:
    """The cache folder of ``path`` (made now if missing): read, dequantize, write once."""
    folder = (root or cache_root()) / "smollm2" / f"{sha256(path)}-v{FORMAT}"
    if (folder / "config.json").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    reader = open_reader(path)
    config = read_config(reader)
    weights = read_weights(reader, config)
    tokenizer = build_tokenizer(reader)
    partial = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        for name, w in weights.items():
            np.save(partial / f"{name}.npy", w)
        (partial / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
        # config.json last: its presence marks a complete folder
        (partial / "config.json").write_text(json.dumps(dataclasses.asdict(config)))
        try:
            partial.rename(folder)
        except OSError:  # another process finished the same folder first: theirs is as good
            if not (folder / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def read_entry(folder: Path) -> tuple[Config, dict[str, FloatArray], str]:
    """A cache folder's config, weights (read-only memory maps) and tokenizer JSON."""
    config = Config(**json.loads((folder / "config.json").read_text()))
    weights = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in config.shapes()}
    return config, weights, (folder / "tokenizer.json").read_text(encoding="utf-8")
