#!/usr/bin/env bash
# Sets everything up, then runs clperf's main job on the example kernel.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
example=examples/stencil.cl
.venv/bin/clperf analyze "$example"
.venv/bin/clperf check "$example" --fail-on error
