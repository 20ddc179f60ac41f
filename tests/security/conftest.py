"""The language-server fixtures of tests/server/conftest.py for the attacks played against a real server.

A conftest belongs to its folder, so that one is loaded here once and registered as the module
``server_conftest``; test modules import its helpers from there (``import server_conftest as lsp``).
``server``: a real server, initialised with VS Code's capabilities and the tests' settings.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities


def _load_server_conftest():  # noqa: ANN202 - a module
    path = Path(__file__).parents[1] / "server" / "conftest.py"
    spec = importlib.util.spec_from_file_location("server_conftest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["server_conftest"] = module
    spec.loader.exec_module(module)
    return module


lsp = sys.modules.get("server_conftest") or _load_server_conftest()


@pytest_lsp.fixture(config=lsp.CONFIG)
async def server(lsp_client: LanguageClient):
    lsp_client.set_configuration({"clperf": lsp.TEST_SETTINGS})
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    yield
    if lsp_client._server is not None and lsp_client._server.returncode is None:  # a test may end it
        await lsp_client.shutdown_session()
