"""The OpenCL TextMate grammar (vscode-client/syntaxes/opencl.tmLanguage.json), tokenized by VS Code's own
engine (vscode-textmate + oniguruma from the code-server install): each construct gets the scope that
themes colour. Expected scopes are written by hand next to the tokens."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).parent
GRAMMAR = HERE.parents[1] / "vscode-client" / "syntaxes" / "opencl.tmLanguage.json"

EXPECTED = [  # (line, token, a scope it must carry)
    (1, "pragma", "keyword.control.directive.pragma.opencl"),
    (1, "cl_khr_fp64", "support.constant.extension.opencl"),
    (2, "TILE", "entity.name.function.preprocessor.opencl"),
    (3, "clperf:", "keyword.other.directive.clperf.opencl"),
    (3, "--global", "variable.parameter.flag.clperf.opencl"),
    (4, "__kernel", "storage.modifier.function.kernel.opencl"),
    (4, "reqd_work_group_size", "support.other.attribute.opencl"),
    (4, "scale", "entity.name.function.kernel.opencl"),
    (4, "__global", "storage.modifier.address-space.opencl"),
    (4, "float4", "storage.type.vector.opencl"),
    (4, "restrict", "storage.modifier.opencl"),
    (4, "__local", "storage.modifier.address-space.opencl"),
    (5, "__read_only", "storage.modifier.access.opencl"),
    (5, "image2d_t", "storage.type.opaque.opencl"),
    (5, "uint", "storage.type.builtin.opencl"),
    (7, "get_global_id", "support.function.work-item.opencl"),
    (8, "1.5f", "constant.numeric.float.opencl"),
    (9, "barrier", "support.function.synchronization.opencl"),
    (9, "CLK_LOCAL_MEM_FENCE", "support.constant.opencl"),
    (10, "unroll", "entity.name.tag.pragma.opencl"),
    (11, "for", "keyword.control.opencl"),
    (12, "mad", "support.function.math.opencl"),
    (12, "native_exp", "support.function.math.opencl"),
    (12, "vload4", "support.function.vector.opencl"),
    (12, "0x1Fu", "constant.numeric.hex.opencl"),
    (13, "atomic_add", "support.function.atomic.opencl"),
    (14, "block", "comment.block.opencl"),
    (14, "half8", "storage.type.vector.opencl"),
]


@pytest.fixture(scope="module")
def tokens(editor_tools: Any) -> list[dict[str, Any]]:
    cmd = ["node", str(HERE / "tokenize.cjs"), str(editor_tools.vscode_modules), str(GRAMMAR),
           "source.opencl", str(HERE / "data" / "grammar.cl")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize(("line", "text", "scope"), EXPECTED)
def test_token_scope(tokens: list[dict[str, Any]], line: int, text: str, scope: str) -> None:
    found = [t["scopes"] for t in tokens if t["line"] == line and t["text"] == text]
    assert found, f"no token {text!r} on line {line}: {[t['text'] for t in tokens if t['line'] == line]}"
    assert any(scope in s for s in found), f"{text!r} on line {line} has {found}, expected {scope}"


def test_plain_identifiers_are_not_keywords(tokens: list[dict[str, Any]]) -> None:
    assert all(not t["scopes"] for t in tokens if t["text"] in {"v", "tmp", "i"} and t["line"] in (7, 8))
