"""The Neovim set-up documented in docs/editor.md (tests/editor/neovim/init.lua, for Neovim 0.7+), run
headless in Debian's Neovim 0.7.2 against the real clperf server: filetype, diagnostics, hover, lenses."""

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
            proc.wait(timeout=180)
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


def test_hover_shows_estimate_breakdown(nvim_result: dict[str, Any]) -> None:
    hover = nvim_result.get("hover") or ""
    assert "fir8" in hover and "bound" in hover.lower(), hover


def test_code_lens_shows_estimate(nvim_result: dict[str, Any]) -> None:
    assert any(t.startswith("≈") for t in nvim_result["lenses"]), nvim_result["lenses"]


def test_docs_show_the_tested_config() -> None:
    """docs/editor.md shows init.lua verbatim, so the documented set-up is the one tested here."""
    assert (HERE / "init.lua").read_text().strip() in DOC.read_text()
