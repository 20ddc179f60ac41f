"""One scenario resolver: a kernel's clperf.toml scenario is the same in ``clperf predict``, ``clperf bench``
and the language server, and the directive and the command line override it in that order."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clperf.server.engine import Job, analyze
from clperf.server.settings import Settings

KERNEL = """
__kernel void scale(__global float* x, int n, float a) {
    int i = get_global_id(0);
    if (i < n) x[i] = a * x[i];
}

// clperf: --global 2048
__kernel void shift(__global float* x, int n) {
    int i = get_global_id(0);
    if (i < n) x[i] = x[i] + 1.0f;
}
"""
TOML = """
[kernels.scale]
scenario = "--global 8192 --local 128 --arg n=8192 --arg a=2.5"

[kernels.shift]
scenario = "--global 8192 --local 64 --arg n=1000"
"""


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the repository root: clperf.toml is looked up no higher
    (tmp_path / "clperf.toml").write_text(TOML)
    (tmp_path / "k.cl").write_text(KERNEL)
    return tmp_path / "k.cl"


def _cli(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "clperf", *args, "--json"], capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _server(path: Path) -> dict[str, dict]:
    job = Job(path.as_uri(), 1, str(path), path.read_text(), Settings(device="h200"), None,
              root=str(path.parent))
    return {k: r.scenario.to_json() for k, r in analyze(job).kernels.items() if r.scenario is not None}


@pytest.mark.slow
def test_predict_bench_and_the_server_resolve_one_scenario(project: Path) -> None:
    server = _server(project)
    for kernel in ("scale", "shift"):
        predicted = _cli("predict", str(project), "-k", kernel, "--device", "h200", "--static")["scenario"]
        measured = _cli("bench", str(project), "-k", kernel, "--device", "pocl", "--policy", "quick",
                        "--no-store")["scenario"]
        assert predicted == measured == server[kernel], (kernel, predicted, measured, server[kernel])
    # clperf.toml gives scale everything; for shift its directive's global size wins over the toml's
    assert server["scale"]["global"] == [8192] and server["scale"]["local"] == [128]
    assert server["scale"]["args"]["a"] == 2.5
    assert server["shift"]["global"] == [2048] and server["shift"]["args"]["n"] == 1000


@pytest.mark.slow
def test_the_command_line_wins_over_directive_and_toml(project: Path) -> None:
    out = _cli("predict", str(project), "-k", "shift", "--device", "h200", "--static", "--global", "4096",
               "--arg", "n=7")["scenario"]
    assert out["global"] == [4096] and out["args"]["n"] == 7 and out["local"] == [64]  # local: the toml's
