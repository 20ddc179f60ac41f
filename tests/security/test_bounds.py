"""Scenario expressions, argument values and launch sizes are bounded: nothing a directive, a setting or a
flag writes can make clperf build a huge number, run for long, or launch what no device can.

An expression is refused (ScenarioError, naming a short start of it) when it is long, deep or would build
a value past 2**63; an integer argument must fit its C type; a launch must fit the device.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from pathlib import Path

import pytest
import server_conftest
from lsprotocol import types
from pytest_lsp import LanguageClient

from clperf.benchmark.inputs import scalar_value
from clperf.benchmark.runner import precheck
from clperf.cli import main
from clperf.core.errors import ScenarioError
from clperf.core.records import Param, Scenario
from clperf.core.scenario import evaluate, parse_flags, resolve
from clperf.predictor.model import profiles
from clperf.predictor.model.estimate import check_launch

FAST_S = 2.0  # generous for a shared, noisy machine: a refusal itself takes microseconds
SMALL_BYTES = 20 << 20  # Python memory an expression may take while it is refused
COPY = ("__kernel void copy(__global float *dst, __global const float *src) {\n"
        "  int i = get_global_id(0);\n  dst[i] = src[i];\n}\n")


def _scalar(type_name: str) -> list[Param]:
    return [Param("x", "float", "global", True), Param("n", type_name, "private", False)]


def _refused_quickly(call, *args) -> ScenarioError:
    """Run ``call(*args)``, expect a ScenarioError, and check it came fast and small."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ScenarioError) as info:
            call(*args)
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < FAST_S, f"refused after {elapsed:.2f} s"
    assert peak < SMALL_BYTES, f"{peak >> 20} MiB allocated to refuse it"
    message = str(info.value)
    assert len(message) < 300, message  # one clear line, not the expression echoed in full
    return info.value


@pytest.mark.parametrize("expr", [
    "9**9**9",
    "2**2**40",
    "1<<100000",
    "4294967295**64",  # small enough for a power check on the exponent alone; 2048 bits
    "(1<<62)*(1<<62)*(1<<62)*(1<<62)",
    "1<<-1",
    "0**-1",
    "1.5 & 1",
    "1e308*10",
    "(-8)**0.5",
])
def test_an_expression_that_would_grow_past_2_63_is_refused(expr: str) -> None:
    err = _refused_quickly(evaluate, expr)
    assert expr[:20] in str(err)


@pytest.mark.parametrize("expr", [
    "(" * 10_000 + "1" + ")" * 10_000,
    "-" * 10_000 + "1",
    "1+" * 500_000 + "1",  # 1 MB
    "max(" + "1," * 70 + "1)",  # short enough, but more terms than an expression needs
])
def test_a_long_or_deep_expression_is_refused_before_it_is_parsed(expr: str) -> None:
    err = _refused_quickly(evaluate, expr)
    assert "expression" in str(err)


def test_names_cannot_build_a_huge_value_step_by_step() -> None:
    flags = "--arg a=4294967295 --arg b=a*a*a*a --arg c=b*b*b*b --arg d=c*c*c*c --arg n=d*d*d*d"
    params = [*_scalar("ulong"), Param("a", "ulong", "private", False), Param("b", "ulong", "private", False),
              Param("c", "ulong", "private", False), Param("d", "ulong", "private", False)]
    err = _refused_quickly(resolve, parse_flags(flags), params)
    assert "2**63" in str(err)


def test_a_long_chain_of_arguments_defined_by_each_other_is_refused() -> None:
    params = [Param(f"p{i}", "int", "private", False) for i in range(400)]
    flags = " ".join(f"--arg p{i}=p{i + 1}+1" for i in range(399)) + " --arg p399=1"
    err = _refused_quickly(resolve, parse_flags(flags), params)
    assert "more than 32" in str(err)
    short = " ".join(f"--arg p{i}=p{i + 1}+1" for i in range(31)) + " --arg p31=1"
    assert resolve(parse_flags(short), params[:32]).args["p0"] == 32


def test_expressions_within_the_bounds_still_work() -> None:
    assert evaluate("2**63") == 2**63
    assert evaluate("-(2**63)") == -(2**63)
    assert evaluate("(1<<20) * 4 // 3 + max(1, 2) % 5") == (1 << 20) * 4 // 3 + 2
    assert evaluate("1<<63") == 2**63
    assert evaluate("2**-1") == 0.5


@pytest.mark.parametrize("flags,words", [
    ("--global 2**64", "2**63"),
    ("--global 4294967296", "4294967295"),
    ("--global 2**20,2**20,2**20", "2**40"),
    ("--global 0", "positive"),
    ("--global 64 --local 0", "positive"),
    ("--global 2.5", "integer"),
])
def test_a_global_size_no_device_can_launch_is_refused(flags: str, words: str) -> None:
    params = [Param("x", "float", "global", True)]
    err = _refused_quickly(resolve, parse_flags(flags), params, 3)
    assert words in str(err)


def test_the_largest_launch_sizes_are_accepted() -> None:
    params = [Param("x", "float", "global", True)]
    assert resolve(parse_flags("--global 4294967295"), params).global_size == (4294967295,)
    assert resolve(parse_flags("--global 2**20,2**20"), params, 2).work_items == 2**40


@pytest.mark.parametrize("type_name,value,fits", [
    ("int", "2147483648", False),
    ("int", "2147483647", True),
    ("int", "-2147483648", True),
    ("int", "-2147483649", False),
    ("uint", "4294967295", True),
    ("uint", "-1", False),
    ("uint", "4294967296", False),
    ("char", "127", True),
    ("char", "128", False),
    ("uchar", "255", True),
    ("uchar", "256", False),
    ("short", "-32769", False),
    ("ushort", "65535", True),
    ("long", "2**63-1", True),
    ("long", "2**63", False),
    ("ulong", "2**63", True),
    ("ulong", "-1", False),
    ("size_t", "-1", False),
    ("int4", "2147483648", False),
    ("half", "70000", False),
    ("half", "65504", True),
])
def test_an_integer_argument_must_fit_its_c_type(type_name: str, value: str, fits: bool) -> None:
    spec = parse_flags(f"--global 64 --arg n={value}")
    if fits:
        assert resolve(spec, _scalar(type_name)).args["n"] == evaluate(value)
        return
    err = _refused_quickly(resolve, spec, _scalar(type_name))
    assert "'n'" in str(err) and type_name in str(err)


@pytest.mark.parametrize("type_name,value", [
    ("int", 2**31), ("uchar", -1), ("half", 70000.0), ("float", float("inf")), ("double", float("nan")),
])
def test_the_benchmarks_typed_value_refuses_what_its_type_cannot_hold(type_name: str, value: float) -> None:
    # a Scenario read back from a dataset or a sweep reaches the worker without ``resolve``
    with pytest.raises(ScenarioError, match="'n'"):
        scalar_value(Param("n", type_name, "private", False), value)


def test_a_defaulted_integer_argument_must_fit_too() -> None:
    # the default of an integer scalar is the global size: 2**32-1 is no int
    err = _refused_quickly(resolve, parse_flags("--global 4294967295"), _scalar("int"))
    assert "'n'" in str(err) and "default" in str(err)


def test_predict_refuses_a_work_group_over_the_devices_maximum(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "copy.cl"
    src.write_text(COPY)
    assert profiles.select_device("h200").max_work_group_size == 1024
    assert main(["predict", str(src), "--device", "h200", "--model", "roofline", "--global", "4096",
                 "--local", "2048"]) == 2
    err = capsys.readouterr().err
    assert "1024" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("flags,words", [
    ("--arg dst=2**36", "dst"),  # 256 GiB of floats on a 139.8 GiB device
    ("--arg dst=2**35 --arg src=2**35", "buffers"),  # 128 GiB each: together more than the device has
    ("--global 2**64", "2**63"),
])
def test_predict_refuses_what_does_not_fit_the_device(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      flags: str, words: str) -> None:
    src = tmp_path / "copy.cl"
    src.write_text(COPY)
    assert main(["predict", str(src), "--device", "h200", "--model", "roofline", *flags.split()]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_check_launch_and_the_benchmarks_precheck_refuse_a_resolved_launch_too_large() -> None:
    # sweeps build Scenario records themselves (``with_launch``), past ``resolve``'s checks
    h200 = profiles.select_device("h200")
    params = (Param("x", "float", "global", True),)
    for sc in (Scenario((2**64,), None, {"x": 1}), Scenario((2**21, 2**21), None, {"x": 1}),
               Scenario((1024,), (0,), {"x": 1})):
        with pytest.raises(ScenarioError):
            check_launch(sc, h200)
        problem = precheck(sc, params, h200)
        assert problem is not None and problem[0] == "invalid-scenario", (sc, problem)
    huge = Scenario((1024,), None, {"x": 2**36})
    with pytest.raises(ScenarioError, match="GiB"):
        check_launch(huge, h200, params)
    problem = precheck(huge, params, h200)
    assert problem is not None and problem[0] == "out-of-memory"


lsp = server_conftest  # tests/server/conftest.py, loaded by tests/security/conftest.py


def test_a_runaway_default_scenario_setting_falls_back_to_the_defaults() -> None:
    from clperf.server.engine import Job, analyze
    from clperf.server.settings import Settings

    h200 = profiles.select_device("h200")
    text = "__kernel void scale(__global float *x, int n) { x[get_global_id(0)] *= n; }\n"
    start = time.perf_counter()
    analysis = analyze(Job("file:///d.cl", 1, "", text, Settings(default_scenario="--arg n=4294967295**64"),
                           h200))
    assert time.perf_counter() - start < 30
    problems = [p for p in analysis.problems if p.code == "invalid-scenario"]
    assert len(problems) == 1 and "2**63" in problems[0].message, analysis.problems
    assert analysis.kernels["scale"].estimate is not None  # on the documented defaults


def test_the_server_gives_no_estimate_for_buffers_the_device_cannot_hold() -> None:
    from clperf.server.engine import Job, analyze
    from clperf.server.settings import Settings

    h200 = profiles.select_device("h200")
    text = "// clperf: --arg dst=2**36\n" + COPY
    result = analyze(Job("file:///huge.cl", 1, "", text, Settings(), h200)).kernels["copy"]
    assert result.estimate is None and "GiB" in (result.estimate_problem or ""), result


async def _hover(client: LanguageClient, uri: str, line: int, character: int) -> types.Hover | None:
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character)))


@pytest.mark.e2e
@pytest.mark.slow
async def test_a_runaway_directive_gets_a_diagnostic_and_never_stalls_another_file(
        server: LanguageClient) -> None:
    client = server
    other = lsp.fixture_text("kernels.cl")
    other_uri = await lsp.open_doc(client, other, name="other.cl")
    hostile = ("// clperf: --arg n=9**9**9\n"
               "__kernel void first(__global float *x, int n) { x[get_global_id(0)] = n; }\n"
               "// clperf: --global 4294967295**64\n"
               "__kernel void second(__global float *x) { x[get_global_id(0)] = 1.0f; }\n"
               "// clperf: --arg a=65535 --arg b=a*a*a*a --arg c=b*b*b*b --arg n=c*c*c*c\n"
               "__kernel void third(__global float *x, ulong a, ulong b, ulong c, ulong n) {\n"
               "  x[get_global_id(0)] = n;\n}\n")
    start = time.monotonic()
    uri = await lsp.open_doc(client, hostile, name="hostile.cl", wait=False)
    line = lsp.line_of(other, "void strided(")
    hover = await asyncio.wait_for(_hover(client, other_uri, line, other.split("\n")[line].index("strided")),
                                   timeout=30)
    assert time.monotonic() - start < FAST_S and hover is not None
    await lsp.until(lambda: lsp.published(client, uri), timeout_s=30, what="diagnostics of hostile.cl")
    scenario = [d for d in client.diagnostics[uri] if d.code == "invalid-scenario"]
    assert {d.range.start.line for d in scenario} == {0, 2, 4}, client.diagnostics[uri]
    assert not [d for d in client.diagnostics[uri] if d.code == "internal-error"]
