#!/usr/bin/env bash
# Collects (or resumes) a training dataset on one device: the hand-written corpus plus the generated
# kernels, swept with `clperf sweep`, stored as data/NAME/part-*.jsonl.gz (each part small enough for git
# and transfers) and data/NAME/sources.jsonl.gz (every swept source once).
#
#   bash scripts/collect.sh NAME DEVICE [BUDGET_SECONDS]      e.g. bash scripts/collect.sh pocl pocl 1800
#
# Run it again to resume: variants already in data/NAME are skipped. Environment: CLPERF (the command,
# default .venv/bin/clperf), GEN_COUNT (generated kernels, 2000), VARIANTS (per kernel, 45),
# DEST (where the parts are written, default data/NAME), PART_LINES (records per part, 30000),
# MAX_BUFFER_MB (largest buffer of a variant, 16; the CPU datasets use 1 so that a sweep of 20,000
# variants fits in half an hour of two cores).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
name=${1:?usage: collect.sh NAME DEVICE [BUDGET_SECONDS]}
device=${2:?usage: collect.sh NAME DEVICE [BUDGET_SECONDS]}
budget=${3:-540}
clperf=${CLPERF:-.venv/bin/clperf}
py=${PY:-.venv/bin/python}
data=data/$name
dest=${DEST:-$data}
work=.cache/collect/$name
mkdir -p "$work" "$dest"
rm -f "$work/d.jsonl.gz" "$work/d.sources.jsonl.gz"
if compgen -G "$data/part-*.jsonl.gz" >/dev/null; then cat "$data"/part-*.jsonl.gz > "$work/d.jsonl.gz"; fi
if [[ -f $data/sources.jsonl.gz ]]; then cp "$data/sources.jsonl.gz" "$work/d.sources.jsonl.gz"; fi
"$py" -c "from clperf.benchmark.corpus import write_generated; write_generated('$work/gen', ${GEN_COUNT:-2000}, 0)"
$clperf sweep benchmark/corpus/families "$work/gen" --device "$device" --out "$work/d.jsonl.gz" \
  --time-budget "$budget" --max-variants "${VARIANTS:-45}" --max-buffer-mb "${MAX_BUFFER_MB:-16}" || echo "collect: sweep ended with status $?" >&2
"$py" - "$work/d.jsonl.gz" "$dest" "${PART_LINES:-30000}" <<'PY'
import gzip, shutil, sys
from pathlib import Path
src, dest, per = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
for old in dest.glob("part-*.jsonl.gz"):
    old.unlink()
part, n, out = 0, 0, None
with gzip.open(src, "rt") as f:
    for line in f:
        if not line.strip():
            continue
        if out is None or n == per:
            if out:
                out.close()
            part, n = part + 1, 0
            out = gzip.open(dest / f"part-{part}.jsonl.gz", "wt", compresslevel=9)
        out.write(line)
        n += 1
if out:
    out.close()
shutil.copy(src.with_name("d.sources.jsonl.gz"), dest / "sources.jsonl.gz")
print(f"collect: {(part - 1) * per + n if part else 0} records in {part} parts under {dest}")
PY
