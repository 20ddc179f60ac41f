"""Numbers as people read them, the same in the editor and on the command line: 0.84 ms, 12.3 µs,
1.66 M cycles, 48.2 MB."""

from __future__ import annotations

from collections.abc import Mapping


def _round3(value: float) -> float:
    """``value`` to 3 significant digits (as ``.3g`` shows it), so units are chosen after rounding."""
    return float(f"{value:.3g}")


def ms(value: float) -> str:
    value = _round3(value)
    if value >= 1000:
        return f"{value / 1000:.3g} s"
    if value >= 0.1:
        return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"
    return f"{value * 1000:.3g} µs"


def count(value: float, unit: str = "") -> str:
    value = _round3(value)  # 999,600 is "1 M", not "1e+03 k"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}".rstrip()
    return f"{value:.3g} {unit}".rstrip()


def size(nbytes: float) -> str:
    return count(nbytes, "B")


def percent(share: float) -> str:
    return f"{share * 100:.0f}%"


def dims(sizes: tuple[int, ...] | None) -> str:
    return "runtime's choice" if sizes is None else "×".join(str(s) for s in sizes)


def args(values: Mapping[str, int | float]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items())
