"""``clperf analyze`` and ``clperf check``: output formats, SARIF 2.1.0 structure, exit statuses."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import jsonschema
import pytest

from clperf.cli import main
from clperf.cli.sarif import FINGERPRINT, Invocation, to_sarif
from clperf.predictor.analysis.pipeline import analyze_file

ROOT = Path(__file__).resolve().parents[2]
STENCIL = ROOT / "examples" / "stencil.cl"

# The official SARIF 2.1.0 schema (OASIS), vendored: data/sarif-schema-2.1.0.README.md says where from.
SARIF_SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("uri")
def _is_uri(value: object) -> bool:  # absolute, as RFC 3986 wants a "uri" (jsonschema needs rfc3987 for it)
    return not isinstance(value, str) or (bool(urlsplit(value).scheme) and " " not in value)


@_FORMATS.checks("uri-reference")
def _is_uri_reference(value: object) -> bool:
    return not isinstance(value, str) or " " not in value


@_FORMATS.checks("date-time", raises=ValueError)
def _is_date_time(value: object) -> bool:
    return not isinstance(value, str) or datetime.fromisoformat(value.replace("Z", "+00:00")) is not None


def validate_sarif(log: dict) -> None:
    """The official schema, then what GitHub code scanning needs on top of it to show and track alerts."""
    jsonschema.Draft4Validator(SARIF_SCHEMA, format_checker=_FORMATS).validate(log)
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "clperf" and driver["version"] and driver["semanticVersion"]
    assert urlsplit(driver["informationUri"]).scheme
    ids = [r["id"] for r in driver["rules"]]
    assert len(ids) == len(set(ids))
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"], rule["id"]
        assert rule["help"]["text"] and rule["help"]["markdown"], rule["id"]
        assert urlsplit(rule["helpUri"]).scheme in ("https", "file"), rule["id"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    (inv,) = run["invocations"]
    assert isinstance(inv["executionSuccessful"], bool) and inv["commandLine"].startswith("clperf ")
    assert inv["startTimeUtc"] <= inv["endTimeUtc"]
    for r in run["results"]:
        assert ids[r["ruleIndex"]] == r["ruleId"] and r["message"]["text"]
        assert 1 <= len(r["locations"]) <= 10  # GitHub keeps at most 10 locations of a result
        loc = r["locations"][0]["physicalLocation"]
        art = loc["artifactLocation"]
        assert loc["region"]["startLine"] >= 1
        if art.get("uriBaseId") == "%SRCROOT%":  # relative to the repository root, as the checkout sees it
            assert not urlsplit(art["uri"]).scheme and not art["uri"].startswith("/")
        assert run["artifacts"][art["index"]]["location"]["uri"] == art["uri"]
        (fp,) = r["partialFingerprints"].values()
        assert fp


def sarif_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    main(["check", *args, "--format", "sarif", "--fail-on", "never"])
    log = json.loads(capsys.readouterr().out)
    validate_sarif(log)
    return log


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
    validate_sarif(sarif)
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"uncoalesced-access", "unroll-candidate",
                                              "clang-diagnostic-error"}
    compile_error = next(r for r in results if r["ruleId"] == "clang-diagnostic-error")
    assert compile_error["level"] == "error" and "NOPE" in compile_error["message"]["text"]
    assert compile_error["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    assert rc == 1


def test_sarif_finding_rules_carry_their_page(capsys):
    rules = {r["id"]: r for r in sarif_of([str(STENCIL)], capsys)["runs"][0]["tool"]["driver"]["rules"]}
    for rule in ("uncoalesced-access", "local-cache-candidate", "unroll-candidate", "barrier-divergence"):
        page = ROOT / "docs" / "rules" / f"{rule}.md"
        assert rules[rule]["help"]["markdown"] == page.read_text()
        assert Path(urlsplit(rules[rule]["helpUri"]).path) == page
        assert "`" not in rules[rule]["help"]["text"] and "**" not in rules[rule]["help"]["text"]
    # the full description is the page's "What": the coalescing page speaks of dimension 0
    assert "work-items along dimension 0" in rules["uncoalesced-access"]["fullDescription"]["text"]


def test_sarif_has_a_rule_per_clang_diagnostic_group(tmp_path: Path, capsys):
    k = tmp_path / "w.cl"
    k.write_text("kernel void k(global float *a, int n) {\n  int unused_v = 1;\n  int x;\n"
                 "  if (n = 3) a[0] = 1;\n  a[get_global_id(0)] = x;\n}\n")
    run_ = sarif_of([str(k), "--build-options", "-Wall"], capsys)["runs"][0]
    rules = {r["id"]: r for r in run_["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in run_["results"]} == {
        "clang-diagnostic-parentheses", "clang-diagnostic-unused-variable", "clang-diagnostic-uninitialized"}
    unused = rules["clang-diagnostic-unused-variable"]
    assert unused["helpUri"] == "https://clang.llvm.org/docs/DiagnosticsReference.html#wunused-variable"
    assert "-Wno-unused-variable" in unused["help"]["text"]
    assert unused["defaultConfiguration"]["level"] == "warning"


def test_sarif_clperf_messages_link_their_section(tmp_path: Path, capsys):
    k = tmp_path / "k.cl"
    k.write_text("// clperf-build: -fplugin=x.so\nkernel void k(global float *a) { a[0] = 1; }\n")
    run_ = sarif_of([str(k)], capsys)["runs"][0]
    (result,) = run_["results"]
    rule = run_["tool"]["driver"]["rules"][result["ruleIndex"]]
    assert result["ruleId"] == "clperf-build-options" and result["level"] == "error"
    page, anchor = urlsplit(rule["helpUri"]).path, urlsplit(rule["helpUri"]).fragment
    assert Path(page) == ROOT / "docs" / "rules" / "compile.md" and anchor == "build-options"
    assert "### build-options" in Path(page).read_text()
    assert "could load code or write files" in rule["help"]["markdown"]


def test_sarif_paths_are_relative_to_the_repository_root(tmp_path: Path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "k.cl").write_text("kernel void k(global float *a) { a[get_global_id(0) * 2] = 0; }\n")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    run_ = sarif_of([str(repo / "src")], capsys)["runs"][0]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
    assert run_["artifacts"][0]["location"] == {"uri": "src/k.cl", "uriBaseId": "%SRCROOT%"}
    loc = run_["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": "src/k.cl", "uriBaseId": "%SRCROOT%", "index": 0}


def test_sarif_paths_without_a_repository_are_relative_to_the_current_folder(tmp_path: Path, capsys,
                                                                             monkeypatch):
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "a.cl").write_text("kernel void a(global float *x) { x[0] = 0; }\n")
    (tmp_path / "b.cl").write_text("kernel void b(global float *x) { x[0] = 0; }\n")
    monkeypatch.chdir(tmp_path / "here")
    run_ = sarif_of(["a.cl", str(tmp_path / "b.cl")], capsys)["runs"][0]
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == (tmp_path / "here").as_uri() + "/"
    assert [a["location"] for a in run_["artifacts"]] == [
        {"uri": "a.cl", "uriBaseId": "%SRCROOT%"}, {"uri": (tmp_path / "b.cl").as_uri()}]


def _fingerprints(log: dict) -> dict[tuple[str, str], int]:
    return {(r["ruleId"], r["partialFingerprints"][FINGERPRINT]):
            r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in log["runs"][0]["results"]}


def test_sarif_fingerprints_survive_moved_lines(tmp_path: Path, capsys):
    k = tmp_path / "k.cl"
    body = ("kernel void k(global float *a, global float *b) {\n  int i = get_global_id(0);\n"
            "  for (int j = 0; j < 4; j++)\n    a[i * 4 + j] = b[i];\n}\n")
    k.write_text(body)
    before = _fingerprints(sarif_of([str(k)], capsys))
    k.write_text("// a header comment\n#define UNUSED 1\n\n" + body.replace("  int i", "\tint   i"))
    after = _fingerprints(sarif_of([str(k)], capsys))
    assert {r for r, _ in before} == {"uncoalesced-access", "unroll-candidate"}
    assert before.keys() == after.keys()  # the same alerts, three lines further down
    assert all(after[key] == line + 3 for key, line in before.items())
    k.write_text(body.replace("a[i * 4 + j] = b[i];", "a[i * 4 + j] = 2 * b[i];"))
    changed = _fingerprints(sarif_of([str(k)], capsys))
    stride = next(fp for (rule, fp) in before if rule == "uncoalesced-access")
    assert ("uncoalesced-access", stride) not in changed  # a changed line is a new alert


def test_sarif_fingerprints_count_repeated_lines(tmp_path: Path, capsys):
    k = tmp_path / "k.cl"
    line = "  { int u = 1; }\n"  # an unused variable: one warning per line
    k.write_text("kernel void k(global float *a) {\n" + line + line + "}\n"
                 "kernel void m(global float *a) {\n" + line + "}\n")
    log = sarif_of([str(k), "--build-options", "-Wunused-variable"], capsys)
    fps = [fp for (rule, fp) in _fingerprints(log) if rule == "clang-diagnostic-unused-variable"]
    assert len(fps) == len(set(fps)) == 3  # the other kernel hashes apart, a repeat in one kernel counts up
    assert sorted(fp.rsplit(":", 1)[1] for fp in fps) == ["1", "1", "2"]


def test_sarif_invocation_says_how_clperf_ran(tmp_path: Path):
    start = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    inv = Invocation(("clperf", "check", "my kernels/"), start, start + timedelta(seconds=2))
    log = to_sarif([analyze_file(STENCIL)], inv, root=ROOT)
    validate_sarif(log)
    (got,) = log["runs"][0]["invocations"]
    assert got["commandLine"] == "clperf check 'my kernels/'" == shlex.join(inv.arguments)
    assert got["startTimeUtc"] == "2026-01-02T03:04:05.000Z"
    assert got["endTimeUtc"] == "2026-01-02T03:04:07.000Z"
    assert got["executionSuccessful"] and "toolExecutionNotifications" not in got
    (tmp_path / "folder.cl").mkdir()  # a file clperf cannot read: the run did not fully succeed
    failed = to_sarif([analyze_file(tmp_path / "folder.cl"), analyze_file(STENCIL)], inv)
    validate_sarif(failed)
    (got,) = failed["runs"][0]["invocations"]
    (note,) = got["toolExecutionNotifications"]
    assert not got["executionSuccessful"] and note["descriptor"]["id"] == "clperf-io"
    assert "folder" in note["message"]["text"]


def test_check_sarif_invocation_times_the_run(capsys):
    before = datetime.now(UTC)
    (inv,) = sarif_of([str(STENCIL)], capsys)["runs"][0]["invocations"]
    start = datetime.fromisoformat(inv["startTimeUtc"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(inv["endTimeUtc"].replace("Z", "+00:00"))
    assert before - timedelta(seconds=1) <= start <= end <= datetime.now(UTC) and inv["executionSuccessful"]


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


def test_sarif_validation_fails_on_what_code_scanning_rejects(capsys):
    log = sarif_of([str(STENCIL)], capsys)
    bad_level = json.loads(json.dumps(log))
    bad_level["runs"][0]["results"][0]["level"] = "information"  # not a SARIF level
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(bad_level)
    no_description = json.loads(json.dumps(log))
    del no_description["runs"][0]["tool"]["driver"]["rules"][0]["fullDescription"]
    with pytest.raises(KeyError):
        validate_sarif(no_description)
    absolute = json.loads(json.dumps(log))
    first = absolute["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    first["artifactLocation"]["uri"] = "/abs.cl"
    with pytest.raises(AssertionError):
        validate_sarif(absolute)
