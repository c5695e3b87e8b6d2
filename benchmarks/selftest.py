"""Benchmark: ``simgap selftest`` at its default size on two rigs (issue 34).

1. The demo rig (``simgap demo``'s bench: the SO-101-like demo arm, 12 pick-and-place
   episodes at 15 fps, recorded into a temporary cache).
2. An SO-101 rig made by ``simgap init`` from a LeRobot dataset: the Menagerie SO-101
   (``../shared/data/so101``) recorded healthy by ``make_so101_bench(..., faults=None)``
   (3 episodes of 20 s at 30 fps), then ``simgap init DATASET --model so101.xml``.

On each: ``run_selftest`` with the default number of trials (``DEFAULT_TRIALS`` faulty and
the null one) on ``--jobs`` local processes; printed: wall time, CPU time (this process and
its workers), the recovery table (Markdown), the sentence, the null run and the gap closed.
Targets: a clean null run, under 15 minutes per rig on 2 cores.

Run from the repository root:
    PYTHONPATH=src python benchmarks/selftest.py [--rigs demo,so101] [--trials 8]
        [--seed 0] [--jobs 2] [--data ../shared/data] [--keep DIR] [--json out.json]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def demo_rig(work: Path) -> Path:
    """The demo bench's rig.toml, recorded into ``work/cache``."""
    from simgap.demo import prepare_demo

    return prepare_demo(work / "cache", seed=0)


def so101_rig(work: Path, model: Path) -> Path:
    """A healthy SO-101 bench's dataset given to ``simgap init`` (the rig a user writes)."""
    from simgap.demo.factory import make_so101_bench

    bench = make_so101_bench(work / "so101-bench", model, seed=34, faults=None, n_heldout=0)
    rig = work / "so101-rig.toml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "simgap",
            "init",
            str(bench.dataset),
            "--model",
            str(model),
            "--out",
            str(rig),
            "--name",
            "so101-from-init",
        ],
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        stdout=subprocess.DEVNULL,
    )
    return rig


def one(name: str, rig: Path, out: Path, trials: int, seed: int, jobs: int) -> dict[str, Any]:
    from simgap.selftest.run import SELFTEST_MD, run_selftest

    t0, c0 = time.perf_counter(), _cpu_s()
    res = run_selftest(
        rig,
        out,
        trials=trials,
        seed=seed,
        jobs=jobs,
        progress=lambda m: print(f"  {m}", flush=True),
    )
    wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
    doc = json.loads((out / "selftest.json").read_text())
    print(
        f"\n== {name}: {trials} trials + null in {wall / 60:.1f} min wall, {cpu / 60:.1f} "
        f"min CPU (jobs {jobs}, {os.cpu_count()} CPUs)"
    )
    print((out / SELFTEST_MD).read_text())
    print(
        f"null run: {doc['null']['status']}, implicated {doc['null']['implicated'] or 'nothing'}"
        f", false cells {len(doc['null']['false_cells'])}",
        flush=True,
    )
    return {
        "rig": name,
        "wall_s": wall,
        "cpu_s": cpu,
        "trials": trials,
        "jobs": jobs,
        "sentence": res.sentence,
        "families": doc["families"],
        "gap": doc["gap"],
        "null": doc["null"],
        "per_trial_s": [
            t.get("wall_s")
            for t in json.loads((out / "diagnoses" / "fleet.json").read_text())["arms"]
        ],
    }


def main(argv: list[str] | None = None) -> int:
    from simgap.selftest.plan import DEFAULT_TRIALS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rigs", default="demo,so101")
    ap.add_argument("--trials", type=int, default=DEFAULT_TRIALS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = (a.keep or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        for name in a.rigs.split(","):
            if name == "demo":
                rig = demo_rig(work)
            elif name == "so101":
                model = (a.data / "so101" / "so101.xml").resolve()
                if not model.is_file():
                    print(f"skip so101: no SO-101 model at {model}", file=sys.stderr)
                    continue
                rig = so101_rig(work, model)
            else:
                raise SystemExit(f"unknown rig {name!r}: demo or so101")
            rows.append(one(name, rig, work / f"selftest-{name}", a.trials, a.seed, a.jobs))
    for r in rows:
        print(
            f"{r['rig']}: {r['wall_s'] / 60:.1f} min wall, {r['cpu_s'] / 60:.1f} min CPU; "
            f"null implicated {r['null']['implicated'] or 'nothing'}; gap closed "
            f"{r['gap']['text']}"
        )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
