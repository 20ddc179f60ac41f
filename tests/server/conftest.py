"""pytest-lsp fixtures: a real ``python -m clperf.server`` subprocess, driven with VS Code's and Neovim's
client capabilities, with a throw-away CLPERF_HOME (measurements, caches, device peaks)."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

DATA = Path(__file__).parent / "data"
CLIENTS = ["visual-studio-code", "neovim"]
HOME = Path(tempfile.mkdtemp(prefix="clperf-lsp-tests-"))
ENV = {**os.environ, "CLPERF_HOME": str(HOME), "CLPERF_CACHE_DIR": str(HOME / "cache")}
SERVER = [sys.executable, "-m", "clperf.server", "--stdio", "--log-level", "INFO"]
# the shipped H200 profile: estimates every machine gives alike (the default device, the best local one,
# and the measurement of its peaks are tested in test_devices.py)
TEST_SETTINGS: dict[str, Any] = {"device": "h200", "benchmarkPolicy": "quick", "benchmarkTimeout": 60}


def _record_diagnostics(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)  # type: ignore[attr-defined]


def _refresh(client: LanguageClient, params: None) -> None:
    client.refreshes += 1  # type: ignore[attr-defined]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_diagnostics
    features[types.WORKSPACE_CODE_LENS_REFRESH] = _refresh
    features[types.WORKSPACE_INLAY_HINT_REFRESH] = _refresh
    register_lsp_features(client, features)
    client.published = []  # type: ignore[attr-defined]
    client.refreshes = 0  # type: ignore[attr-defined]
    return client


CONFIG = ClientServerConfig(server_command=SERVER, server_env=ENV, client_factory=make_client)


async def start(client: LanguageClient, spec: str, settings: Any = None) -> types.InitializeResult:
    client.set_configuration({"clperf": TEST_SETTINGS if settings is None else settings})
    return await client.initialize_session(types.InitializeParams(capabilities=client_capabilities(spec)))


@pytest_lsp.fixture(params=CLIENTS, config=CONFIG)
async def client(request: pytest.FixtureRequest, lsp_client: LanguageClient):
    lsp_client.init_result = await start(lsp_client, request.param)  # type: ignore[attr-defined]
    lsp_client.spec = request.param  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def bare(lsp_client: LanguageClient):
    """A server not yet initialised: the test calls ``lsp.start(bare, spec, settings)`` itself."""
    yield
    await lsp_client.shutdown_session()


# PoCL with one compute unit: a real local device that no shipped profile describes (the PoCL profile is
# of two cores), so its peaks are unknown until measured, whatever machine the tests run on
UNPROFILED = ClientServerConfig(server_command=SERVER, server_env={**ENV, "POCL_MAX_PTHREAD_COUNT": "1"},
                                client_factory=make_client)


@pytest_lsp.fixture(config=UNPROFILED)
async def unprofiled(lsp_client: LanguageClient):
    """``bare`` on a local device with no shipped profile: its peaks are unknown until measured."""
    yield
    await lsp_client.shutdown_session()


async def until(predicate: Callable[[], Any], timeout_s: float = 60.0, what: str = "condition") -> Any:
    """Poll ``predicate`` (cheap, client-side state) until it returns something truthy."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


def published(client: LanguageClient, uri: str, version: int | None = None) -> list[Any]:
    return [
        p
        for p in client.published  # type: ignore[attr-defined]
        if p.uri == uri and (version is None or p.version == version)
    ]


async def open_doc(
    client: LanguageClient,
    text: str,
    name: str = "k.cl",
    version: int = 1,
    folder: Path | None = None,
    wait: bool = True,
) -> str:
    """Open ``text`` as a document (under a temp folder so relative paths resolve) and wait for its
    first diagnostics."""
    path = (folder or Path(tempfile.mkdtemp(prefix="clperf-doc-"))) / name
    path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="opencl", version=version, text=text)
        )
    )
    if wait:
        await until(lambda: published(client, uri, version), what=f"diagnostics of {name} v{version}")
    return uri


def fixture_text(name: str) -> str:
    return (DATA / name).read_text()


def replace_all(client: LanguageClient, uri: str, text: str, version: int, save: bool = True) -> None:
    """A whole-document change (as a client sends after an external edit), then a save."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    if save:
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


def doc_id(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def line_of(text: str, needle: str) -> int:
    """0-based line of the first line containing ``needle``."""
    for i, line in enumerate(text.split("\n")):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in the text")


def hover_rows(text: str) -> list[tuple[str, str]]:
    """A kernel hover's rows as ``(label, value)``, from a table (``| k | v |``, VS Code) or a list
    (``- **k**: v``, clients without a Markdown parser of their own, Neovim)."""
    out = []
    for line in text.split("\n"):
        if line.startswith("| ") and not line.startswith("| |"):
            label, value = line.removeprefix("| ").removesuffix(" |").split(" | ", 1)
            out.append((label, value))
        elif line.startswith("- **"):
            label, value = line.removeprefix("- **").split("**: ", 1)
            out.append((label, value))
    return out


def children(pid: int) -> list[str]:
    """Names of the processes whose parent is ``pid``."""
    out = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
        except OSError:
            continue
        if fields.get("PPid", "").strip() == str(pid):
            out.append(fields.get("Name", "").strip())
    return out


@pytest.fixture
def lsp() -> SimpleNamespace:
    """The helpers above, for test modules (importlib import mode: they cannot import conftest)."""
    return SimpleNamespace(
        until=until,
        published=published,
        open_doc=open_doc,
        fixture_text=fixture_text,
        replace_all=replace_all,
        doc_id=doc_id,
        line_of=line_of,
        start=start,
        children=children,
        rows=hover_rows,
        home=HOME,
        data=DATA,
        settings=TEST_SETTINGS,
    )
