"""``python -m clperf.benchmark.counting``: build the counting run's Oclgrind plugin now and print where it
is (``scripts/setup.sh`` does, so the first counting run does not wait for g++)."""

from __future__ import annotations

from clperf.benchmark.counting.oclgrind import main

if __name__ == "__main__":
    main()
