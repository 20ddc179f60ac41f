"""``--fill NAME=file:PATH``: buffers from NumPy .npy files, in flags, directives and clperf.toml.

Every test works in its own folder with a copy of a kernel from tests/benchmark/data/realdata and data
files written beside it; paths in fills start from the kernel's folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from clperf.benchmark.runner import benchmark
from clperf.benchmark.timing import Policy
from clperf.cli import main
from clperf.core.scenario import parse_flags

DATA = Path(__file__).parent / "data" / "realdata"
N = 256
FLAGS = "--global n --arg n=256 --arg y=n --fill x=file:data/x.npy --fill v=file:data/v.npy"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A kernel folder: scale.cl, data/x.npy (256 floats) and data/v.npy (256 float4)."""
    work = tmp_path / "kernels"
    (work / "data").mkdir(parents=True)
    shutil.copy(DATA / "scale.cl", work / "scale.cl")
    rng = np.random.default_rng(5)
    np.save(work / "data" / "x.npy", rng.random(N, dtype=np.float32))
    np.save(work / "data" / "v.npy", rng.random((N, 4), dtype=np.float32))
    return work


def bench(device, folder: Path, flags: str, outputs: Path | None = None):
    path = folder / "scale.cl"
    return benchmark(path.read_text(), "scale", parse_flags(flags), device, file=str(path),
                     policy=Policy.quick(), outputs=outputs, timeout_s=60)


def test_a_buffer_holds_its_file_and_the_measurement_names_the_file(device, folder, tmp_path):
    out = tmp_path / "out.npz"
    m = bench(device, folder, FLAGS.replace("--arg n=256", "--arg n=x"), out)  # a file sizes its buffer
    assert m.status == "ok", m.error
    assert m.scenario.args["x"] == N and m.scenario.args["v"] == N
    assert m.scenario.fills["x"] == "file:data/x.npy"
    x, v = np.load(folder / "data" / "x.npy"), np.load(folder / "data" / "v.npy")
    np.testing.assert_allclose(np.load(out)["y"], 2 * x + v[:, 0] + v[:, 3], rtol=1e-6)
    assert m.data_hashes == {"x": sha256(folder / "data" / "x.npy"), "v": sha256(folder / "data" / "v.npy")}
    assert m.to_json()["data_hashes"] == m.data_hashes


def test_a_struct_buffer_from_a_structured_array(device, tmp_path):
    """Fields are matched by name, so a packed array fills the compiler's padded layout."""
    shutil.copy(DATA / "particles.cl", tmp_path / "particles.cl")
    n = 128
    packed = np.zeros(n, [("pos", "<f4", (4,)), ("vel", "<f4", (4,)), ("tag", "i1"), ("mass", "<f4"),
                          ("cell", "<i4"), ("flags", "<i2")])
    packed["vel"] = np.arange(4 * n, dtype=np.float32).reshape(n, 4)
    packed["mass"], packed["cell"], packed["tag"] = 2.0, np.arange(n), 3
    np.save(tmp_path / "p.npy", packed)
    path = tmp_path / "particles.cl"
    m = benchmark(path.read_text(), "advance", parse_flags(f"--global {n} --arg s=1.0 --fill p=file:p.npy"),
                  device, file=str(path), policy=Policy.quick(), outputs=tmp_path / "out.npz", timeout_s=60)
    assert m.status == "ok", m.error
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(out["cell_of"], 2 * np.arange(n) + 3)
    np.testing.assert_allclose(out["energy"], (packed["vel"].astype(np.float64) ** 2).sum(axis=1), rtol=1e-5)


def test_the_command_line_a_directive_and_clperf_toml_take_data_files(folder, capsys):
    common = ["--device", "pocl", "--policy", "quick", "--no-store", "--json"]
    assert main(["bench", str(folder / "scale.cl"), *common, *_flags(FLAGS)]) == 0
    assert set(json.loads(capsys.readouterr().out)["data_hashes"]) == {"x", "v"}

    source = (folder / "scale.cl").read_text()
    (folder / "directive.cl").write_text(f"// clperf: {FLAGS}\n" + source)
    assert main(["bench", str(folder / "directive.cl"), *common]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["data_hashes"]["x"] == sha256(folder / "data" / "x.npy")

    (folder / "clperf.toml").write_text(f'[kernels.scale]\nscenario = "{FLAGS}"\n')
    assert main(["bench", str(folder / "scale.cl"), *common]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["scenario"]["fills"]["v"] == "file:data/v.npy" and m["data_hashes"]["v"] == sha256(
        folder / "data" / "v.npy")


def _flags(text: str) -> list[str]:
    return text.split()


def _outside(folder: Path) -> str:
    other = folder.parent / "elsewhere"
    other.mkdir()
    np.save(other / "x.npy", np.zeros(N, np.float32))
    return str(other / "x.npy")


@pytest.mark.parametrize("case,words", [
    ("wrong dtype", "the parameter's elements are float32; the file holds float64"),
    ("wrong length", "the file holds 256 elements; the buffer has 100"),
    ("wrong vector shape", "shape must be (N, 4) for N elements of the parameter's type; it is (1024,)"),
    ("missing", "file:data/nope.npy: no such file"),
    ("absolute outside", "is outside the kernel's folder"),
    ("dot-dot escape", "is outside the kernel's folder"),
    ("symlink escape", "is outside the kernel's folder"),
    ("pickled objects", "holds Python objects"),
    ("not npy", "is not a NumPy .npy file"),
])
def test_data_file_errors(device, folder, case, words):
    flags = FLAGS
    if case == "wrong dtype":
        np.save(folder / "data" / "x.npy", np.zeros(N, np.float64))
    elif case == "wrong length":
        flags += " --arg x=100"
    elif case == "wrong vector shape":
        np.save(folder / "data" / "v.npy", np.zeros(4 * N, np.float32))
    elif case == "missing":
        flags = flags.replace("data/x.npy", "data/nope.npy")
    elif case == "absolute outside":
        flags = flags.replace("data/x.npy", _outside(folder))
    elif case == "dot-dot escape":
        _outside(folder)
        flags = flags.replace("data/x.npy", "data/../../elsewhere/x.npy")
    elif case == "symlink escape":
        (folder / "data" / "link.npy").symlink_to(_outside(folder))
        flags = flags.replace("data/x.npy", "data/link.npy")
    elif case == "pickled objects":
        np.save(folder / "data" / "x.npy", np.array([{"a": 1}] * N, dtype=object), allow_pickle=True)
    elif case == "not npy":
        (folder / "data" / "x.npy").write_text("1,2,3\n")
    m = bench(device, folder, flags)
    assert m.status == "invalid-scenario", (case, m.error)
    assert words in (m.error or ""), m.error
    assert m.times_ms == () and m.data_hashes == {}


def test_a_data_file_error_on_the_command_line_is_one_line(folder, capsys):
    rc = main(["bench", str(folder / "scale.cl"), "--device", "pocl", *_flags(FLAGS),
               "--fill", "x=file:/etc/hostname"])
    out = capsys.readouterr()
    assert rc == 1 and "invalid-scenario: file:/etc/hostname is outside the kernel's folder" in out.out
    assert "Traceback" not in out.err
