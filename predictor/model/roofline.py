"""The analytical estimate: a roofline over the device's measured peaks, with a launch-latency floor.

Why a roofline first: it needs no training data, imports nothing heavy, answers in microseconds on every
save, and is what the learned model corrects (the network predicts ``log(measured / roofline)``).

The traffic model counts what the memory system moves, not what the source asks for:

* every global access moves, per execution, its element for a contiguous access, one memory segment for an
  indirect one, ``min(|stride| x element, segment)`` for a strided one and a share of a segment for a
  uniform (broadcast) one — that is the *issued* traffic, served by the caches at best;
* what reaches DRAM is at most each buffer's size (data is reused through the caches) and at most the issued
  traffic — the *DRAM* traffic.

Time = launch floor + max(DRAM traffic at the rate the loads' bytes in flight reach (``dram_ms``), the
on-chip traffic's time (``cache_ms``), flops / peak FLOP rate, and on a GPU the work-items' own chains of
operations and loads (``chain_ms``) and the starts of its work-groups (``dispatch_ms``)).
``SEGMENT_BYTES`` and ``CACHE_FACTOR`` are modelling assumptions, not measurements: the learned correction
and per-device calibration absorb where they are wrong. A counting run's trace tells which level serves
each access; then every level is charged at the device's measured rate where its profile has them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from clperf.core.errors import ScenarioError
from clperf.core.records import Bound, Device, Scenario, type_size
from clperf.core.scenario import evaluate
from clperf.predictor.analysis import poly
from clperf.predictor.analysis.records import launch_args
from clperf.predictor.model import profiles
from clperf.predictor.model.memory import MemoryTraffic

MODEL_NAME = "roofline"
MODEL_VERSION = "20"  # also stands for the analysis behind the learned features (cache keys)

SEGMENT_BYTES = {"gpu": 32, "cpu": 64, "accelerator": 64}  # GPU sector, CPU cache line
LINE_BYTES = 128  # a GPU cache line: what a warp's request of consecutive words reaches
SIMD_LANES = {"gpu": 32, "cpu": 8, "accelerator": 16}  # work-items that share one uniform load
CACHE_FACTOR = 4.0  # cache bandwidth over DRAM bandwidth
INT_OP_COST = 2.0  # an integer op costs about two FMA-counted flops of the peak


class AccessLike(Protocol):
    param: str | None
    kind: str
    address_space: str
    pattern: str
    stride: int | None
    stride_expr: str | None
    element_size: int | None
    in_loop: bool
    wait: str | None  # how a loop's exit waits for this load (``analysis.gating``), None: it does not
    loops: tuple[int, ...]  # the enclosing loops, outermost first
    offset: Any  # bytes from the buffer's start, as a polynomial (``analysis.poly``)


class KernelLike(Protocol):
    """What the predictor reads from the analysis engineer's ``KernelReport``."""

    name: str
    params: Any
    accesses: Any
    loops: Any
    barriers: int

    def ops_for(self, args: Mapping[str, int | float]) -> Any: ...

    def access_counts_for(self, args: Mapping[str, int | float]) -> Iterable[tuple[AccessLike, float]]: ...


@dataclass(frozen=True)
class Traffic:
    """Whole-launch work of one kernel under one scenario."""

    work_items: int
    issued_bytes: float  # global traffic as the memory system sees it, segments included
    dram_bytes: float  # issued traffic capped by each buffer's size
    useful_bytes: float  # bytes the accesses ask for
    local_bytes: float
    flops: float
    int_ops: float
    barriers: float  # barrier executions per work-item
    int_divs: float = 0.0  # divisions by a run-time value (also in int_ops; the roofline adds no more)
    fp64_ops: float = 0.0  # double-precision instructions (also in flops)
    special_ops: float = 0.0  # special-function results: exp, sqrt, sin, divisions... (also in flops)
    # special_ops by cost class (``Ops.math_short``, ``math_long``, ``math_pow``) and those in double
    math_short: float = 0.0
    math_long: float = 0.0
    math_pow: float = 0.0
    math_fp64: float = 0.0
    global_atomics: float = 0.0  # executions of atomics on global memory, all work-items
    # of those, the ones whose address does not move with the work-group (``shared_atomic``): a table the
    # whole grid updates, per access (executions, lanes of a warp on one word, the table's bytes)
    shared_atomics: tuple[tuple[float, float, float], ...] = ()
    global_loads: float = 0.0  # executions of global and constant load instructions, all work-items
    longest_item: float = 1.0  # the longest work-item's chain over the mean one's (a counting run's trace)
    l2_bytes: float | None = None  # what misses L1, from a counting run's trace; None: not known (static)
    l1_wavefront_bytes: float = 0.0  # L1's clocks for the warps' requests, in bytes of lines (the same trace)
    l2_lines: float = 0.0  # the lines of the requests that miss L1 (the same trace)
    dram_lines: float = 0.0  # as many lines per sector of what misses L2
    atomic_ns: float = 0.0  # a warp's global atomic request's measured cost, by the same trace; 0: unknown
    # loads a loop's exit or next address waits for (``analysis.gating``): (how the address moves, address
    # space, bytes of the buffer it reads or -1 where unknown, executions over all work-items)
    waits: tuple[tuple[str, str, float, float], ...] = ()
    # the loops whose iterations each wait for their loads (``round_trips_ns``): per loop, its iterations
    # over all work-items and, per load of its body, the share of iterations in which a warp's request
    # reaches a line it has not read before, the share of its buffer's traffic that DRAM serves, and 1 if
    # its address hangs on a value another load gives (it waits for that one first), else 0
    rounds: tuple[tuple[float, tuple[tuple[float, float, float], ...]], ...] = ()
    groups: int = 0  # work-groups of the launch; 0: not known (no local size)
    # bytes a work-item's global loads keep in flight together (``stream_share``), and the share of the
    # DRAM traffic that loads move (stores stream at the peak); 0 and 1: no loads counted
    load_flight_bytes: float = 0.0
    load_dram_share: float = 1.0
    # the work-items' longest chains of dependent operations and all their operations, in cycles
    # (``Ops.path_cycles``, ``op_cycles``), summed over them
    path_cycles: float = 0.0
    op_cycles: float = 0.0

    @property
    def waited_global_loads(self) -> float:
        """Executions of the global and constant loads among ``waits`` (the rest of ``global_loads``
        overlap)."""
        return sum(e for _, where, _, e in self.waits if where != "local")

    @property
    def effective_bytes(self) -> float:
        """Useful bytes that reach DRAM: what bandwidth utilisation counts (wasted sector bytes do not)."""
        return min(self.useful_bytes, self.dram_bytes)


@dataclass(frozen=True)
class Roofline:
    time_ms: float
    memory_ms: float
    compute_ms: float
    floor_ms: float
    bound: Bound
    bandwidth_utilization: float  # effective bytes / time / peak bandwidth
    peaks_measured: bool
    chain_ms: float = 0.0  # the work-items' own chains of operations and loads (``chain_ms``)
    dispatch_ms: float = 0.0  # the starts of its work-groups (``dispatch_ms``)
    unhidden: float = 0.0  # the share of the smaller of memory and work added (``unhidden_share``)


def with_memory(t: Traffic, memory: MemoryTraffic) -> Traffic:
    """``t`` with the bytes a trace of the launch gives (``memory.memory_traffic``): the sectors the warps'
    requests touch as what the memory system sees, what misses L2 as DRAM traffic, __local traffic
    stretched by its bank conflicts, and the longest work-item's chain over the launch's mean: the
    longest traced work-item's loads over the mean (work-items, and whole groups, that load nothing count
    in it), or the counting run's longest group, whichever is longer (the trace holds the first groups
    only); what misses L1 and the lines the warps' requests touch (``cache_ms``); the operation counts
    stay."""
    mean = t.global_loads / t.work_items if t.work_items else 0.0
    traced = memory.longest_item_loads / mean if mean > 0 else 1.0
    return replace(t, issued_bytes=memory.l1_bytes, dram_bytes=memory.dram_bytes, l2_bytes=memory.l2_bytes,
                   l1_wavefront_bytes=memory.l1_wavefront_bytes, l2_lines=memory.l2_lines,
                   dram_lines=memory.dram_lines,
                   local_bytes=memory.local_bytes * max(1.0, memory.bank_conflict_factor),
                   longest_item=max(1.0, traced, memory.longest_group), atomic_ns=memory.atomic_ns)


def _stride_elems(access: AccessLike, args: Mapping[str, int | float]) -> float | None:
    if access.stride is not None:
        return abs(float(access.stride))
    if access.stride_expr:
        try:
            return abs(float(evaluate(access.stride_expr, args)))
        except ScenarioError:
            return None
    return None


def bytes_per_execution(access: AccessLike, args: Mapping[str, int | float], device_type: str) -> float:
    """Bytes one work-item's execution of ``access`` costs the memory system (see module doc)."""
    elem = float(access.element_size or 4)
    segment = float(SEGMENT_BYTES.get(device_type, 64))
    pattern = access.pattern
    if pattern == "contiguous":
        return elem
    if pattern == "uniform":
        return elem / SIMD_LANES.get(device_type, 8)
    if pattern == "indirect":
        return max(elem, segment)
    if pattern == "strided":
        s = _stride_elems(access, args)
        return max(elem, segment) if s is None else min(max(s, 1.0) * elem, max(elem, segment))
    return elem  # unknown: assume the source's own count


def _ops_value(ops: Any, key: str) -> float:
    if ops is None:
        return 0.0
    if isinstance(ops, Mapping):
        return float(ops.get(key, 0.0) or 0.0)
    return float(getattr(ops, key, 0.0) or 0.0)


def traffic(kernel: KernelLike, scenario: Scenario, device_type: str) -> Traffic:
    """Evaluate the kernel's symbolic counts for the scenario and apply the traffic model."""
    args = dict(scenario.args)
    n = scenario.work_items
    counting = count_args(scenario)  # loop counts may divide by a launch size (``i += get_local_size(0)``)
    ops = kernel.ops_for(counting) if hasattr(kernel, "ops_for") else getattr(kernel, "ops", None)
    flops = _ops_value(ops, "flops") * n
    int_ops = _ops_value(ops, "int_ops") * n
    int_divs = _ops_value(ops, "int_divs") * n
    fp64 = _ops_value(ops, "fp64_ops") * n
    special = _ops_value(ops, "special_ops") * n
    math = {k: _ops_value(ops, k) * n for k in ("math_short", "math_long", "math_pow", "math_fp64")}
    local = (_ops_value(ops, "local_load_bytes") + _ops_value(ops, "local_store_bytes")) * n
    ops_global = (_ops_value(ops, "global_load_bytes") + _ops_value(ops, "global_store_bytes")
                  + _ops_value(ops, "constant_load_bytes")) * n

    counts = list(kernel.access_counts_for(counting)) if hasattr(kernel, "access_counts_for") else []
    symbols = _symbol_values(scenario)
    looped: dict[int, tuple[float, list[tuple[float, str | None, bool]]]] = {}
    waited_loops = {a.loops[-1] for a, _ in counts if a.wait is not None and a.loops}
    # DRAM traffic is capped per buffer and direction: reading and writing one buffer moves it twice
    issued_by_param: dict[tuple[str | None, str], float] = {}
    useful = loads = atomics = 0.0
    shared_atomics: list[tuple[float, float, float]] = []
    waits: dict[tuple[str, str, float], float] = {}
    # loads by the innermost loop around them (-1: none): bytes of one execution of each, their traffic
    flight: dict[int, list[float]] = {}
    sizes = {p.name: p for p in getattr(kernel, "params", ())}
    for access, per_item in counts:
        wait = getattr(access, "wait", None)
        if wait is not None and access.kind == "load" and per_item:
            key = (str(wait), access.address_space, _buffer_bytes(access.param, sizes, args))
            waits[key] = waits.get(key, 0.0) + float(per_item) * n
        if access.address_space not in ("global", "constant"):
            continue
        execs = float(per_item) * n
        loads += execs if access.kind == "load" else 0.0
        loop = _round_loop(kernel, access)
        if loop is not None and execs:
            most, body = looped.get(loop, (0.0, []))
            new, dependent = _round_load(access, loop, symbols)
            looped[loop] = (max(most, execs), [*body, (new, access.param, dependent)])
        if access.kind == "atomic" and access.address_space == "global":
            atomics += execs
            shared = shared_atomic(access, _buffer_bytes(access.param, sizes, args))
            if shared is not None and execs:
                shared_atomics.append((execs, *shared))
        k = (access.param, access.kind)
        per_exec = bytes_per_execution(access, args, device_type)
        moved = execs * per_exec
        if access.kind == "load" and moved:
            region = flight.setdefault(access.loops[-1] if access.loops else -1, [0.0, 0.0])
            region[0] += per_exec
            region[1] += moved
        issued_by_param[k] = issued_by_param.get(k, 0.0) + moved
        useful += execs * float(access.element_size or 4)
    if not counts:  # no per-access counts: fall back to the per-work-item byte totals
        issued_by_param = {(None, "load"): ops_global}
        useful = ops_global
        loads = (_ops_value(ops, "global_load_bytes") + _ops_value(ops, "constant_load_bytes")) * n / 4

    dram = dram_loads = 0.0
    share: dict[str | None, float] = {}  # of each buffer's loads, the share DRAM serves
    for (param, kind), issued in issued_by_param.items():
        size = _buffer_bytes(param, sizes, args)
        moved = min(issued, size) if size >= 0 else issued
        dram += moved
        if kind == "load":
            share[param] = moved / issued if issued > 0 else 1.0
            dram_loads += moved
    issued_total = sum(issued_by_param.values())
    barriers = float(getattr(kernel, "barriers", 0) or 0)
    rounds = tuple((execs, tuple((new, share.get(param, 1.0), float(dep)) for new, param, dep in body))
                   for loop, (execs, body) in sorted(looped.items()) if loop not in waited_loops)
    return Traffic(n, issued_total, dram, useful, local, flops, int_ops, barriers, int_divs, fp64, special,
                   **math, global_atomics=atomics, global_loads=loads, shared_atomics=tuple(shared_atomics),
                   waits=tuple((*k, e) for k, e in sorted(waits.items())), rounds=rounds,
                   groups=_groups(scenario), load_flight_bytes=_flight_bytes(kernel, flight, counting),
                   load_dram_share=dram_loads / dram if dram > 0 and counts else 1.0,
                   path_cycles=_ops_value(ops, "path_cycles") * n, op_cycles=_ops_value(ops, "op_cycles") * n)


# A loop has the loads of several iterations in flight: the compiler unrolls it (UNROLLED_TRIPS of them, or
# all where it runs fewer), and a warp issues the next iteration's loads before the last ones' sums need them
# (``bench/gpu_stream_loop.py``: a loop of the same trips for every work-item takes 114 ns an iteration past
# the L2, about a quarter of DRAM's round trip)
UNROLLED_TRIPS = 4


def _flight_bytes(kernel: KernelLike, flight: Mapping[int, list[float]], args: Mapping[str, int | float]
                  ) -> float:
    """The bytes a work-item's global loads keep in flight together (``stream_share``): per loop around
    loads (or none), the bytes one execution of each of its loads moves, times the iterations issued
    together (UNROLLED_TRIPS); averaged over the loads' traffic."""
    total = sum(moved for _, moved in flight.values())
    if not total:
        return 0.0
    out = 0.0
    for loop, (per_exec, moved) in flight.items():
        info = kernel.loops[loop] if 0 <= loop < len(kernel.loops) else None
        trips = info.trips_for(args) if info is not None else 1.0
        together = float(UNROLLED_TRIPS) if trips is None else min(float(UNROLLED_TRIPS), max(1.0, trips))
        out += moved / total * per_exec * together
    return out


def _groups(scenario: Scenario) -> int:
    """The launch's work-groups, 0 where it gives no local size."""
    local = scenario.local_size
    if not local or len(local) != len(scenario.global_size) or not all(local):
        return 0
    return math.prod(-(-g // lsz) for g, lsz in zip(scenario.global_size, local, strict=True))


def _symbol_values(scenario: Scenario) -> dict[str, int | float]:
    """The values of an address polynomial's launch-wide symbols (``analysis.poly``): the scalar
    arguments and the launch sizes; a work-item's own ids, loaded values and the like have none."""
    out: dict[str, int | float] = {f"arg:{k}": v for k, v in scenario.args.items()
                                   if isinstance(v, (int, float))}
    for d, g in enumerate(scenario.global_size):
        out[f"gsz{d}"] = g
        if scenario.local_size and d < len(scenario.local_size) and scenario.local_size[d]:
            out[f"lsz{d}"] = scenario.local_size[d]
            out[f"ngr{d}"] = -(-g // scenario.local_size[d])
    return out


def _round_loop(kernel: KernelLike, access: AccessLike) -> int | None:
    """The loop whose every iteration waits for ``access`` (``round_trips_ns``): its innermost loop, where
    the access is a global or constant load the loop's exit does not already wait for (``waits``) and
    the loop's trips differ between work-items or hang on loaded data (``LoopInfo.varies``: a grid-stride
    loop, a sparse row), with no ``#pragma unroll``. Loops of the same trips for every work-item are
    left out: the compiler issues the loads of several of their iterations together
    (bench/gpu_stream_loop.py, ``sum_fixed``: 114 ns an iteration past the L2 where a grid-stride loop
    takes 386), and charging them a round trip each over-estimates the project's naive row and column
    walks 2-9x (``bench/roofline_errors.py``)."""
    loops = access.loops
    if (access.kind != "load" or access.address_space not in ("global", "constant") or not loops
            or access.wait is not None):
        return None
    k = loops[-1]
    info = kernel.loops[k] if k < len(kernel.loops) else None
    if info is None or not info.varies or info.unroll is not None:
        return None
    return int(k)


def _round_load(access: AccessLike, loop: int, symbols: Mapping[str, int | float]) -> tuple[float, bool]:
    """How a load waits in each iteration of ``loop``: the share of iterations in which a warp's request
    reaches a line it did not read the iteration before (its address's step per iteration over a line,
    ``LINE_BYTES``; 0 for an address the loop does not move, 1 where the step is not known for the launch),
    and whether its address moves through a value loaded in the iteration (``x[col[j]]``: a loaded value
    and no step of the loop's own), so that it waits for that load first."""
    terms = poly.thaw(access.offset)
    step = poly.coefficient(terms, f"it:{loop}")
    if step is not None and not step:  # no step of this loop: the same address, or one data moves
        names = poly.symbols(terms)
        loaded = any(sym.startswith("ld:") for sym in names)
        return (1.0 if loaded or any(sym.startswith("v:") for sym in names) else 0.0), loaded
    value = poly.evaluate(step, symbols) if step is not None else None
    return (1.0 if value is None else min(1.0, abs(value) / LINE_BYTES)), False


def shared_atomic(access: AccessLike, table_bytes: float) -> tuple[float, float] | None:
    """A global atomic whose address has no term of the work-item's global or group id updates a table
    that every work-group updates too: (the lanes of a warp that reach one word, the table's bytes), the
    table being the buffer. Lanes on one word: all 32 where the address is the same for every lane, one
    where it moves with the local id, and where it hangs on data the warp's lanes spread over the table's
    words. None for other atomics, or where the address or the buffer's size is not known."""
    if access.offset is None or table_bytes <= 0:
        return None
    names = poly.symbols(poly.thaw(access.offset))
    if any(n[:3] in ("gid", "grp") for n in names):
        return None
    words = max(1.0, table_bytes / float(access.element_size or 4))
    if any(n.startswith(("ld:", "v:")) for n in names):
        return max(1.0, 32.0 / words), table_bytes
    return (1.0 if any(n[:3] == "lid" for n in names) else 32.0), table_bytes


def _buffer_bytes(param: str | None, params: Mapping[str, Any], args: Mapping[str, int | float]) -> float:
    """Bytes of the pointer parameter's buffer in the scenario, -1 where unknown."""
    p = params.get(param) if param is not None else None
    length = args.get(param) if param is not None else None
    elem = type_size(p.type) if p is not None else None
    if p is not None and getattr(p, "pointer", False) and isinstance(length, (int, float)) and elem:
        return float(length) * float(elem)
    return -1.0


def count_args(scenario: Scenario) -> dict[str, int | float]:
    """The scenario's argument values plus its launch sizes, for evaluating loop trip counts."""

    return launch_args(scenario.args, scenario.global_size, scenario.local_size)


# A GPU compute unit keeps RESIDENT_ITEMS work-items in flight (NVIDIA: 2048 threads per SM since Volta),
# its warps of WARP_ITEMS spread over SCHEDULERS schedulers that each issue one warp instruction a clock.
RESIDENT_ITEMS = {"gpu": 2048, "cpu": 8, "accelerator": 64}
WARP_ITEMS = 32
SCHEDULERS = 4
# Cycles a flop of a work-item's chain of operations takes where nothing hides their latency (about 4 for
# a dependent FP32 FMA from Volta to Hopper, published microbenchmarks; read off the H200 training data as
# a flop's, ``bench/chain_fit.py``)
DEPENDENT_CYCLES = 4.0


def compute_ops(t: Traffic, device: Device) -> float:
    """The launch's arithmetic in FMA-counted flops of the peak rate: integer ops at INT_OP_COST, and
    double-precision and special-function instructions at the device's extra costs
    (``profiles.ProfileFacts``): each special function at its cost class's measured cost where the
    profile has them (``math_costs``, a call in double precision its class's extra more), else every one at
    ``special_op_cost``. Charging every float instruction the issue slot of an FMA was tried: it fitted
    the H200 training data worse."""
    f = profiles.facts(device)
    if f.math_costs is not None:
        c = f.math_costs
        special = ((c.short - 1.0) * t.math_short + (c.long - 1.0) * t.math_long
                   + (c.pow - 1.0) * t.math_pow
                   + c.fp64_extra_of(t.math_short, t.math_long, t.math_pow) * t.math_fp64)
    else:
        special = (f.special_op_cost - 1.0) * t.special_ops
    return t.flops + (f.fp64_cost - 1.0) * t.fp64_ops + special + INT_OP_COST * t.int_ops


def serial_ms(t: Traffic, device: Device) -> float:
    """Waves of resident work-items times a work-item's operation chain: its operations at
    DEPENDENT_CYCLES a flop, shortened by the parallelism of its independent chains
    (``Traffic.path_cycles`` over ``op_cycles``), but no shorter than the issue of the operations of the
    warps that share a scheduler (two FMA-counted flops a warp instruction): what a launch too small to
    fill the device takes, where no throughput peak is reached."""
    if not t.work_items or not device.clock_mhz:
        return 0.0
    waves = _waves(t, device)
    per_cu = math.ceil(t.work_items / (waves * max(1, device.compute_units)))
    warps = math.ceil(math.ceil(per_cu / WARP_ITEMS) / SCHEDULERS)  # a scheduler's warps
    ops = compute_ops(t, device) / t.work_items
    chain = ops * DEPENDENT_CYCLES * (t.path_cycles / t.op_cycles if t.op_cycles > 0 else 1.0)
    return waves * max(chain, ops / 2.0 * warps) / (device.clock_mhz * 1e3)


def _waves(t: Traffic, device: Device) -> int:
    resident = max(1, device.compute_units) * RESIDENT_ITEMS.get(device.type, 8)
    return math.ceil(t.work_items / resident)


# A GPU launch takes at least the time its work-items' own chains take, wave after wave of resident ones:
# CHAIN_FACTOR times ``serial_ms`` (a real chain mixes instruction kinds that wait on each other's issue,
# not back-to-back FMAs), or LOAD_CHAIN_NS per global load a work-item executes (a load's latency over
# the loads a warp keeps in flight). Both read off the H200 training data (``bench/chain_fit.py`` prints
# the grid): the roofline's median |log(measured / estimate)| on the hand-written families goes from
# 0.31 without the bound to 0.18, on their launches of 0.2 ms or more (most of them small grids with long
# loops) from 0.65 to 0.18, on the generated kernels from 0.55 to 0.30; the grid's other pairs fit worse
# (80 ns: 0.25, 0.31, 0.31). Launches that fill the device stay bound by the throughput terms.
CHAIN_FACTOR = 1.0
LOAD_CHAIN_NS = 40.0


def chain_ms(t: Traffic, device: Device) -> tuple[float, float]:
    """The latency bound of a GPU launch (see CHAIN_FACTOR): the chain of its operations and the chain of
    its loads, the last wave stretched to the longest work-item's (``Traffic.longest_item``, known from a
    counting run's trace); (0, 0) on other devices, whose roofline was calibrated without them."""
    if device.type != "gpu" or not t.work_items:
        return 0.0, 0.0
    waves = _waves(t, device)
    # groups start as others end: every wave but the last takes the mean chain, the last the longest
    stretch = (waves - 1 + max(1.0, t.longest_item)) / waves
    overlapped = max(0.0, t.global_loads - t.waited_global_loads)
    per_item_ns = (waited_ns(t, device) + max(overlapped * LOAD_CHAIN_NS, round_trips_ns(t, device))
                   ) / t.work_items
    loads_ms = waves * per_item_ns * 1e-6
    return CHAIN_FACTOR * serial_ms(t, device) * stretch, loads_ms * stretch


def round_trips_ns(t: Traffic, device: Device) -> float:
    """The loads of loops that wait for them every iteration (``Traffic.rounds``), over all work-items: a
    warp issues an iteration's loads together and waits for the slowest before the next iteration's
    (bench/gpu_stream_loop.py: a grid-stride loop over 512 MiB takes 387-413 ns an iteration at 1 to 32
    warps per SM, summing or copying; over 16 MiB 181-416 ns: a load's round trip, not the
    LOAD_CHAIN_NS an overlapped load costs), and a load whose address another load gives after that one.
    A load that reaches a line it read the iteration before waits as an L1 hit, one that reaches a new
    line as an L2 hit, or as DRAM's in the share of its buffer's traffic DRAM serves: the device's
    measured chase latencies (``GpuMemory.chase_ns``: the smallest region, the largest that fits half the
    L2, and the largest); a launch whose DRAM traffic fits half the L2 finds its data there (launched
    again, or after the kernel that wrote it). 0 where the profile has none, and for loops whose exit
    waits for a load (``waited_ns`` charges them)."""
    mem = profiles.facts(device).gpu_memory
    if mem is None or not mem.chase_ns or not t.rounds:
        return 0.0
    hit = mem.chase_ns[0][1]
    far = mem.chase_ns[-1][1] if t.dram_bytes > mem.l2_bytes / 2 else None
    near = max((ns for size, ns in mem.chase_ns if size <= mem.l2_bytes / 2), default=hit)
    far = near if far is None else far
    total = 0.0
    for execs, body in t.rounds:
        waits = [(new * (near + (far - near) * dram) + (1.0 - new) * hit, dep) for new, dram, dep in body]
        total += execs * (max((ns for ns, dep in waits if not dep), default=0.0)
                          + max((ns for ns, dep in waits if dep), default=0.0))
    return total


def atomic_ms(t: Traffic, device: Device) -> float:
    """The global atomics' own throughput bound: each warp's request at the device's measured cost per
    request: what a counting run's trace says its atomics cost (``Traffic.atomic_ns``: the lines each
    request reaches, the table's size, updates of one word by several groups or by one), else, statically,
    ``GpuMemory.shared_atomic_ns`` for an atomic on a table every work-group updates
    (``Traffic.shared_atomics``) and ``GpuMemory.atomic_ns`` for the others (requests to words of a
    group's own small table); 0 where the profile does not give them."""
    mem = profiles.facts(device).gpu_memory
    if mem is None or not t.global_atomics:
        return 0.0
    if t.atomic_ns:
        return t.global_atomics / mem.warp_size * t.atomic_ns * 1e-6
    shared = sum(execs for execs, _, _ in t.shared_atomics)
    total_ns = max(0.0, t.global_atomics - shared) * mem.atomic_ns + sum(
        execs * max(mem.atomic_ns, mem.shared_atomic_ns(lanes, math.ceil(table / mem.line_bytes)))
        for execs, lanes, table in t.shared_atomics)
    return total_ns / mem.warp_size * 1e-6


def stream_share(t: Traffic, device: Device, bandwidth_gbs: float) -> float:
    """The share of the peak DRAM rate that the launch's loads reach, by Little's law: a compute unit's
    resident work-items (``resident_items``) times the bytes each keeps in flight
    (``Traffic.load_flight_bytes``), over the bytes the peak rate moves in DRAM's round trip under load
    (the profile's ``stream_latency_ns``) on each compute unit: ``x / (1 + x^3)^(1/3)`` of the peak for
    their ratio ``x`` (near ``x`` when few bytes are in flight, all of it when many are).
    ``bench/gpu_stream_width.py --fit`` (``data/h100/gpu_stream_width.json``: 51 kernels of 0-8 loads and 0-4
    stores of 4-16 bytes a work-item, 1,024-2,048 work-items resident) fits it with 597 ns (mean |log
    error| 0.041). A launch whose data fits half the L2 waits for the L2 instead.
    1 where the latency or the loads are not known."""
    f = profiles.facts(device)
    latency = f.stream_latency_ns
    resident = resident_items(t, device)
    if not latency or t.load_flight_bytes <= 0.0 or not resident or device.type != "gpu":
        return 1.0
    mem = f.gpu_memory
    if mem is not None and mem.chase_ns and t.dram_bytes <= mem.l2_bytes / 2:
        # data that fits half the L2 is there (launched again, or after the kernel that wrote it): its
        # round trip is shorter by the ratio of the measured chase latencies of the L2 and of DRAM
        near = max((ns for size, ns in mem.chase_ns if size <= mem.l2_bytes / 2), default=mem.chase_ns[0][1])
        latency *= near / mem.chase_ns[-1][1]
    peak_flight = bandwidth_gbs * latency / max(1, device.compute_units)  # GB/s x ns = bytes
    x = resident * t.load_flight_bytes / peak_flight
    return x / (1.0 + x ** 3) ** (1.0 / 3.0)


# A compute unit holds at most MAX_GROUPS work-groups at once (NVIDIA since Volta: 32 blocks per SM)
MAX_GROUPS = 32


def resident_items(t: Traffic, device: Device) -> float:
    """Work-items resident on a compute unit of a device the launch fills: RESIDENT_ITEMS, fewer where its
    groups are small (MAX_GROUPS of them). A launch too small to fill the device waits for its loads in
    the chain bound (``chain_ms``)."""
    most = float(RESIDENT_ITEMS.get(device.type, 8))
    return min(most, MAX_GROUPS * t.work_items / t.groups) if t.groups else most


def dram_ms(t: Traffic, device: Device, bandwidth_gbs: float) -> float:
    """DRAM's time: the loads' bytes at their share of the peak (``stream_share``), the rest (stores) at
    the peak (a stream of stores reaches it at any width and residency: ``bench/gpu_stream_width.py``), or
    the lines that miss L2 at their measured cost (``dram_lines_ms``), whichever is longer."""
    loads = t.dram_bytes * t.load_dram_share
    share = stream_share(t, device, bandwidth_gbs)
    return max((loads / share + t.dram_bytes - loads) / (bandwidth_gbs * 1e6), dram_lines_ms(t, device))


def dispatch_ms(t: Traffic, device: Device) -> float:
    """The time the device takes to start the launch's work-groups, each compute unit one per
    ``ProfileFacts.group_dispatch_ns`` (``bench/gpu_ceilings.py``): what bounds a launch of many small groups
    that each do little (a stream in groups of 64 runs at a third of the bandwidth it reaches in groups of
    256). 0 where the profile does not give the rate or the launch has no local size."""
    ns = profiles.facts(device).group_dispatch_ns
    if not ns or not t.groups:
        return 0.0
    return t.groups * ns / max(1, device.compute_units) * 1e-6


def cache_ms(t: Traffic, device: Device, bandwidth_gbs: float) -> float:
    """The on-chip traffic's time. Where a counting run's trace says what misses L1 (``Traffic.l2_bytes``)
    and the device's profile has its measured on-chip rates (``GpuMemory.local_gbs``, ``l1_gbs``,
    ``l2_gbs``): L1's clocks for the warps' requests (``memory.l1_clocks``: their lines and bank
    conflicts) at the L1 rate and the __local wavefronts (bank conflicts included) at the __local rate, added
    (they share each SM's data path), or what misses L1 at the L2 rate, whichever is slower. Else the
    issued and __local bytes at CACHE_FACTOR times the DRAM rate (which level serves them is not
    known)."""
    mem = profiles.facts(device).gpu_memory
    if t.l2_bytes is not None and mem is not None and mem.onchip_rates:
        sm = t.l1_wavefront_bytes / (mem.l1_gbs * 1e6) + t.local_bytes / (mem.local_gbs * 1e6)
        return max(sm, t.l2_bytes / (mem.l2_gbs * 1e6), t.l2_lines * mem.l2_line_ns * 1e-6)
    return (t.issued_bytes + t.local_bytes) / (CACHE_FACTOR * bandwidth_gbs * 1e6)


def dram_lines_ms(t: Traffic, device: Device) -> float:
    """What misses L2 at the device's measured cost per line (``GpuMemory.dram_line_ns``): DRAM serves a
    request whose lanes read a sector of each of many lines slower than its bytes say; 0 where a counting
    run's trace or the measurement is missing."""
    mem = profiles.facts(device).gpu_memory
    return t.dram_lines * mem.dram_line_ns * 1e-6 if mem is not None else 0.0


def waited_ns(t: Traffic, device: Device) -> float:
    """The loads loops wait for (``Traffic.waits``), each at the device's measured latency for how its
    address moves over its region (``GpuMemory.wait_ns``), summed over all work-items. Where the
    device's profile has no measured latencies, a global load counts as any other (LOAD_CHAIN_NS) and a
    __local one not at all."""
    mem = profiles.facts(device).gpu_memory
    total = 0.0
    for wait, where, region, execs in t.waits:
        size = 0.0 if where == "local" else region if region >= 0 else None  # __local: on chip
        ns = mem.wait_ns(wait, size) if mem is not None else None
        total += execs * (ns if ns is not None else 0.0 if where == "local" else LOAD_CHAIN_NS)
    return total


def roofline(t: Traffic, device: Device, bandwidth_gbs: float, gflops: float, floor_ms: float,
             *, peaks_measured: bool = True, compute_ms: float | None = None,
             unhidden: float | None = None) -> Roofline:
    """Time of a launch moving ``t`` on a device with the given peaks (GB/s, GFLOP/s) and launch floor.
    ``compute_ms``, when given, replaces the counted compute time (a cost read from the device's own
    machine code: ``model/speedup.py``); ``unhidden``, the share of the smaller of memory and work added
    to the larger (default: ``unhidden_share`` of ``t``)."""
    bw = bandwidth_gbs * 1e9 / 1e3  # bytes per ms
    fl = gflops * 1e9 / 1e3  # flops per ms
    memory_ms = max(dram_ms(t, device, bandwidth_gbs), cache_ms(t, device, bandwidth_gbs),
                    atomic_ms(t, device))
    if compute_ms is None:
        compute_ms = compute_ops(t, device) / fl
    ops_chain, load_chain = chain_ms(t, device)
    chain = max(ops_chain, load_chain)
    starts = dispatch_ms(t, device)
    work = max(compute_ms, chain)
    if unhidden is None:
        unhidden = unhidden_share(t, device)
    busy = max(max(memory_ms, work) + unhidden * min(memory_ms, work), starts)
    time_ms = floor_ms + busy
    if floor_ms >= busy or max(load_chain, starts) >= max(memory_ms, compute_ms, ops_chain):
        bound: Bound = "latency"  # the launch floor, loads waited for one after another, or group starts
    elif memory_ms >= max(compute_ms, ops_chain):
        bound = "memory"
    else:
        bound = "compute"
    util = min(1.0, t.effective_bytes / time_ms / bw) if time_ms > 0 else 0.0
    return Roofline(time_ms, memory_ms, compute_ms, floor_ms, bound, util, peaks_measured, chain, starts,
                    unhidden)


def unhidden_share(t: Traffic, device: Device) -> float:
    """The share of the smaller of a GPU launch's memory time and its work (compute or chain) that the
    larger does not hide: the square of the share of a work-item's operations on its longest dependent
    chain (``Traffic.path_cycles`` over ``op_cycles``). A work-item whose operations wait on each other
    (a load, then the math on it, then the next load) keeps the memory system and the pipes busy in turn;
    one with independent chains (a register tile's accumulators, a butterfly's values) issues loads and
    math together. Read off the H200 training data (``bench/chain_fit.py``: the roofline's median
    |log(measured / estimate)| on the hand-written families 0.202 with the larger term alone, 0.187 with
    the two added, 0.175 with this share; the exponents 1.5-3 within 0.001 of it). 0 on other devices,
    whose roofline was calibrated without it."""
    if device.type != "gpu":
        return 0.0
    dependent = min(1.0, t.path_cycles / t.op_cycles) if t.op_cycles > 0 else 1.0
    return dependent ** 2


def cycles(time_ms: float, device: Device) -> float:
    """Device clock cycles in ``time_ms``."""
    return time_ms * 1e-3 * device.clock_mhz * 1e6


def log_ratio(measured_ms: float, predicted_ms: float) -> float:
    return math.log(measured_ms / predicted_ms)
