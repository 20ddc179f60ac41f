#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite (extra arguments go to pytest).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
.venv/bin/ruff check .
.venv/bin/python -m pytest -q -ra "$@"
