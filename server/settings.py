"""Typed settings, read from ``workspace/configuration`` (section ``clperf``) or initializationOptions.

Clients send whatever the user typed: a number where a string belongs, a misspelt scenario flag. Each
field is checked on its own; a bad one is reported in plain words and its default used, so one typo never
turns the rest of the settings (or the server) off. The names mirror the VS Code extension's package.json.

Over LSP the server cannot tell the user's settings from a workspace's. ``poclCode`` (runs kernels),
``measurePeaks`` (runs clperf's own peak kernels) and ``cacheDirectory`` (where clperf writes) are
therefore declared machine settings in package.json: VS Code ignores them in a workspace's
``.vscode/settings.json`` and never sends them from there.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from clperf.core.errors import ScenarioError
from clperf.core.scenario import ScenarioSpec, parse_flags

SECTION = "clperf"


@dataclass(frozen=True)
class Features:
    """Which views the server produces; each can be switched off without restarting the server."""

    code_lens: bool = True  # clperf.features.codeLens: estimate + Benchmark lens per kernel
    inlay_hints: bool = True  # clperf.features.inlayHints: traffic share at loops, stride at accesses
    diagnostics: bool = True  # clperf.features.diagnostics: compile errors and findings
    hover: bool = True  # clperf.features.hover: breakdown on kernel names and accesses


@dataclass(frozen=True)
class Settings:
    device: str = ""  # clperf.device: part of a device/platform name; "" = best local device, else a profile
    build_options: str = ""  # clperf.buildOptions: extra clang options, e.g. "-DBLOCK=16 -I inc"
    default_scenario: str = ""  # clperf.defaultScenario: scenario flags for kernels without a directive
    cache_directory: str = ""  # clperf.cacheDirectory: "" = clperf's per-user state directory (user's only)
    docs_base_url: str = ""  # clperf.docsBaseUrl: where rule docs live; "" = file:// URI of docs/rules
    benchmark_policy: str = "interactive"  # clperf.benchmarkPolicy: interactive | quick | sweep (repetitions)
    benchmark_timeout_s: float = 60.0  # clperf.benchmarkTimeout: seconds before a kernel run is stopped
    pocl_code: bool = False  # clperf.poclCode: count PoCL's code (runs each kernel once; user's only)
    measure_peaks: bool = True  # clperf.measurePeaks: measure a local device's missing peaks on first use
    features: Features = field(default_factory=Features)

    @property
    def scenario_spec(self) -> ScenarioSpec:
        return parse_flags(self.default_scenario) if self.default_scenario.strip() else ScenarioSpec()


_STRINGS = {"device": "device", "buildOptions": "build_options", "defaultScenario": "default_scenario",
            "cacheDirectory": "cache_directory", "docsBaseUrl": "docs_base_url"}
_POLICIES = ("interactive", "quick", "sweep")
_FEATURES = {"codeLens": "code_lens", "inlayHints": "inlay_hints", "diagnostics": "diagnostics",
             "hover": "hover"}


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Settings from the client's JSON value, and one message per option that could not be used."""
    problems: list[str] = []
    if raw is None:
        return Settings(), problems
    if not isinstance(raw, dict):
        return Settings(), [f"{SECTION}: expected an object of settings, got {type(raw).__name__}; "
                            "using defaults"]
    values: dict[str, Any] = {}
    for key, attr in _STRINGS.items():
        v = raw.get(key)
        if v is None:
            continue
        if not isinstance(v, str):
            problems.append(f"{SECTION}.{key} must be a string, got {v!r}; using the default")
            continue
        values[attr] = v
    policy = raw.get("benchmarkPolicy")
    if policy is not None:
        if policy in _POLICIES:
            values["benchmark_policy"] = policy
        else:
            problems.append(f"{SECTION}.benchmarkPolicy must be one of {', '.join(_POLICIES)}, "
                            f"got {policy!r}")
    timeout = raw.get("benchmarkTimeout")
    if timeout is not None:
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600:
            values["benchmark_timeout_s"] = float(timeout)
        else:
            problems.append(f"{SECTION}.benchmarkTimeout must be seconds in (0, 3600], got {timeout!r}")
    switches = (("poclCode", "pocl_code", raw.get("poclCode"), "false"),
                ("measurePeaks", "measure_peaks", raw.get("measurePeaks"), "true"))
    for key, attr, flag, default in switches:
        if flag is None:
            continue
        if isinstance(flag, bool):
            values[attr] = flag
        else:
            problems.append(f"{SECTION}.{key} must be true or false, got {flag!r}; using {default}")
    problems += _check_text_options(values)
    flags: dict[str, bool] = {}
    feats = raw.get("features")
    if feats is not None and not isinstance(feats, dict):
        problems.append(f"{SECTION}.features must be an object, got {feats!r}; all features on")
        feats = None
    for key, attr in _FEATURES.items():
        v = (feats or {}).get(key)
        if v is None:
            continue
        if not isinstance(v, bool):
            problems.append(f"{SECTION}.features.{key} must be true or false, got {v!r}; using true")
            continue
        flags[attr] = v
    return Settings(**values, features=Features(**flags)), problems


def _check_text_options(values: dict[str, Any]) -> list[str]:
    """Drop (and report) string options whose content cannot be used: bad flags, bad quoting."""
    problems: list[str] = []
    if "default_scenario" in values:
        try:
            parse_flags(values["default_scenario"])
        except ScenarioError as e:
            problems.append(f"{SECTION}.defaultScenario: {e}; using the documented defaults")
            del values["default_scenario"]
    if "build_options" in values:
        try:
            shlex.split(values["build_options"])
        except ValueError as e:
            problems.append(f"{SECTION}.buildOptions: cannot split {values['build_options']!r}: {e}; ignored")
            del values["build_options"]
    return problems
