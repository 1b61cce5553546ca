# Sourced by scripts/test, scripts/serve and scripts/lock: make .venv match requirements.lock.
# Installs only when the lock file, pyproject.toml or the Python changed since the last install,
# so a second run with nothing changed installs nothing.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || { echo "error: $PYTHON not found (set PYTHON=...; Python 3.11+ is needed)" >&2; exit 1; }

stamp="$(cat "$ROOT/requirements.lock" "$ROOT/pyproject.toml" | sha256sum | cut -d' ' -f1) $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$stamp" ]; then
  echo "setting up $VENV ..." >&2
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements.lock"
  # The package itself, editable, built by the pinned hatchling already in the lock.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$ROOT"
  echo "$stamp" > "$VENV/.installed"
fi
export PATH="$VENV/bin:$PATH"
export NO_MKDOCS_2_WARNING=1  # silence Material's end-of-life banner on every build
cd "$ROOT"
