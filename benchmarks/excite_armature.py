"""Benchmark: does the episode ``simgap excite --for`` designs make armature identifiable, as
it predicts? (issue 34's last must-show)

On each SO-101 bench (``simgap.demo.factory``, the Menagerie model, a rig written without
knowledge of the faults) armature is planted on one arm joint drawn at random (a multiplier
drawn log-uniformly in [1.5, 2.5]), the other parameters nominal, a command delay drawn in
0-40 ms on every arm joint. The recording is identified as diagnose identifies it (the first
two episodes, ``FIT_SECONDS`` each). Where armature is declared not identifiable there,
``next_motion`` designs the episode for it (``check=False``: the design and its prediction
alone) and the episode is then simulated on the bench's *true* model through the bench's own
recorder (its clock, whole encoder counts), added to the recording, and identified again.

Printed per bench: the armature's 95 % half-width in log-multiplier (declared: its local,
linearised one) before and after, the shrink, the predicted half-width after and the
measured/predicted ratio, and whether the truth lies inside. The must-show: identified with
the truth inside, or a shrink of at least 3 x, with measured/predicted within [0.5, 2].

Run from the repository root (a bench takes 3-6 min on 2 cores):
    PYTHONPATH=src python benchmarks/excite_armature.py [--benches 4] [--seed0 3400]
        [--clock exact] [--max-hz 4] [--amplitude 1] [--substeps 1] [--max-delay 0.04]
        [--data ../shared/data] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ARM = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll")


def _halfwidth(iv: Any) -> float:
    lo, hi = (float(v) for v in iv)
    return 0.5 * math.log(hi / lo) if lo > 0 and hi > lo else math.inf


def one_bench(model: Path, seed: int, clock: str, work: Path, *, max_hz: float = 4.0,
              amplitude: float = 1.0, substeps: int = 1, max_delay_s: float = 0.040,
              ) -> dict[str, Any]:
    from simgap.actuator.excite_for import (
        _log,
        estimate_from_identification,
        identify_with,
        next_motion,
        outcome,
    )
    from simgap.branches.joint_dynamics import FIT_SECONDS, MAX_FIT_EPISODES, dataset_logs
    from simgap.demo.factory import apply_truth, make_so101_bench, nominal_model, quantise
    from simgap.demo.factory import simulate as simulate_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    rng = np.random.default_rng([seed, 34])
    joint = str(rng.choice(ARM))
    mult = float(np.exp(rng.uniform(np.log(1.5), np.log(2.5))))
    delays = {j: float(rng.uniform(0.0, max_delay_s)) for j in ARM}
    bench = make_so101_bench(work / f"bench-{seed}", model, seed, n_episodes=3,
                             faults={"armature": {joint: mult}, "delay_s": delays},
                             n_heldout=0, clock=clock, max_hz=max_hz,
                             amplitude=amplitude, substeps=substeps)
    rig = load_rig(bench.rig)
    ds = read_lerobot_dataset(bench.dataset)
    logs, targets, _ = dataset_logs(rig, ds, FIT_SECONDS)
    logs, targets = logs[:MAX_FIT_EPISODES], targets[:MAX_FIT_EPISODES]
    t0 = time.perf_counter()
    res0 = identify_with(rig, logs, targets, rig.clock)
    js = res0.to_json()
    js.update(fitted_episodes=len(logs), fit_seconds=FIT_SECONDS)
    truth = bench.joint(joint).value("armature")
    row: dict[str, Any] = {"seed": seed, "joint": joint, "multiplier": mult,
                           "truth": truth, "clock": clock, "max_hz": max_hz,
                           "substeps": substeps}
    before = outcome(res0, joint, "armature")
    row["before"] = before
    if "reason" not in before:
        row["status"] = "identified on the recording alone"
        row["inside_before"] = before["interval"][0] <= truth <= before["interval"][1]
        row["seconds"] = time.perf_counter() - t0
        return row
    est = estimate_from_identification(js, rig.name).only(["armature"], [joint])
    nm = next_motion(rig, est, logs, targets, float(bench.fps), check=False)
    design = nm.designs[0]
    m = nominal_model(bench.model)
    apply_truth(m, bench.truth)
    m.opt.timestep = m.opt.timestep / substeps
    true_delays = np.array([t.delay_s for t in bench.truth])
    q, _ = simulate_bench(m, nm.commands, float(bench.fps), true_delays,
                          "step" if clock == "step" else "exact")
    q = quantise(q, rig.encoder_rad)
    t = np.arange(nm.commands.shape[0]) / bench.fps
    res1 = identify_with(rig, [*logs, _log(t, nm.commands, rig.joint_names, "designed")],
                         [*targets, q], rig.clock)
    after = outcome(res1, joint, "armature")
    hw_before = _halfwidth(before["local_interval"])
    iv_after = after.get("interval", after.get("local_interval"))
    hw_after = _halfwidth(iv_after)
    predicted = float(design.after.halfwidth[design.after.columns.index("armature")])
    row.update({
        "status": "identified" if "interval" in after else "still declared",
        "after": after, "segment": design.segment.name, "episode_s": float(t[-1]),
        "halfwidth_before": hw_before, "halfwidth_after": hw_after,
        "halfwidth_predicted": predicted,
        "predicted_before": float(design.before.halfwidth[
            design.before.columns.index("armature")]),
        "shrink": hw_before / hw_after if hw_after > 0 else math.inf,
        "measured_over_predicted": hw_after / predicted,
        "inside_after": float(iv_after[0]) <= truth <= float(iv_after[1]),
        "seconds": time.perf_counter() - t0})
    ok_id = row["status"] == "identified" and row["inside_after"]
    row["must_show"] = bool((ok_id or row["shrink"] >= 3.0)
                            and 0.5 <= row["measured_over_predicted"] <= 2.0)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benches", type=int, default=4)
    ap.add_argument("--seed0", type=int, default=3400)
    ap.add_argument("--clock", default="exact")
    ap.add_argument("--max-hz", type=float, default=4.0,
                    help="the recording's highest frequency (1: a slow recording)")
    ap.add_argument("--amplitude", type=float, default=1.0)
    ap.add_argument("--max-delay", type=float, default=0.040,
                    help="the arm joints' delays are drawn in [0, this] [s] (0: none)")
    ap.add_argument("--substeps", type=int, default=1,
                    help="physics steps per model step for the truth (2: a smooth truth)")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    model = a.data / "so101" / "so101.xml"
    if not model.is_file():
        print(f"the SO-101 model is absent: {model}", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="simgap-excite-bench-") as tmp:
        for i in range(a.benches):
            r = one_bench(model, a.seed0 + i, a.clock, Path(tmp), max_hz=a.max_hz,
                          amplitude=a.amplitude, substeps=a.substeps,
                          max_delay_s=a.max_delay)
            rows.append(r)
            if "halfwidth_after" in r:
                print(f"seed {r['seed']} {r['joint']} x{r['multiplier']:.2f}: "
                      f"{r['status']}, half-width {r['halfwidth_before']:.3f} -> "
                      f"{r['halfwidth_after']:.3f} (x{r['shrink']:.1f} narrower; predicted "
                      f"{r['halfwidth_predicted']:.3f}, measured/predicted "
                      f"{r['measured_over_predicted']:.2f}), truth inside "
                      f"{r['inside_after']}, {r['segment']}, episode {r['episode_s']:.0f} s, "
                      f"{r['seconds']:.0f} s", flush=True)
            else:
                print(f"seed {r['seed']} {r['joint']} x{r['multiplier']:.2f}: {r['status']}",
                      flush=True)
    done = [r for r in rows if "must_show" in r]
    print(f"must-show met on {sum(r['must_show'] for r in done)} of {len(done)} benches "
          f"where armature was declared ({len(rows) - len(done)} identified it already)")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
