"""Benchmark: wall time of a fleet of simulated SO-101 arms on local processes and on Ray.

Builds N arms with issue 12's bench factory (joint damping drawn per arm and joint,
log-uniform in [0.8, 1.25] x nominal; arm 5's elbow damping x2.5 on top; one episode
each), then runs ``simgap fleet`` on them twice: on ``--jobs`` local processes and on a
local Ray instance with as many CPUs. Prints both wall times side by side, the per-rig
diagnosis time (median and range), the overhead of each backend over the sum of per-rig
times divided by the workers, and whether the two runs gave the same numbers. The per-rig
cost times N over the workers is how the wall time grows with the fleet.

Run from the repository root (takes a few minutes on 2 cores):
    PYTHONPATH=src python benchmarks/fleet.py [--arms 8] [--jobs 2] [--duration 4]
        [--data ../shared/data] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _benches(root: Path, model: Path, n: int, duration: float) -> list[Path]:
    from simgap.demo.factory import make_so101_bench
    from simgap.demo.faults import draw_faults
    from simgap.demo.twin import JOINTS

    rigs = []
    for i in range(n):
        f = draw_faults(
            [18, i], JOINTS, ranges={"damping": (0.8, 1.25)}, delay_range_s=(0.02, 0.02)
        )
        if i == 5:
            f["damping"]["elbow_flex"] *= 2.5
        rigs.append(
            make_so101_bench(
                root / f"arm{i}",
                model,
                seed=100 + i,
                n_episodes=1,
                duration_s=duration,
                faults=f,
                n_heldout=0,
            ).rig
        )
    return rigs


def _run(rigs: list[Path], out: Path, jobs: int, ray: str | None) -> dict[str, object]:
    from simgap.fleet.run import run_fleet

    t0 = time.perf_counter()
    results, summary = run_fleet(rigs, out, jobs=jobs, ray=ray, progress=None)
    wall = time.perf_counter() - t0
    per = [r.wall_s for r in results if r.status == "done"]
    return {
        "wall_s": wall,
        "per_rig_s": per,
        "failed": [r.name for r in results if r.status == "failed"],
        "summary": summary.to_dict(),
        "flagged": summary.flagged_arms(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--arms", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per episode")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    model = args.data / "so101" / "so101.xml"
    if not model.is_file():
        print(f"skip: no SO-101 model at {model}")
        return 0
    try:
        import ray
    except ImportError:
        print("skip: ray is not installed (pip install 'simgap[ray]')")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        rigs = _benches(root, model, args.arms, args.duration)
        t_make = time.perf_counter() - t0
        local = _run(rigs, root / "local", args.jobs, None)
        ray.init(
            num_cpus=args.jobs,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
        try:
            t1 = time.perf_counter()
            on_ray = _run(rigs, root / "ray", args.jobs, "auto")
            on_ray["wall_s"] = time.perf_counter() - t1
        finally:
            ray.shutdown()
    same = local["summary"] == on_ray["summary"]
    print(
        f"fleet of {args.arms} SO-101 arms ({args.duration:g} s, one episode each; benches "
        f"made in {t_make:.1f} s), {args.jobs} workers"
    )
    print(
        f"{'backend':<18}{'wall [s]':>10}{'per rig median [s]':>20}{'min-max [s]':>16}"
        f"{'overhead [s]':>14}"
    )
    for name, r in (("local processes", local), ("ray (local)", on_ray)):
        per = list(r["per_rig_s"])  # type: ignore[call-overload]
        ideal = sum(per) / args.jobs if per else 0.0
        print(
            f"{name:<18}{r['wall_s']:>10.1f}"
            f"{statistics.median(per) if per else float('nan'):>20.1f}"
            f"{(min(per) if per else 0):>8.1f}-{(max(per) if per else 0):<7.1f}"
            f"{float(r['wall_s']) - ideal:>14.1f}"
        )  # type: ignore[arg-type]
    print(f"same numbers on both: {same}; flagged: {local['flagged']}")
    per_rig = statistics.median(list(local["per_rig_s"]))  # type: ignore[call-overload]
    print(
        f"growth: about {per_rig:.1f} s per rig / {args.jobs} workers = "
        f"{per_rig / args.jobs:.1f} s of wall time per added arm"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "arms": args.arms,
                    "jobs": args.jobs,
                    "local": {k: local[k] for k in ("wall_s", "per_rig_s", "failed", "flagged")},
                    "ray": {k: on_ray[k] for k in ("wall_s", "per_rig_s", "failed", "flagged")},
                    "same_numbers": same,
                },
                indent=2,
            )
            + "\n"
        )
    return 0 if same and not local["failed"] and not on_ray["failed"] else 1


if __name__ == "__main__":
    sys.exit(main())
