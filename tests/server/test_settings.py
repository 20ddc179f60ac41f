"""workspace/configuration: typed settings; bad values are reported, defaults used, the server goes on."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from clperf.server.lenses import short_device
from clperf.server.settings import Features, Settings, parse_settings

WRONG = {
    "device": 42,
    "buildOptions": ["-DX=1"],
    "defaultScenario": "--globl 64",
    "cacheDirectory": None,
    "benchmarkTimeout": "soon",
    "poclCode": "yes",
    "measurePeaks": "no",
    "features": {"codeLens": "yes", "hover": False, "inlayHints": 1},
}


def test_parse_reports_each_bad_field_and_keeps_the_good_ones() -> None:
    settings, problems = parse_settings(WRONG)
    assert settings == Settings(features=Features(hover=False))
    text = "\n".join(problems)
    for name in (
        "clperf.device",
        "clperf.buildOptions",
        "clperf.defaultScenario",
        "clperf.benchmarkTimeout",
        "clperf.poclCode",
        "clperf.measurePeaks",
        "clperf.features.codeLens",
        "clperf.features.inlayHints",
    ):
        assert name in text, (name, text)
    assert len(problems) == 8
    assert settings.measure_peaks  # "no" is not false: the default stands


def test_parse_accepts_valid_settings() -> None:
    settings, problems = parse_settings(
        {
            "device": "h200",
            "buildOptions": "-DBLOCK=16 -I inc",
            "defaultScenario": "--global 4096 --local 64",
            "features": {"diagnostics": False},
            "poclCode": True,
            "measurePeaks": False,
        }
    )
    assert problems == []
    assert settings.pocl_code and not settings.measure_peaks
    assert settings.device == "h200" and settings.scenario_spec.global_size == ("4096",)
    assert settings.features == Features(diagnostics=False)
    assert parse_settings("nonsense")[0] == Settings() and parse_settings("nonsense")[1]
    assert parse_settings({"buildOptions": "-D'X"})[1]  # unbalanced quote


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["visual-studio-code", "neovim"])
async def test_wrong_types_give_messages_and_defaults(bare: LanguageClient, lsp, spec: str) -> None:
    await lsp.start(bare, spec, WRONG)
    uri = await lsp.open_doc(bare, lsp.fixture_text("kernels.cl"))
    await lsp.until(lambda: len(bare.messages) >= 6, what="a message per bad setting")
    assert all(m.type == types.MessageType.Warning for m in bare.messages)
    lenses = await bare.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    default = await bare.workspace_execute_command_async(
        types.ExecuteCommandParams(command="clperf.currentDevice"))
    assert default["source"] == "discovered"  # device 42 ignored: the default, the best local device
    assert lenses, "no code lens"
    # the lens names the default device: in full while its peaks are measured, then in the estimate
    # short (no trademarks, no clock, cut to fit), a prefix of its short name
    title = lenses[0].command.title
    shown = title.split(" on ", 1)[1].split(" (")[0].rstrip("…") if " on " in title else ""
    assert default["text"] in title or (shown and short_device(default["text"]).startswith(shown)), title
    hover = await bare.text_document_hover_async(
        types.HoverParams(text_document=lsp.doc_id(uri), position=types.Position(line=4, character=16))
    )
    assert hover is None  # features.hover = false was valid and applies


@pytest.mark.e2e
@pytest.mark.slow
async def test_features_off_and_default_scenario(bare: LanguageClient, lsp) -> None:
    await lsp.start(
        bare,
        "visual-studio-code",
        {
            "features": {"codeLens": False, "diagnostics": False, "inlayHints": False},
            "defaultScenario": "--global 4096",
        },
    )
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(bare, text)
    assert list(bare.diagnostics[uri]) == []  # still published (empty), so nothing stale stays
    assert (
        list(await bare.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri))))
        == []
    )
    line = lsp.line_of(text, "void scale(")
    hover = await bare.text_document_hover_async(
        types.HoverParams(text_document=lsp.doc_id(uri), position=types.Position(line=line, character=16))
    )
    assert "global 4096" in hover.contents.value  # the default scenario setting reached the estimate
    # switching a feature back on at run time
    bare.set_configuration({"clperf": {"features": {"diagnostics": True}}})
    bare.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await lsp.until(lambda: list(bare.diagnostics[uri]), what="diagnostics after re-enabling them")


@pytest.mark.e2e
@pytest.mark.slow
async def test_device_setting_targets_that_device(bare: LanguageClient, lsp) -> None:
    await lsp.start(bare, "neovim", {"device": "portable"})
    uri = await lsp.open_doc(bare, lsp.fixture_text("kernels.cl"))
    lenses = await bare.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    assert "H200" not in lenses[0].command.title
    bad = {"device": "no-such-device"}
    bare.set_configuration({"clperf": bad})
    bare.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await lsp.until(lambda: len(lsp.published(bare, uri)) >= 2)
    lenses = await bare.text_document_code_lens_async(types.CodeLensParams(text_document=lsp.doc_id(uri)))
    assert "no device matches 'no-such-device'" in lenses[0].command.title


@pytest.mark.e2e
@pytest.mark.slow
async def test_cache_directory_receives_measurements(bare: LanguageClient, lsp, tmp_path) -> None:
    home = tmp_path / "clperf-state"
    await lsp.start(bare, "neovim", {**lsp.settings, "cacheDirectory": str(home)})
    uri = await lsp.open_doc(bare, lsp.fixture_text("kernels.cl"))
    result = await bare.workspace_execute_command_async(
        types.ExecuteCommandParams(command="clperf.benchmark", arguments=[{"uri": uri, "kernel": "scale"}])
    )
    assert result[0]["status"] == "ok", result
    assert "scale" in (home / "measurements.jsonl").read_text()
