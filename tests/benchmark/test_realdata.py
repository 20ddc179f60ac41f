"""Real kernels with real data shapes, run on PoCL through the benchmark path, outputs checked with NumPy.

Each kernel (tests/benchmark/data/realdata) is measured with ``benchmark(..., outputs=PATH)``, which
saves every global buffer after one run from the scenario's inputs. The inputs are made again here
from the measurement's resolved scenario and the same seed (``BufferPlan.make``, the worker's own
generator), and NumPy computes what the kernel should have written. The index kernels write one element
past the end of a buffer when an index they are given is out of range, which the guard zone reports.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clperf.benchmark import sweep
from clperf.benchmark.inputs import DataFiles, plan_buffers
from clperf.benchmark.runner import DEFAULT_SEED, benchmark, kernel_signature
from clperf.benchmark.timing import Policy
from clperf.cli import main
from clperf.core.records import Measurement
from clperf.core.scenario import parse_flags, resolve

DATA = Path(__file__).parent / "data" / "realdata"
SPMV_CSR = ("--fill m=csr:rows:rows:16:{spread} --fill rowptr=m.rowptr --fill colidx=m.colidx "
            "--fill vals=m.values --arg cols=m.cols --arg nnz=m.nnz --arg x=cols --arg y=rows")


def run(device, tmp_path: Path, file: str, kernel: str, flags: str, options: str = ""
        ) -> tuple[Measurement, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(measurement, inputs, outputs) of one benchmark run of ``kernel``."""
    path = DATA / file
    source = path.read_text()
    out = tmp_path / f"{kernel}.npz"
    m = benchmark(source, kernel, parse_flags(flags), device, file=str(path), build_options=options,
                  policy=Policy.quick(), outputs=out, timeout_s=120)
    assert m.status == "ok", m.error
    return m, inputs_of(m, source, path, options), dict(np.load(out))


def inputs_of(m: Measurement, source: str, path: Path, options: str = "") -> dict[str, np.ndarray]:
    sig = kernel_signature(source, m.kernel, str(path), options)
    plans = plan_buffers(sig.params, m.scenario.args, m.scenario.fills, 64, sig.types)
    files = DataFiles(path.parent)
    return {b.param.name: b.make(DEFAULT_SEED, files.load) for b in plans}


@pytest.mark.parametrize("options,dtype", [("", np.float32), ("-DREAL=double", np.float64)])
def test_a_typedefd_matrix_product(device, tmp_path, options, dtype):
    m, x, out = run(device, tmp_path, "matmul.cl", "matmul",
                    "--global n,n --local 8,8 --arg n=32 --arg A=n*n --arg B=n*n --arg C=n*n", options)
    n = 32
    assert m.scenario.args["alpha"] == 1.5  # INDEX_T n is an int, DATA_TYPE alpha a float (its default)
    assert out["C"].dtype == dtype  # DATA_TYPE is REAL is whatever the build options make it
    want = 1.5 * (x["A"].reshape(n, n).astype(np.float64) @ x["B"].reshape(n, n))
    np.testing.assert_allclose(out["C"].reshape(n, n), want, rtol=1e-4)


def test_bench_runs_a_typedefd_kernel_from_its_directive(capsys):
    rc = main(["bench", str(DATA / "matmul.cl"), "--device", "pocl", "--policy", "quick", "--no-store"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "scenario: global 64x64, local 8x8" in text and "median" in text


def test_an_array_of_structs(device, tmp_path):
    m, x, out = run(device, tmp_path, "particles.cl", "advance",
                    "--global 1024 --arg s=0.25 --fill p.cell=range:0:100 --fill p.tag=ones")
    p = x["p"]
    assert p.dtype.itemsize == 48 and p.dtype.fields["mass"][1] == 36  # the compiler's layout
    assert (p["cell"] < 100).all() and (p["tag"] == 1).all() and (p["flags"] == 0).all()
    assert 0 <= p["mass"].min() and p["mass"].max() < 1 and p["mass"].std() > 0.1  # random floats
    np.testing.assert_allclose(out["p"]["pos"], p["pos"] + p["vel"] * np.float32(0.25), rtol=1e-6)
    np.testing.assert_array_equal(out["p"]["vel"], p["vel"])
    np.testing.assert_allclose(out["energy"], 0.5 * p["mass"] * (p["vel"] ** 2).sum(axis=1), rtol=1e-5)
    # the by-value struct got 0.25 in its float field and 0 in its integer one
    np.testing.assert_array_equal(out["cell_of"], p["cell"] * 2 + p["tag"] + p["flags"])


def csr_product(x: dict[str, np.ndarray], rows: int) -> np.ndarray:
    rowptr, cols, vals = x["rowptr"], x["colidx"], x["vals"]
    row = np.repeat(np.arange(rows), np.diff(rowptr))
    return np.bincount(row, vals.astype(np.float64) * x["x"][cols], minlength=rows)


@pytest.mark.parametrize("rows", [64, 1 << 16])  # the smallest and largest size of the file's sweep
def test_csr_spmv_in_bounds_at_every_size(device, tmp_path, rows):
    m, x, out = run(device, tmp_path, "spmv.cl", "spmv_csr",
                    f"--global rows --arg rows={rows} " + SPMV_CSR.format(spread=1))
    nnz = rows * 16
    assert m.scenario.args["nnz"] == nnz and m.scenario.args["colidx"] == nnz
    rowptr, cols = x["rowptr"], x["colidx"]
    assert rowptr[0] == 0 and rowptr[-1] == nnz and (np.diff(rowptr) >= 0).all()
    assert cols.min() >= 0 and cols.max() < rows
    assert np.diff(rowptr).max() > 3 * 16  # SPREAD 1: a long tail of rows
    np.testing.assert_allclose(out["y"], csr_product(x, rows), rtol=1e-4, atol=1e-5)


def test_an_index_out_of_range_is_caught(device):
    """The check the in-bounds tests rely on: a column index past ``x`` makes the kernel write past ``y``."""
    path = DATA / "spmv.cl"
    flags = "--global rows --arg rows=256 " + SPMV_CSR.format(spread=0) + " --fill colidx=range:0:2*rows"
    m = benchmark(path.read_text(), "spmv_csr", parse_flags(flags), device, file=str(path),
                  policy=Policy.quick(), timeout_s=60)
    assert m.status == "crash" and "past the end of buffer 'y'" in (m.error or "")


def test_ellpack_and_jds_are_layouts_of_the_same_matrix(device, tmp_path):
    rows = 2048
    base = ("--global rows --arg rows=2048 --fill m=csr:rows:rows:8:0.8 --arg cols=m.cols --arg x=cols "
            "--arg y=rows ")
    _, csr, _ = run(device, tmp_path, "spmv.cl", "spmv_csr", base + "--fill rowptr=m.rowptr "
                    "--fill colidx=m.colidx --fill vals=m.values --arg nnz=m.nnz")
    want = csr_product(csr, rows)
    m, _, ell = run(device, tmp_path, "spmv.cl", "spmv_ell",
                    base + "--fill ell_cols=m.ell_colidx --fill ell_vals=m.ell_values --arg width=m.width")
    assert m.scenario.args["width"] == np.diff(csr["rowptr"]).max()
    np.testing.assert_allclose(ell["y"], want, rtol=1e-4, atol=1e-5)
    _, jx, jds = run(device, tmp_path, "spmv.cl", "spmv_jds",
                     base + "--fill perm=m.jds_perm --fill jds_ptr=m.jds_ptr --fill rowlen=m.jds_rowlen "
                     "--fill jds_cols=m.jds_colidx --fill jds_vals=m.jds_values")
    assert (np.diff(jx["rowlen"]) <= 0).all() and sorted(jx["perm"]) == list(range(rows))
    np.testing.assert_allclose(jds["y"], want, rtol=1e-4, atol=1e-5)


GRAPH = ("--global nodes --arg nodes={n} --fill g=graph:nodes:6:0.5:{f} --fill rowptr=g.rowptr "
         "--fill colidx=g.colidx --arg edges=g.edges ")


@pytest.mark.parametrize("nodes,front", [(64, 1), (1 << 17, 2000)])
def test_a_bfs_step_from_a_frontier_mask(device, tmp_path, nodes, front):
    m, x, out = run(device, tmp_path, "bfs.cl", "bfs_mask",
                    GRAPH.format(n=nodes, f=front) + "--fill mask=g.mask --fill levels=g.levels "
                    "--fill next=zeros --arg next=nodes --arg level=0")
    mask, levels = x["mask"], x["levels"]
    assert mask.sum() == front and set(np.unique(levels)) <= {-1, 0} and (levels[mask == 1] == 0).all()
    rowptr, cols = x["rowptr"], x["colidx"]
    frontier = np.flatnonzero(mask)
    reached = np.unique(np.concatenate([cols[rowptr[v]:rowptr[v + 1]] for v in frontier]))
    reached = reached[levels[reached] == -1]
    want_levels = levels.copy()
    want_levels[reached] = 1
    want_next = np.zeros(nodes, np.int32)
    want_next[reached] = 1
    np.testing.assert_array_equal(out["levels"], want_levels)
    np.testing.assert_array_equal(out["next"], want_next)


def test_a_bfs_step_from_a_frontier_list(device, tmp_path):
    nodes = 4096
    m, x, out = run(device, tmp_path, "bfs.cl", "bfs_queue",
                    "--global g.frontier --arg nodes=4096 --fill g=graph:nodes:4:0:100 "
                    "--fill rowptr=g.rowptr --fill colidx=g.colidx --fill frontier=g.frontier "
                    "--fill reached=zeros --arg reached=nodes --arg count=g.frontier")
    assert m.scenario.global_size == (100,) and len(np.unique(x["frontier"])) == 100
    want = np.zeros(nodes, np.int32)
    for v in x["frontier"]:
        want[x["colidx"][x["rowptr"][v]:x["rowptr"][v + 1]]] = 1
    np.testing.assert_array_equal(out["reached"], want)


def test_struct_fields_filled_from_a_graph(device, tmp_path):
    nodes = 10000
    m, x, out = run(device, tmp_path, "bfs.cl", "in_degree",
                    "--global count --arg nodes=10000 --arg count=g.edges --fill g=graph:nodes:5:1 "
                    "--fill edges.src=g.rowidx --fill edges.dst=g.colidx --fill edges.weight=g.values "
                    "--fill degree=zeros --arg degree=nodes")
    e = x["edges"]
    assert m.scenario.args["edges"] == 50000 and len(e) == 50000  # its length from the views
    assert (np.diff(e["src"]) >= 0).all() and e["dst"].max() < nodes and 0 <= e["weight"].min()
    np.testing.assert_array_equal(out["degree"], np.bincount(e["dst"], minlength=nodes))


def test_index_fills(device, tmp_path):
    n = 1 << 14
    _, x, out = run(device, tmp_path, "indices.cl", "gather", f"--global {n} --arg n={n} --fill perm=perm")
    assert sorted(x["perm"]) == list(range(n))
    np.testing.assert_array_equal(out["out"], x["src"][x["perm"]])
    _, x, out = run(device, tmp_path, "indices.cl", "histogram",
                    f"--global {n} --arg nbins=256 --arg bins=nbins --fill keys=hist:nbins:1.2 "
                    "--fill bins=zeros")
    counts = np.bincount(x["keys"], minlength=256)
    np.testing.assert_array_equal(out["bins"], counts)
    assert counts[0] > 20 * max(counts[-16:].mean(), 1)  # skewed: bin 0 is the most frequent
    _, x, out = run(device, tmp_path, "indices.cl", "sorted_and_arange",
                    f"--global {n} --arg n={n} --fill keys=sorted:-1000:n --fill ramp=arange:5:3:7")
    assert (np.diff(x["keys"]) >= 0).all() and x["keys"].min() >= -1000
    np.testing.assert_array_equal(out["out"], 5 + 3 * (np.arange(n) % 7))


def test_bench_and_sweep_make_the_same_data(device, tmp_path):
    """The sweep's variants are the scenarios bench resolves for the same sizes, so the same seed makes the
    same matrix; every variant, smallest to largest, runs with its indices in bounds."""
    path = DATA / "spmv.cl"
    kernels, _ = sweep.kernels_in_file(path)
    (k,) = [k for k in kernels if k.name == "spmv_csr"]
    assert k.types is not None  # the compiler's types
    variants = sweep.variants(k, device, max_variants=40, max_buffer_bytes=64 << 20)
    by_rows = {v.values["rows"]: v.scenario for v in variants}
    assert set(by_rows) == {1 << i for i in range(6, 17)}
    for rows in (64, 1 << 16):
        bench_sc = resolve(parse_flags(k.directive + f" --arg rows={rows}"), k.params, k.dims_used)
        assert by_rows[rows].fills == bench_sc.fills and by_rows[rows].args == bench_sc.args
    probe = Measurement.from_json  # a measurement's scenario is all inputs_of needs
    for rows, sc in by_rows.items():  # every index below the length of what it indexes, at every size
        m = probe({"kernel": "spmv_csr", "source_hash": "", "device": device.to_json(), "status": "ok",
                   "scenario": sc.to_json()})
        x = inputs_of(m, path.read_text(), path)
        assert x["rowptr"].max() == sc.args["nnz"] <= sc.args["colidx"] == sc.args["vals"]
        assert x["colidx"].max() < sc.args["x"] and len(x["rowptr"]) == rows + 1
    out = tmp_path / "sweep.jsonl"
    summary = sweep.run_sweep([k], device, out, max_variants=40, policy=Policy.quick(),
                              max_buffer_bytes=64 << 20, lookahead=0)
    assert summary.measured == 11 and summary.ok == 11, summary.failed
    m, _, y = run(device, tmp_path, "spmv.cl", "spmv_csr", k.directive + " --arg rows=1024")
    from_sweep = Measurement(**{**m.__dict__, "scenario": by_rows[1024]})
    np.testing.assert_allclose(y["y"], csr_product(inputs_of(from_sweep, path.read_text(), path), 1024),
                               rtol=1e-4, atol=1e-5)


def test_an_image_parameter_is_refused_in_words(device):
    source = "__kernel void k(read_only image2d_t img, __global float* out) { out[0] = 1.0f; }"
    m = benchmark(source, "k", parse_flags("--global 64"), device, policy=Policy.quick(), timeout_s=30)
    assert m.status == "invalid-scenario" and "'img' (image2d_t): clperf makes no images" in (m.error or "")


def test_a_small_variant_of_a_sweep_has_its_guard_zone_after_its_own_data(device, tmp_path):
    kernels, _ = sweep.kernels_in_file(DATA / "overrun.cl")
    statuses: dict[int, str] = {}
    sweep.run_sweep(kernels, device, tmp_path / "s.jsonl", policy=Policy.quick(), lookahead=0)
    for rec in map(json.loads, (tmp_path / "s.jsonl").read_text().splitlines()):
        statuses[rec["sweep"]["values"]["n"]] = rec["status"]
        if rec["status"] != "ok":
            assert "past the end of buffer 'out'" in rec["error"]
    assert statuses == {4096: "ok", 2048: "ok", 1024: "ok", 512: "crash", 256: "crash"}
