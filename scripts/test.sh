#!/usr/bin/env bash
# Sets everything up, lints (ruff) and type-checks (mypy), then runs the whole test suite (extra arguments
# go to pytest).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
.venv/bin/ruff check .
.venv/bin/mypy clperf predictor benchmark server
.venv/bin/python -m pytest -q -ra "$@"
