"""textDocument/codeAction: #pragma unroll for unroll candidates, a scenario directive for defaults."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient


async def actions(
    client: LanguageClient, uri: str, line: int, diags: list[types.Diagnostic]
) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line, character=0)
            ),
            context=types.CodeActionContext(diagnostics=diags),
        )
    )


@pytest.mark.e2e
@pytest.mark.slow
async def test_unroll_pragma(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    diag = next(d for d in client.diagnostics[uri] if d.code == "unroll-candidate")
    found = await actions(client, uri, diag.range.start.line, [diag])
    fix = next(a for a in found if a.title.startswith("Insert #pragma unroll 8"))
    assert "predicted" in fix.title, fix.title  # the estimator ran on the edited file
    assert fix.title.endswith(" on NVIDIA H200)"), fix.title  # the device the speedup is for
    edit = fix.edit.changes[uri][0]
    loop_line = lsp.line_of(text, "for (int k = 0; k < 8; k++)")
    assert edit.range.start == types.Position(line=loop_line, character=0)
    assert edit.new_text == "    #pragma unroll 8\n"
    assert fix.kind == types.CodeActionKind.QuickFix


@pytest.mark.e2e
@pytest.mark.slow
async def test_scenario_directive_for_defaults(client: LanguageClient, lsp) -> None:
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    line = lsp.line_of(text, "a[i] = a[i] * s;")
    found = await actions(client, uri, line, [])
    fix = next(a for a in found if a.title.startswith("Add a scenario directive for scale"))
    edit = fix.edit.changes[uri][0]
    assert edit.range.start.line == lsp.line_of(text, "void scale(")
    assert edit.new_text == "// clperf: --global 1048576 --arg a=1048576 --arg s=1.5\n"
    # applying it: the kernel no longer runs on defaults, the action goes away
    fixed = text.replace("__kernel void scale", edit.new_text + "__kernel void scale")
    lsp.replace_all(client, uri, fixed, version=2)
    await lsp.until(lambda: lsp.published(client, uri, 2))
    again = await actions(client, uri, line + 1, [])
    assert not any(a.title.startswith("Add a scenario directive") for a in again)
    # kernels with a directive never get one
    assert not any("strided" in a.title for a in await actions(client, uri, 5, []))


FIR8_256 = """// clperf: --global n --local 256 --arg n=1048576 --arg x=n+8 --arg y=n
__kernel void fir8(__global const float *x, __global float *y, int n)
{
    int i = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < 8; k++)
        acc += x[i + k] * (1.0f / (k + 1));
    y[i] = acc;
}
"""


@pytest.mark.e2e
@pytest.mark.slow
async def test_local_cache_rewrite_is_offered_only_where_it_is_not_predicted_slower(
        client: LanguageClient, lsp) -> None:
    pytest.importorskip("clperf.predictor.rewrites")
    text = lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(client, text)
    diag = next(d for d in client.diagnostics[uri] if d.code == "local-cache-candidate")
    found = await actions(client, uri, diag.range.start.line, [diag])
    for fix in (a for a in found if "__local" in a.title):  # an honest title where one is offered
        assert "predicted" in fix.title and "`" not in fix.title, fix.title
        if "slower" in fix.title:
            assert "not recommended" in fix.title and not fix.is_preferred, fix.title
        if fix.disabled is None:
            assert any("__local" in e.new_text for e in fix.edit.changes[uri])
            assert fix.diagnostics and fix.diagnostics[0].code == "local-cache-candidate"
    # fir8 with 256 work-items per group: the tile is predicted about 0.8x on the H200, no fix at all (in
    # groups of 128, starting the groups bounds both versions alike: no change)
    uri = await lsp.open_doc(client, FIR8_256)
    diag = next(d for d in client.diagnostics[uri] if d.code == "local-cache-candidate")
    found = await actions(client, uri, diag.range.start.line, [diag])
    assert not any("__local" in a.title for a in found), [a.title for a in found]


@pytest.mark.e2e
@pytest.mark.slow
async def test_on_the_local_pocl_code_actions_run_nothing_and_use_counted_code_once_cached(
        bare: LanguageClient, lsp, tmp_path, pocl) -> None:
    import json
    import os
    import shutil
    import subprocess
    import sys

    from clperf.core.paths import state_dir

    # the user ran `clperf devices` (the pocl fixture measured its peaks): a device without a profile
    # (PoCL on a CPU no profile names) has no prediction before that
    shutil.copytree(state_dir() / "devices", tmp_path / "state" / "devices")
    await lsp.start(bare, "visual-studio-code", {"cacheDirectory": str(tmp_path / "state"),
                                                 "device": "portable"})
    text = f"// {tmp_path.name}: no costing of this text cached\n" + lsp.fixture_text("kernels.cl")
    uri = await lsp.open_doc(bare, text)
    diag = next(d for d in bare.diagnostics[uri] if d.code == "unroll-candidate")
    found = await actions(bare, uri, diag.range.start.line, [diag])
    static = next(a for a in found if a.title.startswith("Insert #pragma unroll 8"))
    assert "predicted" in static.title, static.title  # the static model's speedup
    pid = bare._server.pid  # type: ignore[union-attr]
    assert not any(n.startswith("python") for n in lsp.children(pid)), lsp.children(pid)  # no counting run
    # the user counts PoCL's code on purpose (`clperf fix` on the device they name): the costings land in
    # the prediction cache the server reads, and the quick fix's speedup is theirs from then on
    source = tmp_path / "kernels.cl"
    source.write_text(text)
    env = {**os.environ, "CLPERF_HOME": str(tmp_path / "state"), "CLPERF_CACHE_DIR": str(lsp.home / "cache")}
    out = subprocess.run([sys.executable, "-m", "clperf", "fix", str(source), "--kernel", "fir8", "--rule",
                          "unroll-candidate", "--device", "portable", "--json"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    counted = json.loads(out.stdout)["rewrites"][0]
    assert "counted" in counted["prediction"], counted["prediction"]
    again = await actions(bare, uri, diag.range.start.line, [diag])
    fix = next(a for a in again if a.title.startswith("Insert #pragma unroll 8"))
    # the same figure as the CLI's, and the title names the device it is for
    device = static.title.rsplit(" faster on ", 1)[1].removesuffix(")")
    assert device.startswith("pthread-"), static.title
    expected = counted["title"][:-1] + f" on {device})"
    assert fix.title == expected != static.title, (fix.title, counted["title"])
    assert not any(n.startswith("python") for n in lsp.children(pid)), lsp.children(pid)
