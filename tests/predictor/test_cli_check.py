"""``clperf analyze`` and ``clperf check``: output formats, SARIF 2.1.0 structure, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from clperf.cli import main

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples" / "stencil.cl"

# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json, OASIS) that clperf's output uses, written
# out by hand: required properties, enums and types as the standard gives them. No network at test time.
_REGION = {"type": "object", "properties": {
    "startLine": {"type": "integer", "minimum": 1}, "startColumn": {"type": "integer", "minimum": 1},
    "endLine": {"type": "integer", "minimum": 1}, "endColumn": {"type": "integer", "minimum": 1}}}
_MESSAGE = {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
            "properties": {"text": {"type": "string"}}}
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {"type": "array", "items": {
            "type": "object", "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                   "rules": {"type": "array", "items": {
                                       "type": "object", "required": ["id"],
                                       "properties": {"id": {"type": "string"},
                                                      "shortDescription": _MESSAGE}}}}}}},
                "artifacts": {"type": "array", "items": {"type": "object", "properties": {
                    "location": {"type": "object", "properties": {"uri": {"type": "string"}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"}, "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": {"enum": ["none", "note", "warning", "error"]},
                        "message": _MESSAGE,
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {"type": "object", "properties": {
                                "artifactLocation": {"type": "object", "properties": {
                                    "uri": {"type": "string"}}},
                                "region": _REGION}}}}},
                        "properties": {"type": "object"}}}}}}},
    },
}


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(args)
    return rc, capsys.readouterr().out


def test_analyze_text_shows_each_kernel(capsys):
    rc, out = run(["analyze", str(STENCIL)], capsys)
    assert rc == 0
    for name in ("blur5", "column_sum", "fir8"):
        assert f"\n{name}  (line" in out
    assert "stride rows" in out and "runs rows" in out and "runs 8" in out
    assert "[uncoalesced-access]" in out and "[unroll-candidate]" in out


def test_analyze_json_is_one_object(capsys):
    rc, out = run(["analyze", str(STENCIL), "--json"], capsys)
    d = json.loads(out)
    assert rc == 0 and d["file"].endswith("stencil.cl")
    col = next(k for k in d["kernels"] if k["name"] == "column_sum")
    assert col["loops"] == [{"line": 20, "column": 5, "depth": 1, "trip_count": None, "trip_expr": "rows",
                             "unroll": None, "varies": False}]


def test_analyze_exit_1_on_compile_error(tmp_path: Path, capsys):
    p = tmp_path / "bad.cl"
    p.write_text("kernel void k(global float *a) { a[0] = NOPE; }\n")
    rc, out = run(["analyze", str(p)], capsys)
    assert rc == 1 and "NOPE" in out


def test_check_fail_on_levels(capsys):
    # stencil.cl has one warning (a strided read) and some information findings, no errors
    assert run(["check", str(STENCIL), "--fail-on", "error"], capsys)[0] == 0
    assert run(["check", str(STENCIL)], capsys)[0] == 1  # default: warning
    assert run(["check", str(STENCIL), "--fail-on", "information"], capsys)[0] == 1
    assert run(["check", str(STENCIL), "--fail-on", "never"], capsys)[0] == 0


def test_check_text_is_compiler_style(capsys):
    rc, out = run(["check", str(STENCIL), "--fail-on", "never"], capsys)
    assert f"{STENCIL}:21:16: warning: " in out and out.rstrip().endswith("0 compile errors")


def test_check_folder_and_json(tmp_path: Path, capsys):
    (tmp_path / "a.cl").write_text("kernel void a(global float *x) { x[get_global_id(0) * 2] = 0; }\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.cl").write_text("kernel void b(global float *x) { x[get_global_id(0)] = 0; }\n")
    rc, out = run(["check", str(tmp_path), "--format", "json"], capsys)
    files = json.loads(out)["files"]
    assert rc == 1 and sorted(Path(f["file"]).name for f in files) == ["a.cl", "b.cl"]


def test_check_sarif_is_valid(tmp_path: Path, capsys):
    bad = tmp_path / "bad.cl"
    bad.write_text("kernel void k(global float *a) {\n  a[0] = NOPE;\n}\n")
    rc, out = run(["check", str(STENCIL), str(bad), "--format", "sarif"], capsys)
    sarif = json.loads(out)
    jsonschema.validate(sarif, SARIF_SUBSET)
    results = sarif["runs"][0]["results"]
    rules = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert {r["ruleId"] for r in results} >= {"uncoalesced-access", "unroll-candidate", "compile"}
    for r in results:
        assert rules[r["ruleIndex"]] == r["ruleId"]
    compile_error = next(r for r in results if r["ruleId"] == "compile")
    assert compile_error["level"] == "error"
    assert compile_error["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert rc == 1


def test_check_writes_output_file(tmp_path: Path, capsys):
    out = tmp_path / "r.sarif"
    rc, _ = run(["check", str(STENCIL), "--format", "sarif", "-o", str(out), "--fail-on", "never"], capsys)
    assert rc == 0 and json.loads(out.read_text())["version"] == "2.1.0"


def test_check_missing_path_is_usage_error(tmp_path: Path, capsys):
    r = subprocess.run([sys.executable, "-m", "clperf", "check", str(tmp_path / "missing.cl")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "no such file" in r.stderr


def test_check_help_documents_exit_status(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "exit status" in out and "--fail-on" in out and "default: warning" in out
