"""Calls into the widgets' arithmetic (widgets/*/lab.js, and widgets/_shared/'s checks,
formats and reading) from Python: one Node process answers JSON lines. Every module's exports
are callable by name (names are unique across them).

Integers travel as {"i": "digits"} both ways (they become BigInt in JavaScript, int in
Python), so counts above 2**53 arrive exact; floats travel as JSON numbers, which both sides
print and read back bit for bit (shortest round-trip form), but NaN and the infinities, which
JSON lacks, as {"f": "nan"}, {"f": "inf"}, {"f": "-inf"}, and whole doubles from 2**53 up
as {"f": "1.8e+16"} (JSON's digits, "18000000000000000", would be read as an int). A
function that throws raises NodeError here, with the JavaScript error's name (TypeError,
RangeError, ...) and message.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

WIDGETS = Path(__file__).resolve().parent.parent / "widgets"
# The pure modules: every widget's lab.js and the shared ones (not dom.js and loader.js: DOM).
DOM = {"dom.js", "loader.js"}
MODULES = [*(m for m in sorted(WIDGETS.glob("_shared/*.js")) if m.name not in DOM),
           *sorted(WIDGETS.glob("*/lab.js"))]

_SERVER = """
import readline from "node:readline";
const lab = {};
for (const url of %s) {
  for (const [name, value] of Object.entries(await import(url))) {
    if (name in lab) throw new Error(`${name} is exported twice: ${url}`);
    lab[name] = value;
  }
}
const FLOATS = {nan: NaN, inf: Infinity, "-inf": -Infinity};
const decode = v => v === null || typeof v !== "object" ? v
  : Array.isArray(v) ? v.map(decode)
  : "i" in v && Object.keys(v).length === 1 ? BigInt(v.i)
  : "f" in v && Object.keys(v).length === 1 ? FLOATS[v.f]
  : Object.fromEntries(Object.entries(v).map(([k, w]) => [k, decode(w)]));
const encode = v => typeof v === "bigint" ? {i: v.toString()}
  : typeof v === "number" && !Number.isFinite(v)
    ? {f: Number.isNaN(v) ? "nan" : v > 0 ? "inf" : "-inf"}
  : typeof v === "number" && Number.isInteger(v) && Math.abs(v) >= 2 ** 53
    ? {f: String(v)}  // JSON would write its shortest digits, which Python reads as an int
  : v === null || typeof v !== "object" ? v
  : Array.isArray(v) ? v.map(encode)
  : Object.fromEntries(Object.entries(v).map(([k, w]) => [k, encode(w)]));
const lines = readline.createInterface({input: process.stdin});
for await (const line of lines) {
  const {fn, args} = JSON.parse(line);
  let reply;
  try {
    const decoded = decode(args);
    const result = fn === "__names__" ? Object.keys(lab)
      : ["sizeModel", "sizerNumbers", "breakdown", "breakdownNumbers"].includes(fn)
      // on checked dimensions, as the sizer
      ? lab[fn](lab.modelDims(decoded[0]), ...decoded.slice(1))
      : lab[fn](...decoded);
    reply = {result: encode(result)};
  } catch (error) {
    reply = {error: String(error), kind: error?.name ?? "", message: error?.message ?? ""};
  }
  process.stdout.write(JSON.stringify(reply) + "\\n");
}
"""


class NodeError(RuntimeError):
    """A JavaScript function threw: ``kind`` is the error's name, ``message`` its message."""

    def __init__(self, text: str, kind: str, message: str) -> None:
        super().__init__(text)
        self.kind, self.message = kind, message


def encode(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {"f": "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    if isinstance(value, bool) or value is None or isinstance(value, (float, str)):
        return value
    if isinstance(value, int):
        return {"i": str(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"cannot send {value!r} to Node")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"i"}:
            return int(value["i"])
        if set(value) == {"f"}:
            return float(value["f"])
        return {k: decode(v) for k, v in value.items()}
    return value


class NodeLab:
    """`lab.call("countParameters", 768, 3072, True, False)` runs the JavaScript function."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", "--input-type=module", "-e",
             _SERVER % json.dumps([m.as_uri() for m in MODULES])],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def call(self, fn: str, *args: Any) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps({"fn": fn, "args": encode(list(args))}) + "\n")
        reply = json.loads(self.process.stdout.readline())
        if "error" in reply:
            raise NodeError(f"{fn}{args!r} failed in Node: {reply['error']}", reply["kind"],
                            reply["message"])
        return decode(reply["result"])

    def names(self) -> list[str]:
        """Every name the lab's modules export."""
        names: list[str] = self.call("__names__")
        return names

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=10)
        if self.process.stdout is not None:
            self.process.stdout.close()
