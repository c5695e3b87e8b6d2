"""Benchmark: does the model simgap hands back replay like the arm? (issue 40)

Draws SO-101 benches with ``simgap.demo.factory`` (the Menagerie SO-101, a rig written
without knowledge of the faults) under each recorder clock (``RECORDER_CLOCKS``: reads and
commands at the frame stamps, on the physics step's grid, or with a uniform jitter), faults
drawn at random from issue 40's ranges (delay 0-80 ms for the arm; kp x0.4-1.6, damping
x0.5-2, frictionloss x1-5, armature x1-2.5, per joint, each parameter faulty with
probability one half; force range is not planted: the factory cannot plant it yet), 3
episodes of 20 s and one held-out episode, plus healthy benches. On each it runs the joint
identification of record (``identify_rig``), builds the patch ``diagnose`` would offer
(``patch_settings``) and replays the held-out episode with the identified clock under the
nominal model, the true model and the patch. Printed per bench and in summary: the held-out
mean absolute joint error of each, the share of the nominal-to-truth gap the patch closes
(target >= 80 % on >= 90 % of faulty benches; median and worst), the chosen clock against the
recorder's, and the healthy benches implicated (target: none).

Run from the repository root (a bench takes 2-5 min on 2 cores):
    PYTHONPATH=src python benchmarks/replay_gap.py [--faulty 20] [--clean 5] [--fps 30,100]
        [--seconds 20] [--seed0 400000] [--clocks exact,step,jitter] [--amplitude 1]
        [--max-hz 4] [--data ../shared/data] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RANGES = {
    "kp": (0.4, 1.6),
    "damping": (0.5, 2.0),
    "frictionloss": (1.0, 5.0),
    "armature": (1.0, 2.5),
}
DELAY_RANGE_S = (0.0, 0.080)
CLOCKS = ("exact", "step", "jitter")


def draw(seed: int, joints: tuple[str, ...]) -> dict[str, Any]:
    """Issue 40's faults: each parameter faulty with probability 1/2, per joint."""
    rng = np.random.default_rng([seed, 40])
    out: dict[str, Any] = {}
    for p, (lo, hi) in RANGES.items():
        if rng.random() < 0.5:
            out[p] = {j: float(np.exp(rng.uniform(np.log(lo), np.log(hi)))) for j in joints}
    out["delay_s"] = float(rng.uniform(*DELAY_RANGE_S))
    return out


def one(
    model: Path,
    work: Path,
    seed: int,
    fps: int,
    clock: str,
    faults: Any,
    seconds: float,
    amplitude: float = 1.0,
    max_hz: float = 4.0,
) -> dict[str, Any]:
    from simgap.branches.actuator_dataset import patch_settings
    from simgap.branches.joint_dynamics import identify_rig
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.rig import load_rig
    from simgap.selftest.score import gap_closed
    from simgap.sim.actuator_patch import ActuatorSettings, write_actuator_patch
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    folder = work / f"bench-{seed}-{fps}-{clock}"
    bench = make_so101_bench(
        folder,
        model,
        seed=seed,
        fps=fps,
        n_episodes=3,
        duration_s=seconds,
        faults=faults,
        n_heldout=1,
        clock=clock,
        amplitude=amplitude,
        max_hz=max_hz,
    )
    rig = load_rig(bench.rig)
    t0 = time.process_time()
    js = identify_rig(rig, read_lerobot_dataset(rig.evidence.dataset), seed=seed)
    cpu = time.process_time() - t0
    chosen = js["clock"]["chosen"]
    patch = patch_settings(js, {})
    truth = {
        t.name: ActuatorSettings(
            kp=t.value("kp"),
            kv=t.value("kv"),
            damping=t.value("damping"),
            frictionloss=t.value("frictionloss"),
            armature=t.value("armature"),
            delay_s=t.delay_s or None,
        )
        for t in bench.truth
    }

    def compiled(settings: Any, name: str) -> Any:
        path = model if not settings else write_actuator_patch(model, folder / name, settings)
        return compile_spec(strip_visuals(load_spec(path)), path)

    held = next(iter(dataset_trajectories(read_lerobot_dataset(bench.heldout), rig)))
    mae = {}
    for name, settings in (("nominal", None), ("truth", truth), ("patch", patch)):
        q, _ = replay(compiled(settings, f"{name}.xml"), held, chosen)
        mae[name] = float(np.nanmean(np.abs(q - held.q)))
    closed = gap_closed(mae["nominal"], mae["truth"], mae["patch"])
    planted = planted_parameters(js, bench.truth)
    return {
        "seed": seed,
        "fps": fps,
        "clock": clock,
        "chosen_clock": chosen,
        "faulty": bench.faulty,
        "verdict": js["verdict"],
        "mae_rad": mae,
        "gap_closed": closed,
        "cpu_s": cpu,
        "planted": planted,
        "delay_true_s": [t.delay_s for t in bench.truth],
        "delay_s": list(js["delay_s"].values()),
        "delay_interval_s": list(js["delay_interval_s"].values()),
    }


def planted_parameters(js: dict[str, Any], truth: Any) -> dict[str, int]:
    """Of the planted parameters (factor off 1 by more than 5 %), how many the
    identification states with an interval holding the truth, with one missing it, and
    declares not identifiable (``simgap.selftest.score``, which ``simgap selftest``
    scores by too)."""
    from simgap.selftest.score import planted_parameters as count

    return count(js, truth, RANGES)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--faulty", type=int, default=20)
    ap.add_argument("--clean", type=int, default=5)
    ap.add_argument("--fps", default="30,100")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--seed0", type=int, default=400000)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument(
        "--amplitude",
        type=float,
        default=1.0,
        help="excitation span, a fraction of the factory's default",
    )
    ap.add_argument("--max-hz", type=float, default=4.0, help="highest excitation frequency")
    ap.add_argument("--clocks", default=",".join(CLOCKS))
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    model = (a.data / "so101" / "so101.xml").resolve()
    if not model.is_file():
        print(f"skip: no SO-101 model at {model}", file=sys.stderr)
        return 0
    from simgap.demo.twin import JOINTS

    fps_list = [int(f) for f in a.fps.split(",")]
    clocks = a.clocks.split(",")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.faulty + a.clean):
            seed = a.seed0 + i
            faulty = i < a.faulty
            r = one(
                model,
                Path(tmp),
                seed,
                fps_list[i % len(fps_list)],
                clocks[i % len(clocks)],
                draw(seed, JOINTS) if faulty else None,
                a.seconds,
                a.amplitude,
                a.max_hz,
            )
            rows.append(r)
            m = r["mae_rad"]
            print(
                f"seed {seed} {r['fps']} fps {r['clock']:6s} (chosen {r['chosen_clock']}) "
                f"{'faulty' if faulty else 'healthy'}: {r['verdict']}; held-out MAE "
                f"nominal {m['nominal'] * 1e3:.2f} truth {m['truth'] * 1e3:.2f} patch "
                f"{m['patch'] * 1e3:.2f} mrad; gap closed {100 * r['gap_closed']:.0f}%; "
                f"{r['cpu_s']:.0f} s CPU",
                flush=True,
            )
    faulty_rows = [r for r in rows if r["faulty"]]
    closed = np.array([r["gap_closed"] for r in faulty_rows])
    if closed.size:
        print(
            f"faulty: gap closed median {100 * np.nanmedian(closed):.0f}%, worst "
            f"{100 * np.nanmin(closed):.0f}%, >= 80% on {int(np.sum(closed >= 0.8))} of "
            f"{closed.size} (target 90%)"
        )
    pl = {k: sum(r["planted"][k] for r in faulty_rows) for k in ("inside", "outside", "declared")}
    print(
        f"planted parameters: {pl['inside']} identified inside their interval, "
        f"{pl['outside']} identified outside it, {pl['declared']} declared not identifiable"
    )
    healthy = [r for r in rows if not r["faulty"]]
    print(
        f"healthy: {sum(r['verdict'] == 'implicated' for r in healthy)} of {len(healthy)} "
        "implicated (target 0)"
    )
    print(
        f"clock identified as recorded (exact/step): "
        f"{sum(r['chosen_clock'] == r['clock'] for r in rows if r['clock'] != 'jitter')} of "
        f"{sum(r['clock'] != 'jitter' for r in rows)}"
    )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
