"""Shared records: how `--device TEXT` picks a device, the same for bench, predict and the server."""

from __future__ import annotations

from clperf.api import select_device
from clperf.core.records import Device


def _dev(name: str, platform: str) -> Device:
    return Device(name, platform, "cpu", 2, 2445, 65536, 4096, "1.0")


def test_matches_name_platform_and_common_platform_name() -> None:
    pocl = _dev("pthread-haswell-AMD EPYC", "Portable Computing Language")
    assert pocl.matches("pocl") and pocl.matches("POCL") and pocl.matches("epyc")
    assert pocl.matches("portable") and not pocl.matches("nvidia") and not pocl.matches("  ")
    intel = _dev("AMD EPYC", "Intel(R) OpenCL")
    assert intel.matches("intel") and intel.matches("intel cpu runtime") and not intel.matches("pocl")


def test_is_pocl_only_for_pocls_cpu_device() -> None:
    assert _dev("pthread-haswell-AMD EPYC", "Portable Computing Language").is_pocl
    assert not _dev("AMD EPYC", "Intel(R) OpenCL").is_pocl
    gpu = Device("pocl-cuda", "Portable Computing Language", "gpu", 2, 2445, 65536, 4096, "1.0")
    assert not gpu.is_pocl


def test_predict_finds_pocl_by_its_common_name(pocl) -> None:
    d = select_device("pocl")
    assert d.platform == "Portable Computing Language" and d.source == "discovered"
    assert select_device("h200").name == "NVIDIA H200"
