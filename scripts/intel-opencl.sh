#!/usr/bin/env bash
# Installs Intel's CPU OpenCL runtime (PyPI intel-opencl-rt, ~800 MB) beside PoCL, for a second, very
# different CPU device. Idempotent. Prints the OCL_ICD_VENDORS value that makes pyopencl see both:
#   export OCL_ICD_VENDORS=$(bash scripts/intel-opencl.sh)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=$root/.cache/intel-ocl
vendors=$root/.cache/ocl-vendors
version=2026.2.0
if [[ ! -f $prefix/lib/libintelocl.so || ! -f $prefix/lib/libtbb.so.12 ]]; then
  "$root/.venv/bin/pip" install -q --no-deps --prefix "$prefix" \
    "intel-opencl-rt==$version" "intel-cmplr-lib-rt==$version" "tbb==2023.2.0" >&2
fi
mkdir -p "$vendors"
# The wheel's own .icd file names a placeholder path: write one with the real path.
echo "$prefix/lib/libintelocl.so" > "$vendors/intel-cpu.icd"
for icd in /etc/OpenCL/vendors/*.icd; do
  [[ -e $icd ]] && cp "$icd" "$vendors/"
done
echo "$vendors"
