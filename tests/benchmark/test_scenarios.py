"""Scenario problems become one clear invalid-scenario or out-of-memory result, without running; structured
fills resolve to consistent lengths at every size, or to a message that says what to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from clperf.benchmark.inputs import plan_buffers
from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.core.errors import ScenarioError
from clperf.core.records import Param
from clperf.core.scenario import parse_flags, resolve

SRC = (Path(__file__).parent / "data" / "faulty.cl").read_text()


@pytest.mark.parametrize("flags,status,words", [
    ("--global 256 --arg nope=3", "invalid-scenario", "no parameter named 'nope'"),
    ("--global 256 --arg n=m*2", "invalid-scenario", "unknown name 'm'"),
    ("--global 256 --arg n=(", "invalid-scenario", "bad expression"),
    ("--global 100 --local 64", "invalid-scenario", "not a multiple"),
    ("--global 65536 --local 65536", "invalid-scenario", "exceeds the device limit"),
    ("--global 256 --arg out=1<<50", "out-of-memory", "MiB"),
    ("--global 256 --arg n=2.5", "invalid-scenario", "integer"),
])
def test_scenario_errors(device, flags, status, words):
    m = benchmark(SRC, "fine", parse_flags(flags), device, policy=Policy.quick(), timeout_s=30)
    assert m.status == status, m.error
    assert words in (m.error or "")
    assert m.times_ms == ()


def test_defaults_are_named(device):
    m = benchmark(SRC, "fine", parse_flags("--global 512"), device, policy=Policy.quick(), timeout_s=30)
    assert m.status == "ok", m.error
    assert set(m.scenario.defaulted) == {"out", "n"}
    assert m.scenario.args == {"out": 512, "n": 512}


# --- structured fills: resolved without running anything ------------------------------------------------

CSR_PARAMS = [Param("rowptr", "int", "global", True), Param("colidx", "int", "global", True),
              Param("vals", "float", "global", True), Param("y", "float", "global", True),
              Param("rows", "int", "private", False), Param("nnz", "int", "private", False)]
CSR = "--global rows --arg rows=1000 --fill m=csr:rows:rows:8 --fill rowptr=m.rowptr --fill colidx=m.colidx "


def test_a_matrix_sizes_its_views_and_its_sizes_are_names():
    sc = resolve(parse_flags(CSR + "--fill vals=m.values --arg nnz=m.nnz --arg y=rows"), CSR_PARAMS)
    assert sc.args == {"rowptr": 1001, "colidx": 8000, "vals": 8000, "y": 1000, "rows": 1000, "nnz": 8000}
    assert sc.fills == {"m": "csr:1000:1000:8:0", "rowptr": "m.rowptr", "colidx": "m.colidx",
                        "vals": "m.values"}
    assert "rowptr" not in sc.defaulted  # its length came from the view, not from a default
    # a resolved scenario reads back as itself: what the worker and the dataset see
    assert resolve(parse_flags(" ".join(f"--fill {k}={v}" for k, v in sc.fills.items()) + " --global 1000 "
                               "--arg rows=1000 --arg nnz=8000 --arg y=1000"), CSR_PARAMS).fills == sc.fills


@pytest.mark.parametrize("rows", [64, 1 << 20])
def test_every_size_of_a_sweep_resolves_consistent_lengths(rows):
    sc = resolve(parse_flags(CSR.replace("rows=1000", f"rows={rows}") + "--fill vals=m.values "
                             "--arg nnz=m.nnz --fill m=csr:rows:rows:8:2"), CSR_PARAMS)
    assert sc.args["rowptr"] == rows + 1 and sc.args["colidx"] == sc.args["nnz"] == 8 * rows


@pytest.mark.parametrize("flags,words", [
    (CSR + "--fill vals=q.values", "no matrix or graph named 'q'"),
    ("--fill rowptr=csr:10:10:2", "defines a matrix or graph: give it a name of its own"),
    (CSR + "--fill vals=m.frontier", "only a graph has a frontier"),
    (CSR + "--fill vals=m.rowidx --arg vals=100", "the view has 8000 values; the buffer holds 100"),
    (CSR + "--fill vals=m.columns", "'columns' is not a view of a matrix"),
    ("--fill m=csr:10:4:8", "NNZ_PER_ROW must be an integer from 1 to 4"),
    ("--fill m=csr:10:10:2:9", "SPREAD goes from 0"),
    ("--fill m=csr:10:10", "csr is written csr:ROWS:COLS:NNZ_PER_ROW[:SPREAD]"),
    ("--fill m=csr:rowptr:10:2 --fill rowptr=m.rowptr", "matrix 'm' is defined in terms of itself"),
    ("--arg rows=m.width", "unknown name 'm.width'"),
    ("--fill y=arange:0:1:2.5", "PERIOD must be an integer"),
    ("--fill y=hist:16:-1", "SKEW goes from 0"),
    ("--fill y=sorted:5:5", "empty range"),
    ("--fill rows=zeros", "rows is not a buffer"),
    ("--fill y.x=ones", "y is a float buffer, not a struct"),
    ("--fill y=fancy", "unknown fill 'fancy'"),
    ("--fill y=file:y.npy", "a data file is found from the kernel file's folder"),
])
def test_structured_fill_errors(flags, words):
    with pytest.raises(ScenarioError) as e:
        sc = resolve(parse_flags("--global 1000 " + flags), CSR_PARAMS)
        plan_buffers(CSR_PARAMS, sc.args, sc.fills)  # field fills are checked against the element type
    assert words in str(e.value)
