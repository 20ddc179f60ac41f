"""The roofline's error on the project's own measurements, by kind of launch: what a change to the roofline
(``predictor/model/roofline.py``, ``memory.py``) does before any training. Builds the training examples
as ``clperf train`` does (cached per features version; a traced launch's counting run is kept apart, so a
change to the roofline alone counts nothing again) and prints, per group, the median and mean
``|log(measured / roofline)|`` and the share within 2x. Only ``data/h200`` and ``data/h200-large`` are read,
never a dev set.

    .venv/bin/python bench/roofline_errors.py [--rebuild]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from clperf.predictor.training import examples

DATA = [Path("data/h200"), Path("data/h200-large")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rebuild", action="store_true", help="compute the examples again (the roofline changed "
                    "but not the features version)")
    args = ap.parse_args()
    ex = examples.build(DATA, progress=True, use_cache=not args.rebuild)
    err = np.abs(np.log(ex.meas_ms / ex.roof_ms))
    generated = np.asarray(ex.kernel_generated)[ex.kernel]
    long = ex.meas_ms >= 0.2
    groups = {
        "hand-written, static": ~generated & ~ex.traced,
        "hand-written, traced": ~generated & ex.traced,
        "hand-written, static, >= 0.2 ms": ~generated & ~ex.traced & long,
        "hand-written, traced, >= 0.2 ms": ~generated & ex.traced & long,
        "generated, static": generated & ~ex.traced,
        "generated, traced": generated & ex.traced,
    }
    print(f"{'group':<34} {'rows':>7} {'median':>7} {'mean':>7} {'2x':>6}")
    for name, rows in groups.items():
        e = err[rows]
        if len(e):
            within = float(np.mean(e < np.log(2)))
            print(f"{name:<34} {len(e):>7} {np.median(e):>7.3f} {e.mean():>7.3f} {within:>6.1%}")


if __name__ == "__main__":
    main()
