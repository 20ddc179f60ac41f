"""The clperf extension in a real VS Code: code-server (pinned) with the packaged .vsix installed, driven by
playwright-core in Debian's Chromium through what a user does — open a kernel, read the finding, the
estimate lens and the hover, apply the unroll quick fix, benchmark on the local OpenCL device (PoCL), pick
a device profile and the local device again.

One editor session serves all the checks (starting VS Code costs ~20 s); each check is its own test so a
report names what broke. A second, shorter session is the install a user without a checkout makes: the
wheel into a fresh venv outside the repository (with torch as scripts/setup.sh installs it), the .vsix,
a folder of their own. Screenshots land in tests/editor/artifacts/test_vscode/ (gitignored).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WORKSPACE = Path(__file__).parent / "data" / "workspace"
DRIVER = Path(__file__).parent / "drive.mjs"
KERNEL_LINE, KERNEL_COLUMN = 4, 17  # `fir8` in data/workspace/kernels.cl (1-based)
DRIVER_TIMEOUT_S = 480
NO_CLPERF_PYTHON = "/usr/bin/python3"  # Debian's Python: clperf lives in the repository's .venv only
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
# With CLPERF_UPDATE_SCREENSHOTS=1 a fully passing run refreshes the README's screenshots from these.
FOR_DOCS = {
    "03-codelens.png": "vscode-lenses-findings.png",
    "04-hover.png": "vscode-hover.png",
    "05-quickfix-menu.png": "vscode-quickfix.png",
    "07-benchmark-progress.png": "vscode-benchmark-progress.png",
    "08-benchmark-measured.png": "vscode-benchmark-measured.png",
    "10-select-device.png": "vscode-select-device.png",
    "11-local-device.png": "vscode-local-device.png",
}
BENCHMARK_TIMEOUT_S = 180

USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "security.workspace.trust.enabled": False,
    "extensions.ignoreRecommendations": True,
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "editor.minimap.enabled": False,
    "editor.fontSize": 14,
    "editor.hover.delay": 200,
    "window.commandCenter": False,
    "chat.commandCenter.enabled": False,
    "remote.autoForwardPorts": False,
}


def _run_session(tools: Any, procs: Any, tmp: Path, *, out: Path | None = None, python: Path | None = None,
                 checks: list[str] | None = None) -> dict[str, Any]:
    """One code-server session through drive.mjs: ``python`` (default the repository's .venv) as
    clperf.pythonPath, results and screenshots in ``out`` (default the module's artifacts), ``checks``
    the driver's checks to run (default all)."""
    out = out or procs.logs
    out.mkdir(parents=True, exist_ok=True)
    python = python or tools.python
    for old in out.glob("*.png"):
        old.unlink()
    ws, user, exts, xdg, browser_profile = (tmp / n for n in ("ws", "user", "exts", "xdg", "chromium"))
    shutil.copytree(WORKSPACE, ws)
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text(json.dumps({
        "clperf.benchmarkPolicy": "quick",
        "clperf.benchmarkTimeout": 120,
    }, indent=2))
    (user / "User").mkdir(parents=True)
    (user / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=2))
    # clperf.pythonPath is a machine setting: never read from a workspace; code-server, a remote, reads it
    # from its machine settings
    (user / "Machine").mkdir()
    (user / "Machine" / "settings.json").write_text(json.dumps({"clperf.pythonPath": str(python)}))
    port = procs.free_port()
    config = tmp / "code-server.yaml"
    config.write_text(f"bind-addr: 127.0.0.1:{port}\nauth: none\ncert: false\n")
    env = procs.env(XDG_DATA_HOME=str(xdg / "data"), XDG_CONFIG_HOME=str(xdg / "config"),
                    XDG_CACHE_HOME=str(xdg / "cache"), CLPERF_HOME=str(tmp / "clperf-home"))
    env.pop("PYTHONPATH", None)  # clperf comes from `python` alone
    dirs = ["--user-data-dir", str(user), "--extensions-dir", str(exts)]

    install = subprocess.run([str(tools.code_server), *dirs, "--install-extension", str(tools.vsix)],
                             env=env, capture_output=True, text=True, timeout=120)
    assert install.returncode == 0, f"installing the .vsix failed: {install.stdout}{install.stderr}"

    server = procs.start("code-server", [str(tools.code_server), "--config", str(config), *dirs,
                                          "--disable-telemetry", "--disable-update-check",
                                          "--disable-workspace-trust", "--disable-getting-started-override",
                                          str(ws)], env, cwd=tmp)
    procs.wait_http(f"http://127.0.0.1:{port}/healthz", 60, server)

    chrome = procs.start("chromium", [
        str(tools.chromium), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", f"--user-data-dir={browser_profile}", "--remote-debugging-port=0",
        "--window-size=1360,900", "about:blank"], env)
    active = browser_profile / "DevToolsActivePort"
    deadline = time.monotonic() + 30
    while not (active.exists() and active.read_text().strip()) and time.monotonic() < deadline:
        assert chrome.poll() is None, "Chromium exited at start (see artifacts/test_vscode/chromium.log)"
        time.sleep(0.1)
    cdp_port = active.read_text().split()[0]

    cfg = tmp / "drive.json"
    cfg.write_text(json.dumps({
        "playwright": str(tools.playwright), "cdp": f"http://127.0.0.1:{cdp_port}",
        "url": f"http://127.0.0.1:{port}/?folder={ws}", "file": str(ws / "kernels.cl"),
        "fileName": "kernels.cl", "userDataDir": str(user), "artifacts": str(out),
        "settingsFile": str(user / "Machine" / "settings.json"), "pythonWithoutClperf": NO_CLPERF_PYTHON,
        "kernelLine": KERNEL_LINE, "kernelColumn": KERNEL_COLUMN, "benchmarkMs": BENCHMARK_TIMEOUT_S * 1000,
        **({"checks": checks} if checks else {}),
    }))
    driver = procs.start("driver", ["node", str(DRIVER), str(cfg)], env)
    try:
        driver.wait(timeout=DRIVER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass  # whatever was checked so far is in results.json
    results_file = out / "results.json"
    driver_log = (procs.logs / "driver.log").read_text()[-3000:]
    assert results_file.exists(), f"the driver wrote no results: {driver_log}"
    results: dict[str, Any] = json.loads(results_file.read_text())
    shutil.copy(ws / "kernels.cl", out / "kernels.after.cl")
    return results


@pytest.fixture(scope="module")
def session(editor_tools: Any, processes: Any) -> Iterator[dict[str, Any]]:
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="clperf-vscode-") as tmp:
        try:
            results = _run_session(editor_tools, processes, Path(tmp))
        finally:
            processes.close()  # before the temporary folder goes
    results["wall_s"] = round(time.monotonic() - t0, 1)
    (processes.logs / "summary.json").write_text(json.dumps(
        {"wall_s": results["wall_s"], "timings_ms": results.get("timings"),
         "checks": {k: {"ok": v["ok"], "detail": v["detail"][:400]} for k, v in results["checks"].items()}},
        indent=2, ensure_ascii=False))
    passed = all(c["ok"] for c in results["checks"].values())
    if os.environ.get("CLPERF_UPDATE_SCREENSHOTS") == "1" and passed:
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        for src, dst in FOR_DOCS.items():
            shutil.copy(processes.logs / src, DOC_IMAGES / dst)
    yield results


def _check(session: dict[str, Any], name: str) -> str:
    assert "fatal" not in session or name in session["checks"], session.get("fatal")
    assert name in session["checks"], f"the driver did not reach '{name}' (timeout?): {session.get('fatal')}"
    result = session["checks"][name]
    assert result["ok"], f"{name}: {result['detail']} (screenshot: {result.get('screenshot')})"
    return str(result["detail"])


def test_extension_activates_and_server_starts(session: dict[str, Any], editor_tools: Any) -> None:
    detail = _check(session, "activation")
    assert str(editor_tools.python) in detail, detail  # started with the clperf.pythonPath setting
    assert "clperf:" in detail and "pthread" in detail.lower(), detail  # the machine's own device by default


def test_finding_appears_in_problems_panel(session: dict[str, Any]) -> None:
    assert "unroll" in _check(session, "finding").lower()


def test_code_lens_shows_estimate(session: dict[str, Any]) -> None:
    # the driver checks that the estimates name the status bar's device and each lens line fits
    detail = _check(session, "code_lens")
    assert "≈" in detail and "pthread" in detail.split("|| device:")[1].lower(), detail


def test_hover_fits_without_scrolling(session: dict[str, Any]) -> None:
    detail = _check(session, "hover")  # the driver fails the check when the hover's content overflows it
    assert "contentHeight" in detail, detail


def test_hover_shows_breakdown(session: dict[str, Any]) -> None:
    assert "bound" in _check(session, "hover").lower()


def test_unroll_quick_fix_changes_text(session: dict[str, Any]) -> None:
    assert "#pragma unroll" in _check(session, "quick_fix")


def test_benchmark_on_pocl_shows_measured_time(session: dict[str, Any]) -> None:
    detail = _check(session, "benchmark")
    assert "measured" in detail and "pthread" in detail.lower(), detail  # PoCL's CPU device is "pthread-…"
    assert "[cancel buttons: 1]" in detail, f"the progress notification is not cancellable: {detail}"
    # the stored measurement calibrates the estimate, which the lens shows with no restart
    before, after = detail.split("|| estimate: ")[1].split(" ||")[0].split(" -> ")
    assert before.startswith("≈") and after.startswith("≈") and before != after, detail


def test_select_device_retargets_estimates(session: dict[str, Any]) -> None:
    detail = _check(session, "select_device")
    choices = detail.split("||")[0]
    assert "NVIDIA H200" in choices and "pthread" in choices.lower(), detail  # profiles beside local devices
    assert "current" in choices.split("|")[0], detail  # the picker marks the current device


def test_selecting_the_local_device_gives_estimates(session: dict[str, Any]) -> None:
    # its peaks measured in the background on first use, in a fresh CLPERF_HOME: no terminal step
    detail = _check(session, "select_local_device")
    assert "pthread" in detail.split("||")[0].lower() and "≈" in detail, detail


def test_missing_clperf_gives_install_advice(session: dict[str, Any]) -> None:
    probe = subprocess.run([NO_CLPERF_PYTHON, "-c", "import clperf.server"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{NO_CLPERF_PYTHON} has clperf installed, so it cannot show the missing-clperf message")
    detail = _check(session, "missing_clperf")
    assert "pip install -e" in detail and NO_CLPERF_PYTHON in detail, detail
    assert "status bar shows an error: true" in detail, detail


ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 600  # the wheel (seconds), a venv with torch's CPU build (~30 s from a local wheel)


def _torch_requirement(python: Path) -> str:
    """torch as scripts/setup.sh installs it (the CPU build, pinned): the version the .venv has."""
    version = subprocess.run([str(python), "-c", "import torch; print(torch.__version__.split('+')[0])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    return f"torch=={version}"


def _fresh_install(tools: Any, tmp: Path) -> Path:
    """The wheel built from this checkout, installed with its dependencies into a new venv outside it;
    its Python, which imports clperf from the venv and not from the checkout."""
    wheels, venv = tmp / "wheels", tmp / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def run(*cmd: str) -> str:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                              timeout=INSTALL_TIMEOUT_S)
        assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        return proc.stdout

    run(str(tools.python), "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT))
    run(str(tools.python), "-m", "venv", str(venv))
    pip = str(venv / "bin" / "pip")
    run(pip, "install", "-q", _torch_requirement(tools.python))
    run(pip, "install", "-q", *map(str, wheels.glob("clperf-*.whl")))
    python = venv / "bin" / "python"
    where = run(str(python), "-P", "-c", "import clperf; print(clperf.__file__)").strip()
    assert where.startswith(str(venv)), f"clperf is imported from {where}, not from the fresh venv"
    return python


@pytest.fixture(scope="module")
def installed_session(editor_tools: Any, processes: Any, session: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """After the main session (one code-server at a time): the wheel + .vsix install without a checkout,
    a folder outside the repository, the activation and the estimate lens."""
    with tempfile.TemporaryDirectory(prefix="clperf-install-") as tmp:
        assert not Path(tmp).resolve().is_relative_to(ROOT)
        try:
            python = _fresh_install(editor_tools, Path(tmp))
            results = _run_session(editor_tools, processes, Path(tmp), out=processes.logs / "install",
                                   python=python, checks=["activation", "code_lens"])
        finally:
            processes.close()
    results["python"] = str(python)
    yield results


def test_wheel_and_vsix_install_without_a_checkout(installed_session: dict[str, Any]) -> None:
    detail = _check(installed_session, "activation")
    assert installed_session["python"] in detail, detail  # the fresh venv's server, not the checkout's
    assert "≈" in _check(installed_session, "code_lens")
