"""The rules of ``clperf check``'s SARIF log: what each means, its help, and where that help lives.

Finding rules take their full description and help from their page, ``docs/rules/<rule>.md``. Compile
diagnostics become one rule per clang diagnostic group (the ``-W`` flag clang names with the message),
linked to clang's Diagnostics Reference; an error without a group is ``clang-diagnostic-error``. clperf's
own messages about the input (a refused build option, a timeout) are ``clperf-<code>``, each with its
section of ``docs/rules/compile.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from clperf.core.compile import Diagnostic
from clperf.core.rulepages import rule_page, rule_page_text
from clperf.predictor.analysis.findings import RULES

CLANG_REFERENCE = "https://clang.llvm.org/docs/DiagnosticsReference.html"
COMPILE_PAGE = "compile"  # docs/rules/compile.md: clang's and clperf's messages about the file
_SHORT = {
    "uncoalesced-access": "Strided or indirect global memory access along work-item dimension 0",
    "local-cache-candidate": "Global data read by neighbouring work-items: stage it in __local memory",
    "unroll-candidate": "Small loop with a constant trip count and no #pragma unroll",
    "barrier-divergence": "barrier() under work-item dependent control flow",
}
_LEVEL = {"uncoalesced-access": "warning", "local-cache-candidate": "note", "unroll-candidate": "note",
          "barrier-divergence": "error"}
# clperf's own diagnostic codes (predictor/analysis/pipeline.py, clperf/core/compile.py): short text, level
CLPERF_CODES = {
    "build-options": ("A build option was refused, or a build config was ignored", "error"),
    "io": ("The file could not be read", "error"),
    "encoding": ("The file is not valid UTF-8", "warning"),
    "too-large": ("The file is too large to analyse", "error"),
    "no-kernels": ("The file has no __kernel function", "note"),
    "parse": ("The tolerant parser failed on the file", "warning"),
    "clang": ("clang could not be run", "error"),
    "timeout": ("clang did not finish in time", "error"),
    "memory-limit": ("clang went over its memory limit", "error"),
    "analysis": ("The analysis of the compiled file failed", "error"),
}
TOOL_FAILURES = frozenset({"io", "clang", "timeout", "memory-limit", "analysis"})  # clperf did not finish
_ERROR_CODES = ("compile-error", "Werror", "error")  # clang errors with no group of their own
_OPTIONS = "clperf.toml [build] options, a // clperf-build: line, compile_flags.txt or --build-options"


@dataclass(frozen=True)
class Rule:
    """One SARIF ``reportingDescriptor``."""

    id: str
    short: str  # one line, shown in alert lists
    full: str  # a paragraph, shown at the top of an alert
    help_text: str
    help_markdown: str
    help_uri: str  # "" when the page cannot be found
    level: str  # the default level: error, warning or note
    tags: tuple[str, ...]

    def to_sarif(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", self.id) if w),
            "shortDescription": {"text": self.short},
            "fullDescription": {"text": self.full},
            "help": {"text": self.help_text, "markdown": self.help_markdown},
            **({"helpUri": self.help_uri} if self.help_uri else {}),
            "defaultConfiguration": {"level": self.level},
            # clang's own messages are certain; a finding is a static judgement on the code
            "properties": {"tags": list(self.tags),
                           "precision": "high" if "compiler" in self.tags else "medium"},
        }


# ---- the rule pages ----------------------------------------------------------------------------------

def section(markdown: str, heading: str) -> str:
    """The body of the ``##``/``###`` section called ``heading`` ("" when there is none)."""
    lines = markdown.split("\n")
    for i, line in enumerate(lines):
        m = re.fullmatch(r"(#{2,3}) (.+)", line.strip())
        if m and m.group(2).strip() == heading:
            depth = len(m.group(1))
            body = []
            for rest in lines[i + 1:]:
                h = re.match(r"(#+) ", rest)
                if h and len(h.group(1)) <= depth:
                    break
                body.append(rest)
            return "\n".join(body).strip()
    return ""


def plain(markdown: str) -> str:
    """Markdown as text a person reads without a renderer: no emphasis marks, links as ``text (url)``."""
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1 (\2)", markdown)
    text = re.sub(r"^#+ ", "", text.replace("**", "").replace("`", ""), flags=re.M)
    return text.strip()


def _paragraph(markdown: str) -> str:
    """The first paragraph as one line of text."""
    first = markdown.strip().split("\n\n")[0]
    return " ".join(plain(first).split())


def _page_uri(rule: str, anchor: str = "") -> str:
    """The page's file URI (in the checkout or the installed package), "" when it has none."""
    page = rule_page(rule)
    if page is None:
        return ""
    return f"{page.as_uri()}#{anchor}" if anchor else page.as_uri()


# ---- finding rules -----------------------------------------------------------------------------------

@cache
def _finding_rule(rule: str) -> Rule:
    page = rule_page_text(rule) or f"# {rule}\n\n{_SHORT[rule]}\n"
    full = _paragraph(section(page, "What")) or _SHORT[rule]
    return Rule(rule, _SHORT[rule], full, plain(page), page, _page_uri(rule), _LEVEL[rule],
                ("performance", "opencl"))


def finding_rules() -> list[Rule]:
    """The finding rules in ``RULES`` order (results name them by that index)."""
    return [_finding_rule(r) for r in RULES]


# ---- compile diagnostics -----------------------------------------------------------------------------

def _anchor(flag: str) -> str:
    """The anchor clang's Diagnostics Reference gives ``-W<group>`` (Sphinx: lower case, runs of other
    characters as one hyphen)."""
    return re.sub(r"[^a-z0-9]+", "-", flag.lower()).strip("-")


def _group_rule(group: str) -> Rule:
    uri = f"{CLANG_REFERENCE}#{_anchor('W' + group)}"
    full = (f"clang reports this warning under its diagnostic group -W{group} when it compiles the file as "
            "OpenCL C; each result's message says what it found. The file is still analysed.")
    text = (f"clang's -W{group} warning: {uri} describes the group. Fix the code, or turn the group off "
            f"with -Wno-{group} in the build options ({_OPTIONS}).")
    page = _page_uri(COMPILE_PAGE, "clang-warnings")
    see = f"; see [compile]({page})" if page else ""
    markdown = (f"clang's [`-W{group}`]({uri}) warning. Fix the code, or turn the group off with "
                f"`-Wno-{group}` in the build options ({_OPTIONS}{see}).")
    return Rule(f"clang-diagnostic-{group}", f"clang warning -W{group}", full, text, markdown, uri,
                "warning", ("compiler", "opencl"))


def _compile_page_rule(rule_id: str, short: str, full: str, heading: str, level: str) -> Rule:
    """A rule whose help is a section of docs/rules/compile.md."""
    page = rule_page_text(COMPILE_PAGE) or ""
    body = section(page, heading) or short
    anchor = re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
    return Rule(rule_id, short, full or _paragraph(body), plain(body), body, _page_uri(COMPILE_PAGE, anchor),
                level, ("compiler", "opencl"))


@cache
def _rule_for(code: str, source: str) -> Rule:
    if code in CLPERF_CODES:
        short, level = CLPERF_CODES[code]
        return _compile_page_rule(f"clperf-{code}", short, "", code, level)
    if code in _ERROR_CODES:
        return _compile_page_rule(
            "clang-diagnostic-error", "clang rejected the file",
            "clang could not compile the file as OpenCL C, so clperf has no IR for it: no accesses, loops, "
            "findings or estimates, only the kernels' names and parameters from the tolerant parser.",
            "clang errors", "error")
    if code.startswith("W") and len(code) > 1:
        return _group_rule(code[1:])
    if source == "clang":  # a warning or remark that clang gave no group
        return _compile_page_rule(f"clang-diagnostic-{code}", f"clang {code} with no diagnostic group",
                                  f"A {code} from clang that names no -W group; the message says what it is.",
                                  "clang warnings", "note" if code == "remark" else "warning")
    return _compile_page_rule(f"clperf-{code}", f"clperf: {code}",
                              f"A message from clperf about the input ({code}): the message says what.",
                              "clperf's own messages", "warning")


def diagnostic_rule(d: Diagnostic) -> Rule:
    """The rule a compile diagnostic is reported under."""
    return _rule_for(d.code, d.source)
