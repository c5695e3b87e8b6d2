"""Benchmark: ``simgap demo`` end to end on this machine, against the 90 s budget.

Times, in one run: building the demo bench from nothing (``prepare_demo`` into an empty
cache), a second ``prepare_demo`` (the cached path), ``diagnose_rig`` on the bench, and the
``simgap demo`` command end to end in a fresh process (the bench cached by the first step).
Prints each time and its share of the budget.

    PYTHONPATH=src python benchmarks/demo.py [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 90.0
PREPARE_AIM_S = 15.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from simgap.demo import prepare_demo
    from simgap.diagnose import diagnose_rig

    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        c0, t0 = time.process_time(), time.perf_counter()
        rig = prepare_demo(cache, seed=args.seed)
        t_prepare, c_prepare = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        prepare_demo(cache, seed=args.seed)
        t_cached = time.perf_counter() - t0
        t0 = time.perf_counter()
        diagnosis = diagnose_rig(rig, Path(tmp) / "out")
        t_diagnose = time.perf_counter() - t0
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        t0 = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "simgap",
                "demo",
                "--cache",
                str(cache),
                "--seed",
                str(args.seed),
                "--out",
                str(Path(tmp) / "cli"),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        t_cli = time.perf_counter() - t0
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    print(
        f"prepare_demo (build)   {t_prepare:6.1f} s wall, {c_prepare:5.1f} s CPU "
        f"({t_prepare / PREPARE_AIM_S:.2f} x the {PREPARE_AIM_S:.0f} s aim)"
    )
    print(f"prepare_demo (cached)  {t_cached:6.3f} s")
    print(
        f"diagnose_rig           {t_diagnose:6.1f} s "
        f"({len(diagnosis.findings)} findings, "
        f"{len(diagnosis.implicated())} implicated)"
    )
    print(f"simgap demo (CLI, cached bench) {t_cli:6.1f} s, exit {proc.returncode}")
    total = t_prepare + t_diagnose
    print(
        f"end to end from nothing {total:6.1f} s = {total / BUDGET_S:.2f} x the "
        f"{BUDGET_S:.0f} s budget"
    )
    if proc.returncode:
        print(proc.stderr[-2000:])


if __name__ == "__main__":
    main()
