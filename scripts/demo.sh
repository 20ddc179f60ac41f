#!/usr/bin/env bash
# Sets everything up, then runs clperf's main job on the example kernel file: analysis and findings,
# a time estimate for an NVIDIA H200 (shipped profile) and for the local CPU, and a real benchmark on PoCL.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/scripts/setup.sh"
cd "$root"
example=examples/stencil.cl
clperf=.venv/bin/clperf
set -x
$clperf analyze "$example"
$clperf check "$example" --fail-on error
$clperf predict "$example" --kernel blur5 --device h200
$clperf predict "$example" --kernel blur5 --device pocl
$clperf bench "$example" --kernel blur5 --device pocl
