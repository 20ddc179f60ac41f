"""Turn a corpus kernel's directive and sweep spec into concrete scenarios.

Used by the corpus checks (smallest and largest launch of every kernel) and available to sweeps. The rules
are those written in ``sweepspec``: every ``NAME=LO..HI`` sets the ``--arg NAME`` expression to a power of
two, the directive's other expressions follow, and ``local=LO..HI`` sets dimension 0 of the local size.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import lru_cache

from clperf.benchmark.corpus import CorpusKernel
from clperf.core.errors import ScenarioError
from clperf.core.frontend import Kernel, parse
from clperf.core.records import Scenario
from clperf.core.scenario import ScenarioSpec, evaluate, parse_flags, resolve


def front_kernel(ck: CorpusKernel) -> Kernel:
    return _front_kernel(ck.source, ck.name)


@lru_cache(maxsize=256)
def _front_kernel(source: str, name: str) -> Kernel:
    for k in parse(source):
        if k.name == name:
            return k
    raise ScenarioError(f"kernel {name!r} not found in its source")


def scenario_at(ck: CorpusKernel, values: Mapping[str, int], local0: int | None = None) -> Scenario:
    """The scenario with the sweep's arguments set to ``values`` and dimension 0 of local set to ``local0``.

    With ``local0`` the directive's local size of dimension 0 is replaced before the divisibility check,
    so a directive's ``--local 64`` does not rule out a small global size that the sweep pairs with 16.
    """
    k = front_kernel(ck)
    spec = parse_flags(ck.directive)
    args = {**spec.args, **{n: str(v) for n, v in values.items()}}
    if local0 is None:
        spec = ScenarioSpec(spec.global_size, spec.local_size, args, spec.fills)
        return resolve(spec, k.params, k.dims_used)
    sc = resolve(ScenarioSpec(spec.global_size, None, args, spec.fills), k.params, k.dims_used)
    rest = tuple(int(evaluate(e, sc.args)) for e in spec.local_size[1:]) if spec.local_size else ()
    local = (local0, *rest) + (1,) * (len(sc.global_size) - 1 - len(rest))
    if len(local) != len(sc.global_size) or any(g % lo for g, lo in zip(sc.global_size, local, strict=False)):
        raise ScenarioError(f"global size {sc.global_size} is not a multiple of local size {local}")
    return replace(sc, local_size=local)


def _locals_for(ck: CorpusKernel, values: Mapping[str, int]) -> list[int | None]:
    """The local sizes (dimension 0) the sweep pairs with ``values``; ``[None]`` keeps the directive's."""
    rng = ck.sweep.local
    if rng is None:
        return [None]
    k = front_kernel(ck)
    spec = parse_flags(ck.directive)
    args = {**spec.args, **{n: str(v) for n, v in values.items()}}
    g0 = resolve(ScenarioSpec(spec.global_size, None, args, spec.fills), k.params, k.dims_used).global_size[0]
    return [v for v in rng.values() if g0 % v == 0]


def corners(ck: CorpusKernel) -> list[Scenario]:
    """Smallest and largest sizes, each with the smallest and largest valid local size (up to 4)."""
    out: list[Scenario] = []
    for pick in (min, max):
        values = {r.name: pick(r.values()) for r in ck.sweep.args}
        locals_ = _locals_for(ck, values)
        if not locals_:
            raise ScenarioError(f"no local size in {ck.sweep.local} divides the global size at {values}")
        for loc in dict.fromkeys((locals_[0], locals_[-1])):
            out.append(scenario_at(ck, values, loc))
    return out


def all_points(ck: CorpusKernel) -> Iterator[Scenario]:
    """Every combination the sweep spec allows (the full cartesian product)."""
    ranges = ck.sweep.args
    for combo in itertools.product(*(r.values() for r in ranges)):
        values = {r.name: v for r, v in zip(ranges, combo, strict=False)}
        for loc in _locals_for(ck, values):
            yield scenario_at(ck, values, loc)
