"""The scenario-directive quick fix as a plain text edit (no protocol types). Optimisation rewrites
live in ``clperf.predictor.rewrites``.

* ``directive_edit``: a ``// clperf:`` scenario directive above a kernel that runs on the defaults, written
  with the values the estimate currently uses so the user starts from what they see and edits from there.
"""

from __future__ import annotations

from clperf.core.frontend import Kernel
from clperf.core.records import Scenario
from clperf.core.scenario import ScenarioSpec
from clperf.server.views import Edit, Span


def scenario_flags(scenario: Scenario, kernel: Kernel) -> str:
    """The resolved scenario as directive flags: launch sizes plus every argument value."""
    args = {name: (f"{v:g}" if isinstance(v, float) else str(v)) for name, v in scenario.args.items()}
    spec = ScenarioSpec(
        global_size=tuple(str(g) for g in scenario.global_size),
        local_size=tuple(str(x) for x in scenario.local_size) if scenario.local_size else None,
        args={p.name: args[p.name] for p in kernel.params if p.name in args},
        fills=dict(scenario.fills),
    )
    return spec.to_flags()


def directive_edit(kernel: Kernel, scenario: Scenario) -> Edit:
    return Edit(Span.at(kernel.header_line, 1), f"// clperf: {scenario_flags(scenario, kernel)}\n")
