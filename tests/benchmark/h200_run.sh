#!/usr/bin/env bash
# The benchmark figures on a real NVIDIA GPU (run on the H200 machine from the repository root, with the
# wheels of .whl carried): devices, copy bandwidth vs peak, noise floor, isolation, sweep throughput.
# Writes its log and data under ${OUT:-/tmp/out}. SWEEP_S sets the sweep's time budget (default 240).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
# the package as installed: clperf/ with benchmark/, predictor/, server/ as its subpackages
rm -rf /tmp/site/clperf && cp -r clperf /tmp/site/clperf
for p in benchmark predictor server; do cp -r $p /tmp/site/clperf/$p; done
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1  # not the source folder clperf/ of the current directory
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CLPERF_HOME=/tmp/clperf_home
D=tests/benchmark/data
run() { echo "\$ $*"; "$@"; echo "[exit $?]"; }
{
  run python3 -m clperf devices
  python3 -m clperf devices --json > "$OUT/devices.json"
  for k in copy4 copy1 vadd; do run python3 -m clperf bench $D/copy.cl -k $k --device nvidia; done
  echo "# noise floor: 5 separate processes per kernel"
  for k in copy1 vadd; do
    for i in 1 2 3 4 5; do python3 -m clperf bench $D/copy.cl -k $k --device nvidia --json --no-store; done \
      > "$OUT/noise_$k.json"
  done
  python3 - "$OUT" <<'PY'
import json, sys, statistics as st
from pathlib import Path
out = Path(sys.argv[1])
for k in ("copy1", "vadd"):
    dec = json.JSONDecoder(); text = (out / f"noise_{k}.json").read_text(); ms = []; i = 0
    while i < len(text):
        text_i = text[i:].lstrip()
        if not text_i: break
        obj, n = dec.raw_decode(text_i); i = len(text) - len(text_i) + n; ms.append(obj)
    med = [m["median_ms"] for m in ms]
    print(f"{k}: medians {med}; within-run CV {[round(m['cv'] * 100, 2) for m in ms]} %; "
          f"across runs CV {st.pstdev(med) / st.mean(med) * 100:.2f} %; reps {[m['repetitions'] for m in ms]}")
PY
  echo "# isolation on the GPU: each must end as a status, and the next run must work"
  for spec in "wild --global 256" "past_end --global 256" "forever --global 1 --timeout 5" "fine --global 256"; do
    set -- $spec; k=$1; shift
    run python3 -m clperf bench $D/faulty.cl -k $k --device nvidia --policy quick "$@"
  done
  echo "# sweep throughput over the corpus"
  run python3 -m clperf sweep benchmark/corpus/families --device nvidia --out "$OUT/h200_corpus.jsonl.gz" \
    --time-budget "${SWEEP_S:-240}"
  echo "# resume: a second run skips what is done"
  run python3 -m clperf sweep benchmark/corpus/families --device nvidia --out "$OUT/h200_corpus.jsonl.gz" \
    --time-budget 30
} 2>&1 | tee "$OUT/log.txt"
