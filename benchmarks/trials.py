"""Benchmark: exact power search up to n = 500 per arm (target: under 5 s, cold caches).

Run: PYTHONPATH=src python benchmarks/trials.py

The search checks the exact power of the two-sided Fisher and Barnard tests at every n
from n_max = 500 down to the size it returns (the power must stay above the target up to
n_max), so 0.5 vs 0.8 (size about 40) evaluates some 460 rejection regions per test.
"""

from __future__ import annotations

import time

from simgap.evaluation import exact_power, sizing


def _clear() -> None:
    exact_power._fisher_tails.cache_clear()
    exact_power._barnard_tails.cache_clear()


def main() -> None:
    total = 0.0
    for p1, p2 in ((0.5, 0.8), (0.5, 0.6)):
        for test in sizing.EXACT_TESTS:
            _clear()
            t0 = time.perf_counter()
            r = sizing.exact_n(test, p1, p2, alpha=0.05, power=0.8, n_max=500)
            dt = time.perf_counter() - t0
            total += dt
            print(
                f"{test:8s} {p1} vs {p2}: n = {r.n} (first reached {r.first_reached}), "
                f"power {r.power_at_n:.4f}, search to n_max = 500 in {dt:.2f} s"
            )
    _clear()
    t0, c0 = time.perf_counter(), time.process_time()
    for n in range(1, 501):
        exact_power.power("fisher", n, 0.5, 0.8, 0.05)
        exact_power.power("barnard", n, 0.5, 0.8, 0.05)
    full, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"every n = 1..500, both tests, cold: {full:.2f} s wall, {cpu:.2f} s CPU "
        f"({'under' if full < 5 else 'OVER'} the 5 s target; wall time counts other "
        "processes' load)"
    )
    t0 = time.perf_counter()
    sizing.exact_n("barnard", 0.3, 0.9, n_max=500)
    print(f"another p pair with warm regions: {time.perf_counter() - t0:.3f} s")


if __name__ == "__main__":
    main()
