# Sourced by scripts/start and scripts/test: makes .venv and installs Septet into it when
# pyproject.toml changed since the last install. Safe to run again; quiet when nothing changed.
set -euo pipefail
SEPTET_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$SEPTET_ROOT"

python_bin="${PYTHON:-python3}"
if ! "$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "Septet needs Python 3.11 or newer as '$python_bin' (set PYTHON=/path/to/python3.11)" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv"
    "$python_bin" -m venv .venv
fi
stamp=".venv/.septet-installed"
# The extras the tests need: dev (test and lint tools), pettingzoo and openspiel (the tests of
# referee.pettingzoo and referee.openspiel), s3 (the tests of SEPTET_STORAGE=s3).
extras="dev,pettingzoo,openspiel,s3"
wanted="$({ cat pyproject.toml; echo "$extras"; } | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
    echo "==> installing Septet and its pinned dependencies into .venv"
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -e ".[$extras]"
    echo "$wanted" > "$stamp"
fi
# Bots run read-only in the sandbox and cannot cache bytecode of the SDK they import: compile it
# here (a no-op when up to date), or every bot start compiles the referee package again. (Bot
# folders are left alone: a copy of an example should not carry a __pycache__.)
.venv/bin/python -m compileall -q -j 0 referee >/dev/null
# The engine compiled with mypyc (referee/engine/build.py says how the build is chosen): redone
# when its sources changed, skipped with one line where mypyc, a C compiler or Python.h is missing.
.venv/bin/python scripts/compile_engine.py
export PATH="$SEPTET_ROOT/.venv/bin:$PATH"
export VIRTUAL_ENV="$SEPTET_ROOT/.venv"
