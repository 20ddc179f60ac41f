"""``clperf fix FILE --kernel K --rule R [--diff|--apply]``: the verified quick fixes on the command line.

Lists the rewrites the rule offers for the kernel (each with its predicted speedup, or the reason it is
disabled), then shows the chosen one as a unified diff (default) or writes it into the file (``--apply``).
``--rule work-group`` prints the work-group size recommendation and, with ``--apply``, writes it into the
kernel's ``// clperf:`` directive. Exit status 1 when there is nothing that can be applied.

``--apply`` never loses the file (``clperf.core.sourcefile``):
the change is written in the file's own encoding,
BOM and line endings, to a temp file in the same folder that is renamed over it, and only if the file
still holds the bytes that were read; on any failure the original is left as it was.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path

from clperf.api import Workspace, select_device
from clperf.cli import add_build_options, add_json_flag, add_scenario_flags, scenario_from_args
from clperf.core.errors import InputError
from clperf.core.records import Device
from clperf.core.sourcefile import read_source, write_atomic
from clperf.predictor import rewrites

RULES = ("unroll-candidate", "local-cache-candidate", "work-group")
ALIASES = {"unroll": "unroll-candidate", "local": "local-cache-candidate",
           "local-cache": "local-cache-candidate", "wg": "work-group", "work-group-size": "work-group"}


def register(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    p = sub.add_parser(
        "fix", help="apply a verified optimisation rewrite (unroll, __local caching, work-group size)",
        description="Show or apply the rewrites clperf offers for one kernel and rule, with their "
                    "predicted speedups. Rules: unroll-candidate (alias unroll), local-cache-candidate "
                    "(alias local), work-group.")
    p.add_argument("file", type=Path, help="an OpenCL C file")
    p.add_argument("--kernel", "-k", help="kernel name (default: the only kernel in the file)")
    p.add_argument("--rule", "-r", required=True,
                   help="unroll-candidate | local-cache-candidate | work-group")
    p.add_argument("--line", type=int, help="the finding's line (when the rule fires more than once)")
    p.add_argument("--param", help="for local-cache-candidate: the buffer to cache")
    p.add_argument("--variant", type=int, default=1,
                   help="which of the listed rewrites to show or apply (1-based, default 1)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--diff", action="store_true", help="print the change as a unified diff (default)")
    mode.add_argument("--apply", action="store_true", help="write the change into FILE")
    p.add_argument("--device", "-d", help="device for the prediction (as in clperf predict)")
    p.add_argument("--no-predict", action="store_true", help="skip the speedup prediction")
    add_scenario_flags(p)
    add_build_options(p)
    add_json_flag(p)
    p.set_defaults(run=run_fix)


def _device(text: str | None) -> Device:
    if text and text.strip().lower() == "pocl":  # the nickname `clperf bench` accepts
        text = "Portable Computing Language"
    return select_device(text)


def run_fix(ns: argparse.Namespace) -> int:

    rule = ALIASES.get(ns.rule, ns.rule)
    if rule not in RULES:
        raise InputError(f"unknown rule {ns.rule!r}; use one of {', '.join(RULES)}")
    path: Path = ns.file
    source = read_source(path)
    text = source.text
    ws = Workspace(build_options=ns.build_options, run_kernels=True)  # the user asked for this fix
    report = ws.analyze(text, path)
    names = [k.name for k in report.kernels]
    kernel = ns.kernel or (names[0] if len(names) == 1 else None)
    if kernel is None:
        raise InputError(f"{path} has {len(names)} kernels ({', '.join(names) or 'none'}): "
                         "choose one with --kernel")
    k = report.kernel(kernel)
    if k is None or not k.analyzed:
        errors = [d for d in report.diagnostics if d.severity == "error"]
        why = f": {errors[0].line}:{errors[0].column}: {errors[0].message}" if errors else ""
        raise InputError(f"kernel {kernel!r} in {path} could not be analysed{why}")
    device = None if ns.no_predict else _device(ns.device)
    scenario = ws.scenario_of(text, path, k, scenario_from_args(ns)).scenario
    if rule == "work-group":
        findings: list = [{"rule": rule, "kernel": kernel}]
    else:
        findings = [f for f in report.findings if f.kernel == kernel and f.rule == rule
                    and (ns.line is None or f.line == ns.line or f.data.get("loop_line") == ns.line)
                    and (ns.param is None or f.data.get("param") == ns.param)]
    if not findings:
        print(f"{path}: no {rule} finding for kernel {kernel}", file=sys.stderr)
        return 1
    found = []
    for f in findings:
        found += ws.fixes(text, report, f, path=path, device=device, scenario=scenario,
                          predict=not ns.no_predict)
    if not 1 <= ns.variant <= max(1, len(found)):
        raise InputError(f"--variant {ns.variant}: there are {len(found)} rewrites")
    chosen = found[ns.variant - 1] if found else None
    ok = chosen is not None and chosen.enabled and bool(chosen.edits)
    new_text = rewrites.apply(text, chosen) if ok and chosen is not None else None
    diff = "".join(difflib.unified_diff(text.splitlines(True), new_text.splitlines(True), str(path),
                                        f"{path} (fixed)")) if new_text is not None else ""
    if ns.json:
        json.dump({"file": str(path), "kernel": kernel, "rule": rule,
                   "rewrites": [r.to_json() for r in found],
                   "chosen": ns.variant, "diff": diff, "applied": bool(ns.apply and new_text)}, sys.stdout,
                  indent=1)
        print()
    else:
        for i, r in enumerate(found, 1):
            mark = "*" if i == ns.variant else " "
            state = f"disabled: {r.disabled_reason}" if r.disabled_reason else (r.prediction or "")
            print(f"{mark}{i}. {r.title}" + (f"\n     {state}" if state else ""))
            for note in r.notes:
                print(f"     note: {note}")
        if diff and not ns.apply:
            print()
            sys.stdout.write(diff)
    if new_text is None:
        return 1
    if ns.apply:
        # the file's own encoding and line endings, and only if nobody changed it while the fix was made
        write_atomic(path, source.encode(new_text), source.sha256)
        if not ns.json:
            print(f"applied variant {ns.variant} to {path}")
    return 0
