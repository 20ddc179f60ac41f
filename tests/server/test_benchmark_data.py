"""The editor's Benchmark command runs a kernel on the data file its directive names, found beside the
kernel, and its measurement names the file's hash (plain logic under the protocol, real PoCL)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
import pytest

from clperf.api import local_devices
from clperf.core.frontend import parse
from clperf.server import benchmarking
from clperf.server.settings import Settings

SOURCE = """// clperf: --global 1024 --local 64 --fill idx=file:data/idx.npy --arg x=1024 --arg y=1024
__kernel void gather(__global const int* idx, __global const float* x, __global float* y) {
    int i = get_global_id(0);
    y[i] = x[idx[i]];
}
"""


@pytest.mark.slow
def test_benchmark_command_reads_the_directives_data_file(tmp_path: Path) -> None:
    pocl = next((d for d in local_devices() if d.is_pocl), None)
    if pocl is None:
        pytest.skip("needs PoCL's CPU device")
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "idx.npy", np.arange(1024, dtype=np.int32)[::-1].copy())
    path = tmp_path / "k.cl"
    path.write_text(SOURCE)
    out = benchmarking.run(SOURCE, str(path), parse(SOURCE), pocl, Settings(), policy_name="quick",
                           timeout_s=120, on_progress=lambda f, m: None, cancel=threading.Event())
    m = out[0].measured.measurement
    assert m.status == "ok", m.error
    digest = hashlib.sha256((tmp_path / "data" / "idx.npy").read_bytes()).hexdigest()
    assert m.data_hashes.get("idx") == digest


@pytest.mark.slow
def test_a_data_file_outside_the_kernels_folder_is_refused(tmp_path: Path) -> None:
    pocl = next((d for d in local_devices() if d.is_pocl), None)
    if pocl is None:
        pytest.skip("needs PoCL's CPU device")
    np.save(tmp_path / "idx.npy", np.zeros(1024, dtype=np.int32))
    (tmp_path / "src").mkdir()
    text = SOURCE.replace("file:data/idx.npy", "file:../idx.npy")
    path = tmp_path / "src" / "k.cl"
    path.write_text(text)
    out = benchmarking.run(text, str(path), parse(text), pocl, Settings(), policy_name="quick",
                           timeout_s=120, on_progress=lambda f, m: None, cancel=threading.Event())
    m = out[0].measured.measurement
    assert m.status != "ok" and "outside" in (m.error or "") + str(m.status), (m.status, m.error)
