# Source this on a machine with no package registry and an NVIDIA driver (the H200 machine), from the
# repository root, with the wheels of .whl present (pyopencl, pytools, platformdirs, siphash24,
# tree-sitter, tree-sitter-c, diskcache, typing_extensions for its Python): installs them and clperf's
# sources into /tmp/site, writes an ICD file for the NVIDIA OpenCL driver, and sets CLPERF and PY for
# scripts/collect.sh.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
rm -rf /tmp/site/clperf && cp -r clperf /tmp/site/clperf
for p in benchmark predictor server; do cp -r "$p" "/tmp/site/clperf/$p"; done
export PYTHONPATH=/tmp/site PYTHONSAFEPATH=1  # the installed copy, not the source folder clperf/
# (bench/ scripts import their neighbours from bench/: run them as `PYTHONSAFEPATH= python3 bench/...`)
mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
export OCL_ICD_VENDORS=/tmp/icd CLPERF_HOME=/tmp/clperf_home
export CLPERF="python3 -m clperf" PY=python3
