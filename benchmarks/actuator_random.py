"""Benchmark: the servo ladder on XL330 benches drawn at random, against their truth.

Each bench is an M3 servo drawn inside the physical boxes and the datasheet's motor curve
(``families.XL330``; a draw outside the curve is drawn again, and counted), six 3 s BAM-format
logs (sin_sin, lift_and_drop, up_and_down at kp 200 and 800; BAM's recorder: no delay, the
header's voltage, the 1.75 A current limit; quantised to encoder counts plus 0.5 mrad noise),
fitted by the whole ladder (families m1, m3, m4). Printed per bench: the family selected,
its held-out and training MAE, and every identified parameter against its 95 % interval;
then the coverage over all benches. No bench is tuned to: draws come from ``--seed``.

Run from the repository root:
    PYTHONPATH=src python benchmarks/actuator_random.py [--benches 4] [--seed 2029]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def draw(rng: np.random.Generator) -> dict[str, float]:
    """One M3 XL330 truth (BAM names)."""
    return {
        "kt": rng.uniform(0.3, 0.45),
        "R": rng.uniform(2.5, 4.5),
        "armature": float(np.exp(rng.uniform(np.log(8e-4), np.log(4e-3)))),
        "q_offset": rng.uniform(-0.05, 0.05),
        "delay_s": 0.0,
        "friction_base": rng.uniform(0.002, 0.03),
        "friction_viscous": rng.uniform(0.001, 0.01),
        "load_friction_base": rng.uniform(0.05, 0.3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benches", type=int, default=4)
    ap.add_argument("--seed", type=int, default=2029)
    ap.add_argument(
        "--types",
        default="sin_sin,lift_and_drop,up_and_down",
        help="trajectory types of each bench's logs (without lift_and_drop no "
        "log has the torque off)",
    )
    ap.add_argument(
        "--delay-ms",
        type=float,
        default=0.0,
        help="a command latency planted in every log; the ladder fits BAM logs "
        "without one, as BAM does, so the fit is misspecified by it",
    )
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(ROOT))
    from tests.bam_synth import make_logs

    from simgap.actuator.families import XL330
    from simgap.actuator.ladder import LadderConfig, fit_joint
    from simgap.actuator.servo import bam_drive, pendulum_load
    from simgap.values.load import JointLoad

    rng = np.random.default_rng(args.seed)
    specs = [(k, kp) for k in args.types.split(",") for kp in (200, 800)]
    hits = total = redrawn = right_family = pinned = flagged = 0
    for b in range(args.benches):
        truth = draw(rng)
        while (
            XL330.curve_violation(
                *(np.array(truth[n]) for n in ("kt", "R", "friction_base", "friction_viscous"))
            )
            > 0
        ):
            redrawn += 1
            truth = draw(rng)
        truth["delay_s"] = args.delay_ms * 1e-3
        logs = make_logs(truth, "m3", specs, seed=args.seed + b, duration=3.0, noise_rad=5e-4)
        cfg = LadderConfig(
            noise_floor_rad=XL330.encoder_rad,
            use_net=False,
            families=("m1", "m3", "m4"),
            cma_evaluations=800,
            bootstrap_replicates=10,
            seed=args.seed + b,
        )
        res = fit_joint(
            logs,
            "xl330",
            [JointLoad(*pendulum_load(0.49, 0.1))] * len(logs),
            [bam_drive(lg.meta) for lg in logs],
            cfg,
        )
        servo = res.rung("servo")
        right_family += res.friction_family == "m3"
        cells = []
        for name, e in servo.params["intervals"].items():
            if name not in truth:
                continue
            if not e["identifiable"]:
                cells.append(f"{name} not identifiable ({e['reason']})")
                continue
            ok = e["low"] <= truth[name] <= e["high"]
            hits, total = hits + ok, total + 1
            cells.append(
                f"{name} {truth[name]:.4g} in [{e['low']:.4g}, {e['high']:.4g}]"
                + ("" if ok else " MISSED")
            )
        prof = servo.details["armature_profile"]
        pinned += not prof["reason"]
        cells.append(
            "armature profile "
            + ", ".join(
                f"x{p['factor']:g} +{p['rise_rad'] * 1e3:.2f} mrad at {p['delay_s'] * 1e3:.1f} ms"
                for p in prof["probes"]
            )
            + (": not identifiable" if prof["reason"] else ": pinned")
        )
        late = prof.get("latency_probe")
        if late:
            flagged += bool(prof["latency_reason"])
            cells.append(
                f"latency probe {late['delay_s'] * 1e3:.1f} ms, armature "
                f"{late['armature_kg_m2'] * 1e3:.2f} g m^2, gains "
                f"{late['gain_rad'] * 1e3:.2f} mrad: "
                + ("flagged" if prof["latency_reason"] else "not flagged")
            )
        print(
            f"bench {b}: {res.selected}/{res.friction_family}, held-out "
            f"{servo.validation_mae_rad:.4f} rad, train {servo.train_mae_rad:.4f}; "
            + "; ".join(cells),
            flush=True,
        )
    print(
        f"{args.benches} benches ({redrawn} draws outside the motor curve drawn again): "
        f"m3 selected on {right_family}; identified parameters inside their 95 % "
        f"intervals {hits}/{total}; armature pinned by the profile on {pinned}; "
        f"latency flagged on {flagged}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
