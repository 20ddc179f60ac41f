"""The ``clperf.*`` settings are written in three places: the extension's package.json (what VS Code shows and
sends), vscode-client/src/common/settings.ts (what the extension reads) and server/settings.py (what the
server reads). These tests read all three, without a server process, and check that they name the same
settings with the same types and defaults, so a misspelt or forgotten setting fails here, not in an editor.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from server import settings as server_settings
from server.settings import SECTION, Features, Settings, parse_settings

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "vscode-client"
PREFIX = SECTION + "."


def _declared() -> dict[str, dict[str, Any]]:
    """package.json's ``contributes.configuration`` properties, names without the ``clperf.`` prefix."""
    conf = json.loads((CLIENT / "package.json").read_text())["contributes"]["configuration"]
    props: dict[str, dict[str, Any]] = {}
    for block in conf if isinstance(conf, list) else [conf]:
        for name, spec in block["properties"].items():
            assert name.startswith(PREFIX), name
            props[name[len(PREFIX):]] = spec
    return props


def _extension_reads() -> dict[str, tuple[str, Any]]:
    """settings.ts's ``c.get<type>("name", default)`` calls: name -> (TypeScript type, default)."""
    src = (CLIENT / "src" / "common" / "settings.ts").read_text()
    calls = re.findall(r'\bc\.get<(\w+)>\(\s*"([\w.]+)"\s*,\s*([^)]+?)\s*\)', src)
    assert calls, "no c.get<type>(name, default) calls found in settings.ts"
    return {name: (ts_type, json.loads(default)) for ts_type, name, default in calls}


def _server_reads() -> set[str]:
    """Every setting name server/settings.py reads: the keys of its name tables and its ``raw.get`` calls."""
    names = {*server_settings._STRINGS, *(f"features.{k}" for k in server_settings._FEATURES)}
    tree = ast.parse(Path(server_settings.__file__).read_text())
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "raw"
                and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            key = node.args[0].value
            if key != "features":  # the object of flags, read key by key through _FEATURES
                names.add(key)
    return names


def _client_library_reads() -> set[str]:
    """``<id>.trace.server`` is read by vscode-languageclient itself, for the client id client.ts passes."""
    src = (CLIENT / "src" / "common" / "client.ts").read_text()
    ids = re.findall(r'new LanguageClient\(\s*"([\w.-]+)"', src)
    assert ids, "client.ts creates no LanguageClient"
    return {"trace.server"} if SECTION in ids else set()


def _nested(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"features.hover": v}`` -> ``{"features": {"hover": v}}``, as workspace/configuration sends it."""
    out: dict[str, Any] = {}
    for name, v in flat.items():
        *parents, leaf = name.split(".")
        d = out
        for p in parents:
            d = d.setdefault(p, {})
        d[leaf] = v
    return out


_JSON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "boolean": bool, "number": (int, float)}
_TS_TYPES = {"string": "string", "boolean": "boolean", "number": "number"}


def test_every_server_setting_is_declared() -> None:
    declared = _declared()
    missing = sorted(_server_reads() - declared.keys())
    assert not missing, f"server/settings.py reads settings package.json does not declare: {missing}"


def test_every_declared_setting_is_read() -> None:
    read = _server_reads() | _extension_reads().keys() | _client_library_reads()
    unread = sorted(_declared().keys() - read)
    assert not unread, f"package.json declares settings nothing reads: {unread}"


def test_extension_reads_only_declared_settings_with_their_defaults() -> None:
    declared = _declared()
    for name, (ts_type, default) in _extension_reads().items():
        assert name in declared, f"settings.ts reads clperf.{name}, which package.json does not declare"
        spec = declared[name]
        assert _TS_TYPES[spec["type"]] == ts_type, (name, spec["type"], ts_type)
        assert default == spec["default"], f"clperf.{name}: settings.ts default {default!r}, " \
                                           f"package.json {spec['default']!r}"


def test_declared_defaults_are_the_server_defaults() -> None:
    # package.json's defaults, sent as a client would, must parse cleanly into the Settings defaults.
    declared = _declared()
    server = _server_reads()
    raw = _nested({name: declared[name]["default"] for name in server if name in declared})
    parsed, problems = parse_settings(raw)
    assert problems == []
    assert parsed == Settings()
    for name in server & declared.keys():
        spec = declared[name]
        assert isinstance(spec["default"], _JSON_TYPES[spec["type"]]), (name, spec)


def _other_value(spec: dict[str, Any]) -> Any:
    """A valid value of the declared type that differs from the declared default."""
    if "enum" in spec:
        return next(v for v in spec["enum"] if v != spec["default"])
    return {"string": lambda d: d + "x", "boolean": lambda d: not d,
            "number": lambda d: d + 1}[spec["type"]](spec["default"])


@pytest.mark.parametrize("name", sorted(_server_reads()))
def test_server_uses_each_declared_name(name: str) -> None:
    # A declared, valid non-default value under the declared name must change what the server parses:
    # a name the server spells differently would leave Settings() unchanged.
    spec = _declared()[name]
    value = _other_value(spec)
    if name == "defaultScenario":
        value = "--global 64"  # must be valid scenario flags
    parsed, problems = parse_settings(_nested({name: value}))
    assert problems == [], problems
    assert parsed != Settings(), f"clperf.{name}={value!r} did not change the server's settings"


def test_enums_and_ranges_match_the_server() -> None:
    declared = _declared()
    assert declared["benchmarkPolicy"]["enum"] == list(server_settings._POLICIES)
    # The server accepts seconds in (0, 3600]; package.json must not offer values outside that.
    timeout = declared["benchmarkTimeout"]
    assert 0 < timeout.get("minimum", 0) or timeout.get("exclusiveMinimum", -1) >= 0
    assert timeout.get("maximum", float("inf")) <= 3600
    for value in (timeout["minimum"], timeout["maximum"]):
        _, problems = parse_settings({"benchmarkTimeout": value})
        assert problems == []


def test_dataclass_comments_name_declared_settings() -> None:
    # Each Settings/Features field's comment names its setting (``# clperf.name: ...``); a misspelt
    # comment misleads readers of the server.
    src = Path(server_settings.__file__).read_text()
    named = set(re.findall(r"#\s*clperf\.([\w.]+):", src))
    assert named, "no '# clperf.<name>:' comments found in server/settings.py"
    assert named <= _declared().keys(), sorted(named - _declared().keys())
    assert len(named) == len([f for f in fields(Settings) if f.name != "features"]) + len(fields(Features))
