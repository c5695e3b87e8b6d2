"""Benchmarks of the latency branch, measured side by side in one run.

1. Overhead of ``LoopTimer.mark`` against a bare ``time.perf_counter_ns`` call (target: under
   2 us per mark), in a loop of 5 marks per tick with the log written as in real use.
2. Analysis of 1,000,000 ticks x 5 stages (target: under 2 s and under 500 MB): the full
   latency branch (percentiles with bootstrap intervals for every stage and the total,
   overrun, jitter, added-delay fit), timed from ``StageTimes`` in memory; reading the same
   ticks from Parquet is timed beside it.

Run: ``PYTHONPATH=src python benchmarks/latency.py [--ticks N]``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from simgap.branches.latency import analyse
from simgap.evidence.timing import TimingLog, read_timing_log
from simgap.instrument import LoopTimer
from simgap.series import StageTimes

STAGES = ("camera", "preprocess", "inference", "network", "command")


def bench_marks(n_marks: int, folder: Path) -> tuple[float, float, float]:
    """Per call [s], best of 3: bare ``perf_counter_ns``; ``mark`` on the hot path (ticks
    buffered, written after the timed loop); ``mark`` with the log written inside the timed
    loop (every 10,000 ticks and at close)."""
    clock = time.perf_counter_ns
    n_ticks = n_marks // len(STAGES)
    bare, hot, written = [], [], []
    for rep in range(3):
        t0 = time.perf_counter()
        for _ in range(n_ticks):
            clock()  # the tick start
            for _s in STAGES:
                clock()
        bare.append((time.perf_counter() - t0) / n_marks)
        for flush_ticks, out in ((n_ticks + 1, hot), (10_000, written)):
            timer = LoopTimer(folder / f"bench-{rep}-{flush_ticks}.jsonl", flush_ticks=flush_ticks)
            mark, tick = timer.mark, timer.tick
            t0 = time.perf_counter()
            for _ in range(n_ticks):
                tick()
                for s in STAGES:
                    mark(s)
            if out is written:
                timer.close()
            out.append((time.perf_counter() - t0) / n_marks)
            timer.close()
    return min(bare), min(hot), min(written)


def synthetic(n: int, steps: int = 1000, seed: int = 0) -> StageTimes:
    rng = np.random.default_rng(seed)
    med = {"camera": 0.018, "preprocess": 0.004, "inference": 0.028, "command": 0.003}
    stages = {k: v * rng.lognormal(0.0, 0.18, n) for k, v in med.items()}
    episodes = (n + steps - 1) // steps
    rates = rng.uniform(60, 160, episodes)
    ep = np.arange(n) // steps
    stages["network"] = 0.006 + rng.exponential(1.0, n) / rates[ep]
    total = np.sum(np.vstack(list(stages.values())), axis=0)
    t = np.cumsum(np.maximum(1 / 15, total))
    return StageTimes(t=t, episode=ep, step=np.arange(n) % steps, stages=stages)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ticks", type=int, default=1_000_000)
    ap.add_argument("--marks", type=int, default=1_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bare, hot, written = bench_marks(args.marks, folder)
        print(f"bare perf_counter_ns: {bare * 1e9:.0f} ns/call")
        for label, per in (
            ("mark, hot path (log written after the loop)", hot),
            ("mark, log written inside the loop", written),
        ):
            over = per - bare
            print(
                f"{label}: {per * 1e9:.0f} ns/mark, overhead {over * 1e9:.0f} ns/mark = "
                f"{over / 2e-6:.3f} x the 2 us target"
            )

        times = synthetic(args.ticks)
        tracemalloc.start()
        t0 = time.perf_counter()
        finding = analyse(TimingLog(times=times), [], 1 / 15, seed=0)
        dt = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        fig = finding.figures
        print(
            f"analysis of {times.n_ticks} ticks x {len(STAGES)} stages "
            f"({fig['episodes']} episodes): {dt:.2f} s = {dt / 2.0:.2f} x the 2 s target; "
            f"peak traced memory {peak / 2**20:.0f} MB = {peak / 500e6:.2f} x the 500 MB "
            f"target; verdict {finding.verdict.value}, total p95 "
            f"{fig['total_p95_s'] * 1e3:.1f} ms"
        )

        path = folder / "ticks.parquet"
        pq.write_table(
            pa.table(
                {
                    "episode": times.episode,
                    "step": times.step,
                    "t": times.t,
                    **{f"stages.{k}": v for k, v in times.stages.items()},
                }
            ),
            path,
        )
        t0 = time.perf_counter()
        log = read_timing_log(path)
        rd = time.perf_counter() - t0
        print(
            f"read {log.times.n_ticks} ticks from Parquet: {rd:.2f} s; read + analysis "
            f"{rd + dt:.2f} s"
        )


if __name__ == "__main__":
    main()
