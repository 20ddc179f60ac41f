"""A deterministic generator of synthetic kernels that span the axes performance depends on.

Each kernel is drawn from a seeded random generator over:

* access pattern: contiguous, constant stride (2..1024, odd strides as wrapping permutations, powers of two
  as transposing permutations), symbolic stride (an argument), gather and scatter through an index array
  filled in range, broadcast (every work-item of a group reads one element), 1-D stencil on a padded input,
  a ``__local`` tile with barriers, 2-D launches (row-major and column-major indexing);
* arithmetic intensity: 0..256 operations per element from a mix of fma, division, sqrt, exp and sin
  (integer types: multiply-add, xor-shift, division);
* a loop with a constant trip count (2..256) or an argument-bound one, with no pragma or
  ``#pragma unroll [N]``;
* data type (char, int, float, double) and vector width (1, 2, 4, 8);
* branch divergence: none, by work-item parity, by data.

Every kernel has a ``// clperf:`` directive and a ``// clperf-sweep:`` spec sized so each buffer stays
within 4 KB..16 MB over the whole sweep, and every index is in bounds for every point of the sweep. Names are
``gen_<archetype>_<index>``; the archetype (``gather``, ``stencil``, ``compute``, ...) is the family the
evaluator holds out.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

MIN_BYTES = 4 << 10
MAX_BYTES = 16 << 20
MAX_ITEMS = 1 << 22
PATTERNS = ("contig", "strided", "symstride", "gather", "scatter", "broadcast", "stencil", "tiled", "twod",
            "twodcol")
TYPES = ("char", "int", "float", "double")
WIDTHS = (1, 2, 4, 8)
FLOPS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256)
STRIDES = (2, 3, 4, 5, 7, 8, 16, 17, 32, 33, 64, 65, 128, 129, 256, 257, 512, 513, 1024, 1025)
TRIPS = (2, 3, 4, 8, 16, 32, 64, 100, 128, 256)
UNROLLS = (None, 0, 2, 4, 8, 16)  # None: no pragma; 0: bare `#pragma unroll`
_SIZES = {"char": 1, "int": 4, "float": 4, "double": 8}


@dataclass(frozen=True)
class Config:
    """One point of the generator's parameter space."""

    pattern: str
    dtype: str
    width: int
    flops: int
    ops: tuple[str, ...]  # the op mix, cycled through
    stride: int  # for "strided"
    trip: int | str | None  # None: no loop; an int: constant; "arg": argument-bound
    unroll: int | None
    tile_reads: int  # neighbours read from the __local tile ("tiled")
    radius: int  # stencil radius
    divergence: str  # "none" | "parity" | "data"

    @property
    def archetype(self) -> str:
        if self.pattern != "contig":
            return self.pattern
        if self.flops >= 32:
            return "compute"
        if self.trip is not None:
            return "loop"
        if self.divergence != "none":
            return "divergent"
        return "contig"

    @property
    def type_name(self) -> str:
        return self.dtype if self.width == 1 else f"{self.dtype}{self.width}"

    @property
    def elem_bytes(self) -> int:
        return _SIZES[self.dtype] * self.width


def _pow2_floor(v: int) -> int:
    return 1 << (max(v, 1).bit_length() - 1)


def _pow2_ceil(v: int) -> int:
    return 1 << (max(v, 1) - 1).bit_length()


def _draw(rng: random.Random) -> Config:
    pattern = rng.choice(("contig", "contig", *PATTERNS))
    dtype = rng.choice(TYPES)
    width = rng.choice(WIDTHS)
    if pattern == "tiled" and _SIZES[dtype] * width > 16:  # 1024-item tile must fit in 16 KiB
        width = 16 // _SIZES[dtype]
    is_float = dtype in ("float", "double")
    flops = rng.choice(FLOPS)
    pool = ["fma", "div", "sqrt", "exp", "sin"] if is_float else ["mad", "xorshift", "idiv"]
    ops = tuple(rng.sample(pool, rng.randint(1, len(pool))))
    loop_kind = rng.random()
    trip: int | str | None = None if loop_kind < 0.45 else "arg" if loop_kind < 0.6 else rng.choice(TRIPS)
    unroll = rng.choice(UNROLLS) if trip is not None else None
    if trip is not None and flops > 32:
        flops = 32  # keep loop x arithmetic within reason for the largest sweeps
    return Config(pattern, dtype, width, flops, ops, rng.choice(STRIDES), trip, unroll,
                  rng.choice((1, 2, 4, 8)), rng.choice((1, 2, 3, 4, 8)),
                  rng.choice(("none", "none", "parity", "data")))


# --- code emission ------------------------------------------------------------------------------------------

def _const(cfg: Config, value: float | int) -> str:
    if cfg.dtype in ("float", "double"):
        lit = f"{float(value)}f" if cfg.dtype == "float" else f"{float(value)}"
    else:
        lit = str(int(value))
    return f"({cfg.type_name})({lit})"


def _op(cfg: Config, op: str, k: int) -> str:
    c1 = _const(cfg, 0.5 + (k % 7) * 0.125 if cfg.dtype in ("float", "double") else 3 + k % 5)
    c2 = _const(cfg, 0.25 + (k % 3) * 0.5 if cfg.dtype in ("float", "double") else 1 + k % 3)
    if op == "fma":
        return f"v = fma(v, {c1}, {c2});"
    if op == "div":
        return f"v = {c2} / (fabs(v) + {c1});"
    if op == "sqrt":
        return f"v = sqrt(fabs(v) + {c2});"
    if op == "exp":
        return f"v = exp(-fabs(v)) + {c2};"
    if op == "sin":
        return f"v = sin(v) * {c1};"
    if op == "mad":
        return f"v = v * {c1} + {c2};"
    if op == "xorshift":
        return f"v = v ^ (v >> {_const(cfg, 1 + k % 3)});"
    return f"v = v / ((v & {_const(cfg, 7)}) + {c2});"  # idiv


def _arith(cfg: Config, indent: str, salt: int = 0) -> list[str]:
    """``cfg.flops`` operations on ``v``: straight-line up to 16, then a loop of 16-op bodies."""
    if cfg.flops == 0:
        return []
    body_n = min(cfg.flops, 16)
    body = [_op(cfg, cfg.ops[(k + salt) % len(cfg.ops)], k + salt) for k in range(body_n)]
    if cfg.flops <= 16:
        return [indent + b for b in body]
    reps = cfg.flops // 16
    inner = [indent + "    " + b for b in body]
    return [f"{indent}for (int r = 0; r < {reps}; ++r) {{", *inner, f"{indent}}}"]


def _first_lane(cfg: Config, expr: str) -> str:
    return expr if cfg.width == 1 else f"({expr}).s0"


def _threshold(cfg: Config) -> str:
    return "0.5f" if cfg.dtype == "float" else "0.5" if cfg.dtype == "double" else "32"


def _compute(cfg: Config, indent: str) -> list[str]:
    """The per-element work on ``v``, with the configured divergence."""
    a = _arith(cfg, indent + "    ", 0)
    b = _arith(cfg, indent + "    ", 3)
    if cfg.divergence == "none" or not a:
        return _arith(cfg, indent)
    cond = "(gid & 1)" if cfg.divergence == "parity" else f"{_first_lane(cfg, 'v')} > {_threshold(cfg)}"
    return [f"{indent}if ({cond}) {{", *a, f"{indent}}} else {{", *b, f"{indent}}}"]


def _index(cfg: Config, i: str) -> str:
    """The element index read for work-item ``i`` (always in [0, n))."""
    p = cfg.pattern
    if p == "strided":
        s = cfg.stride
        if s % 2:
            return f"(int)(((uint){i} * {s}u) & (uint)(n - 1))"
        return f"(({i}) % max(n / {s}, 1)) * min({s}, n) + ({i}) / max(n / {s}, 1)"
    if p == "symstride":
        return f"(({i}) % max(n / s, 1)) * min(s, n) + ({i}) / max(n / s, 1)"
    if p == "gather":
        return f"idx[{i}]"
    if p == "broadcast":
        return "get_group_id(0)"
    return i


@dataclass(frozen=True)
class _Launch:
    directive: str
    sweep: str
    params: str


_OP_COST = {"fma": 1, "mad": 1, "xorshift": 1, "idiv": 4, "div": 8, "sqrt": 8, "exp": 8, "sin": 8}
WORK_BUDGET = 1 << 31  # weighted operations of the largest launch: a few seconds on two CPU cores


def _max_trip(cfg: Config) -> int:
    if cfg.trip is None:
        return 1
    if cfg.trip == "arg":
        return 64 if cfg.pattern in ("twod", "twodcol") or cfg.flops > 8 else 256
    return int(cfg.trip)


def _work_per_item(cfg: Config) -> int:
    """Weighted operations one work-item does at the sweep's largest trip count."""
    per_op = sum(_OP_COST[o] for o in cfg.ops) / len(cfg.ops)
    return max(1, int(_max_trip(cfg) * (cfg.flops * per_op + 1) * cfg.width))


def _max_items(cfg: Config) -> int:
    return max(_pow2_floor(WORK_BUDGET // _work_per_item(cfg)), 256)


def _sizes(cfg: Config, per_item_buffers: float = 1.0) -> tuple[int, int]:
    lo = max(_pow2_ceil(MIN_BYTES // cfg.elem_bytes), 256)
    hi = min(_pow2_floor(int(MAX_BYTES / cfg.elem_bytes / per_item_buffers)), MAX_ITEMS)
    hi = max(min(hi, _max_items(cfg)), lo)  # heavy per-item work: keep the largest launch affordable on CPUs
    if cfg.pattern == "stencil":
        hi = min(hi, _pow2_floor(MAX_BYTES // cfg.elem_bytes) // 2)  # the input is padded by the radius
    return lo, hi


def _launch(cfg: Config, default_local: int) -> _Launch:
    t = cfg.type_name
    lo, hi = _sizes(cfg)
    n_default = min(max(lo, 1 << 18), hi)
    if cfg.pattern in ("twod", "twodcol"):
        w_lo = 64 if cfg.elem_bytes < 4 else 32
        h_hi = max(w_lo, min((MAX_BYTES // cfg.elem_bytes) // 2048, _max_items(cfg) // 2048))
        targ, tsweep, tparam = ("", "", "")
        if cfg.trip == "arg":
            targ, tsweep, tparam = " --arg t=16", " t=1..64", ", int t"
        return _Launch(
            f"--global w,h --local 16,4 --arg w=256 --arg h={min(256, h_hi)} --arg out=w*h --arg in=w*h"
            + targ,
            f"w={w_lo}..2048 h={w_lo}..{h_hi}{tsweep} local=16..64",
            f"__global {t} *out, __global const {t} *in, int w, int h{tparam}")
    args = [f"--arg n={n_default}", "--arg out=n"]
    params = [f"__global {t} *out", f"__global const {t} *in"]
    sweep = [f"n={lo}..{hi}"]
    if cfg.pattern == "stencil":
        args.append(f"--arg in=n+{2 * cfg.radius}")
    else:
        args.append("--arg in=n")
    if cfg.pattern in ("gather", "scatter"):
        args += ["--arg idx=n", "--fill idx=range:0:n"]
        params.append("__global const int *idx")
    if cfg.pattern == "symstride":
        args.append("--arg s=64")
        params.append("int s")
        sweep.append("s=1..1024")
    if cfg.trip == "arg":
        args.append("--arg t=16")
        params.append("int t")
        sweep.append(f"t=1..{_max_trip(cfg)}")
    params.append("int n")
    sweep.append("local=16..1024")
    directive = f"--global n --local {default_local} " + " ".join(args)
    return _Launch(directive, " ".join(sweep), ", ".join(params))


def _loop_lines(cfg: Config, load: str, indent: str, has_v: bool) -> list[str]:
    """A loop accumulating over a sliding window of elements; ``load`` may use ``k`` and the outer ``v``."""
    bound = "t" if cfg.trip == "arg" else str(cfg.trip)
    t = cfg.type_name
    lines = [f"{indent}{t} acc = {_const(cfg, 0)};"]
    if cfg.unroll is not None:
        lines.append("#pragma unroll" + (f" {cfg.unroll}" if cfg.unroll else ""))
    lines += [f"{indent}for (int k = 0; k < {bound}; ++k) {{",
              f"{indent}    {t} ld = {load};",
              f"{indent}    {{",
              f"{indent}        {t} v = ld;",
              *_compute(cfg, indent + "        "),
              f"{indent}        acc += v;",
              f"{indent}    }}",
              f"{indent}}}",
              f"{indent}{'' if has_v else t + ' '}v = acc;"]
    return lines


def _body(cfg: Config) -> list[str]:
    ind = "    "
    p = cfg.pattern
    if p in ("twod", "twodcol"):
        pre = [f"{ind}int x = get_global_id(0), y = get_global_id(1);",
               f"{ind}int gid = y * w + x;"]
        here = "y * w + x" if p == "twod" else "x * h + y"
        if cfg.trip is not None:
            load = f"in[{'y * w + (x + k) % w' if p == 'twod' else '((x + k) % w) * h + y'}]"
            core = _loop_lines(cfg, load, ind, False)
        else:
            core = [f"{ind}{cfg.type_name} v = in[{here}];", *_compute(cfg, ind)]
        return pre + core + [f"{ind}out[{here}] = v;"]
    pre = [f"{ind}int gid = get_global_id(0);", f"{ind}if (gid >= n)", f"{ind}    return;"]
    if p == "tiled":
        pre = [f"{ind}__local {cfg.type_name} tile[1024];",
               f"{ind}int gid = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);",
               f"{ind}tile[lid] = in[gid];",
               f"{ind}barrier(CLK_LOCAL_MEM_FENCE);",
               f"{ind}{cfg.type_name} v = tile[lid];"]
        for k in range(1, cfg.tile_reads + 1):
            pre.append(f"{ind}v += tile[(lid + {k}) & (ls - 1)];")
        if cfg.trip is not None:
            core = _loop_lines(cfg, "tile[(lid + k) & (ls - 1)] + v", ind, True)
        else:
            core = _compute(cfg, ind)
        return pre + core + [f"{ind}out[gid] = v;"]
    if p == "stencil":
        r = cfg.radius
        loads = [f"{ind}{cfg.type_name} v = in[gid + {r}];"]
        for d in range(1, r + 1):
            loads.append(f"{ind}v += in[gid + {r - d}] + in[gid + {r + d}];")
        if cfg.trip is not None:
            core = _loop_lines(cfg, f"in[gid + (k % {2 * r + 1})] + v", ind, True)
        else:
            core = _compute(cfg, ind)
        return pre + loads + core + [f"{ind}out[gid] = v;"]
    j = _index(cfg, "gid")
    if cfg.trip is not None:
        load = f"in[({j} + k) & (n - 1)]" if p != "broadcast" else f"in[({j} + k) % n]"
        core = _loop_lines(cfg, load, ind, False)
    else:
        core = [f"{ind}{cfg.type_name} v = in[{j}];", *_compute(cfg, ind)]
    store = "out[idx[gid]] = v;" if p == "scatter" else "out[gid] = v;"
    return pre + core + [ind + store]


def render(cfg: Config, name: str, rng: random.Random) -> str:
    local = rng.choice((64, 128, 256))
    launch = _launch(cfg, local)
    lines = [f"// Generated by clperf.benchmark.corpus.generate: pattern={cfg.pattern} type={cfg.type_name} "
             f"flops={cfg.flops} ops={'/'.join(cfg.ops)} trip={cfg.trip} unroll={cfg.unroll} "
             f"divergence={cfg.divergence}" + (f" stride={cfg.stride}" if cfg.pattern == "strided" else "")]
    if cfg.dtype == "double":
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    lines += ["", f"// clperf: {launch.directive}", f"// clperf-sweep: {launch.sweep}",
              f"__kernel void {name}({launch.params})", "{", *_body(cfg), "}", ""]
    return "\n".join(lines)


def generate(count: int = 2000, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` distinct kernels (by source text, ignoring the name) as ``(name, source)``."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > count * 50:
            raise RuntimeError(f"generator could only find {len(out)} distinct kernels")
        cfg = _draw(rng)
        name = f"gen_{cfg.archetype}_{len(out):05d}"
        src = render(cfg, name, rng)
        key = hashlib.sha256(src.replace(name, "K").encode()).hexdigest()
        if key in seen:
            continue
        seen.add(key)
        out.append((name, src))
    return out
