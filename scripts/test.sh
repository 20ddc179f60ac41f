#!/usr/bin/env bash
# Sets everything up, lints (ruff), type-checks (mypy) and checks the import layers, then runs the whole test suite (extra arguments
# go to pytest).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
.venv/bin/ruff check .
.venv/bin/mypy clperf predictor benchmark server
.venv/bin/python scripts/check_layers.py  # import-linter's layers, no clperf import inside a function
.venv/bin/python -m pytest -q -ra "$@"
