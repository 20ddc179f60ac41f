# Run on the GPU machine (the device tool's `run`, no package registry) from the repository root:
#   bash scripts/gpu-train.sh            carry: .whl (see gpu-env.sh) and .cache/features
# trains the shipped model's ensemble on CUDA from the examples built on another machine and writes it to
# $OUT/weights. Build the examples first where the counting runs can be made (`python
# bench/roofline_errors.py` builds and caches them), then copy them beside the sources:
#   mkdir -p .cache/features && cp -r ~/.cache/clperf/features/examples-* .cache/features/
# The examples' key hashes the data, the features, the roofline and the counting code, so the GPU machine
# finds them only when those are the same there.
set -euo pipefail
source scripts/gpu-env.sh
mkdir -p "$CLPERF_HOME/features" && cp -r .cache/features/. "$CLPERF_HOME/features/"
python3 -m clperf train --data data/h200 data/h200-large --members 4 --device-type cuda \
  --minutes "${MINUTES:-8.8}" --split-from predictor/model/weights --out "$OUT/weights"
