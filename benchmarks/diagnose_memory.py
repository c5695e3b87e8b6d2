"""Benchmark: peak memory of ``simgap diagnose`` against the dataset's length (issue 40's
budget: under 1.5 GB on an SO-101 dataset of any length).

Records SO-101 benches (``simgap.demo.factory``, faults drawn at random, 30 fps, 20 s
episodes) of each ``--episodes`` count and runs ``simgap diagnose`` on each in a child
process, one at a time; the child's peak resident set (``ru_maxrss`` of the waited child)
and wall time are printed per bench, as JSON.

Run from the repository root (a bench of 10 episodes takes about 3 min on 2 cores):
    PYTHONPATH=src python benchmarks/diagnose_memory.py [--episodes 3,10] [--seed 900]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def peak_of(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(peak RSS [MB], wall [s], exit status) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024.0, time.perf_counter() - t0, proc.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", default="3,10")
    ap.add_argument("--seed", type=int, default=900)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    a = ap.parse_args(argv)
    model = (a.data / "so101" / "so101.xml").resolve()
    if not model.is_file():
        print(f"skip: no SO-101 model at {model}", file=sys.stderr)
        return 0
    from simgap.demo.factory import make_so101_bench

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in a.episodes.split(",")):
            bench = make_so101_bench(
                Path(tmp) / f"b{n}",
                model,
                a.seed + n,
                fps=30,
                n_episodes=n,
                duration_s=20.0,
                faults="random",
                n_heldout=1,
            )
            mb, wall, rc = peak_of(
                [
                    sys.executable,
                    "-m",
                    "simgap",
                    "diagnose",
                    str(bench.rig),
                    "--out",
                    str(Path(tmp) / f"o{n}"),
                ],
                env,
            )
            rows.append(
                {
                    "episodes": n,
                    "seconds_each": 20.0,
                    "peak_rss_mb": round(mb, 1),
                    "wall_s": round(wall, 1),
                    "exit": rc,
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"largest peak {max(r['peak_rss_mb'] for r in rows):.0f} MB (budget 1500 MB); "
        f"this process's own peak {own:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
