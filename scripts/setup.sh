#!/usr/bin/env bash
# Idempotent set-up on Debian 12: system packages (clang-19, PoCL), a venv in .venv with torch 2.13.0 (CPU)
# first, then clperf with its dev tools. Takes seconds when everything is already there.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# llvm-19: llvm-mca; llvm-15, clang-15: PoCL's own LLVM, to rebuild and count its code (predictor/model/cpu_code.py)
# oclgrind, liboclgrind-dev, opencl-c-headers, llvm-14-dev (Oclgrind's LLVM), g++: the counting run's
# interpreter and its plugin (benchmark/counting)
apt_packages=(clang-19 llvm-19 pocl-opencl-icd ocl-icd-libopencl1 clinfo llvm-15 clang-15
              oclgrind liboclgrind-dev opencl-c-headers llvm-14-dev g++)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "setup: installing ${missing[*]} with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "setup: missing system packages: ${missing[*]}" >&2
    echo "setup: install them as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

py=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
  "$py" -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi
# torch first: an unpinned torch pulled in by transformers would be a multi-GB CUDA build.
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  .venv/bin/pip install -q torch==2.13.0
fi
stamp=.venv/.clperf-installed
want=$(sha256sum pyproject.toml | cut -c1-16)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]] || ! .venv/bin/python -c "import clperf" 2>/dev/null; then
  log=$(mktemp)
  if ! .venv/bin/pip install -q -e ".[dev]" >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: installing clperf failed (pip output above)" >&2
    exit 1
  fi
  rm -f "$log"
  echo "$want" > "$stamp"
fi

# The counting run's Oclgrind plugin: built once into the state folder (clperf builds it there on first
# use too); a failure only means predictions go without counting runs, so it warns instead of stopping.
if ! .venv/bin/python -m clperf.benchmark.counting >/dev/null; then
  echo "setup: the counting run's Oclgrind plugin did not build (message above); continuing without it" >&2
fi
