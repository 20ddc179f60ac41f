"""The Neovim set-up documented in docs/editor.md (tests/editor/neovim/init.lua, for Neovim 0.7+), run
headless in Debian's Neovim 0.7.2 against the real clperf server, checking what a user sees: filetype,
diagnostics, the code lenses drawn in the buffer (on a fresh state folder: once the local device's peaks
are measured), the hover float `K` opens, and what :ClperfBenchmark prints."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

HERE = Path(__file__).parent
KERNELS = HERE.parent / "data" / "workspace" / "kernels.cl"
DOC = HERE.parents[2] / "docs" / "editor.md"
FIR8_LINE = 3  # 0-based: the line of fir8's declaration in tests/editor/data/workspace/kernels.cl


@pytest.fixture(scope="module")
def nvim_result(editor_tools: Any, processes: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="clperf-nvim-") as tmp:
        work = Path(tmp)
        shutil.copy(KERNELS, work / "kernels.cl")
        out = work / "result.json"
        env = processes.env(CLPERF_PYTHON=str(editor_tools.python), CLPERF_NVIM_FILE=str(work / "kernels.cl"),
                            CLPERF_NVIM_OUT=str(out), CLPERF_NVIM_LINE="3", CLPERF_NVIM_COL="17",
                            CLPERF_HOME=str(work / "clperf-home"), XDG_STATE_HOME=str(work / "state"),
                            XDG_DATA_HOME=str(work / "data"), XDG_CONFIG_HOME=str(work / "config"))
        proc = processes.start("nvim", [str(editor_tools.nvim), "--headless", "-u", "NONE", "-i", "NONE",
                                        "-c", f"luafile {HERE / 'init.lua'}",
                                        "-c", f"luafile {HERE / 'check.lua'}"], env, cwd=work)
        try:
            proc.wait(timeout=420)
        except subprocess.TimeoutExpired:
            log = (processes.logs / "nvim.log").read_text()[-2000:]
            pytest.fail(f"headless Neovim did not finish: {log}")
        finally:
            processes.close()
        assert out.exists(), f"check.lua wrote nothing: {(processes.logs / 'nvim.log').read_text()[-2000:]}"
        result: dict[str, Any] = json.loads(out.read_text())
        (processes.logs / "result.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
        return result


def test_server_attaches_and_reports_findings(nvim_result: dict[str, Any]) -> None:
    assert nvim_result["errors"] == []
    assert nvim_result["filetype"] == "opencl"
    assert nvim_result["clients"] == 1
    assert nvim_result["got_diagnostics"], nvim_result["diagnostics"]
    codes = {d["code"] for d in nvim_result["diagnostics"] if d["source"] == "clperf"}
    assert "unroll-candidate" in codes, nvim_result["diagnostics"]


def test_k_opens_the_estimate_breakdown_without_table_pipes(nvim_result: dict[str, Any]) -> None:
    assert nvim_result["k_mapping"] == "clperf: estimate breakdown"  # init.lua's, not man
    hover = nvim_result.get("hover") or ""
    assert "fir8" in hover and "bound" in hover.lower(), hover
    assert "|" not in hover, hover  # Neovim draws a Markdown table's pipes as they are: a list instead


def test_the_estimate_lens_is_drawn_and_names_the_local_device(nvim_result: dict[str, Any]) -> None:
    assert nvim_result["estimate_drawn"], nvim_result["lenses_before_benchmark"]
    fir8 = [lens["text"] for lens in nvim_result["lenses_before_benchmark"] if lens["line"] == FIR8_LINE]
    # the default device is the local one (PoCL here), and the benchmark runs on it
    assert fir8 and fir8[0].startswith("≈ ") and "-bound on pthread-" in fir8[0], nvim_result["lenses"]
    assert fir8[0].endswith(" | Benchmark"), fir8
    assert len(fir8[0]) <= 90, fir8  # one kernel's lenses fit a 100-column window


def test_clperf_benchmark_prints_its_result_and_the_lens_shows_it(nvim_result: dict[str, Any]) -> None:
    assert nvim_result["benchmark_printed"], nvim_result.get("messages")
    printed = [line for line in nvim_result["messages"].split("\n") if line.startswith("clperf: fir8: ")]
    assert printed and printed[-1].startswith("clperf: fir8: measured "), printed
    assert " on pthread-" in printed[-1], printed
    assert nvim_result["measured_drawn"], nvim_result["lenses"]
    fir8 = [lens["text"] for lens in nvim_result["lenses"] if lens["line"] == FIR8_LINE]
    # the estimate beside the measurement is left out where the estimate lens shows the same time
    assert " | measured " in fir8[0] and fir8[0].endswith(" | Benchmark") and len(fir8[0]) <= 90, fir8


def test_docs_show_the_tested_config() -> None:
    """docs/editor.md shows init.lua verbatim, so the documented set-up is the one tested here."""
    assert (HERE / "init.lua").read_text().strip() in DOC.read_text()
