"""Benchmark: BAM's own fitter under the leave-one-trajectory-type-out protocol of
``benchmarks/actuator.py``, on the 12 shared XL330 logs.

``benchmarks/actuator.py`` compares simgap's fits, each made without the held-out type,
with BAM's *shipped* XL330 parameters, which BAM fitted on logs of every type. This script
asks what BAM's own procedure does when it too is denied the held-out type: for each type,
BAM 1.0.2's ``python -m bam.process`` (200 Hz) and ``python -m bam.fit`` (its optuna CMA-ES
with BIPOP restarts, unseeded, ``--trials`` candidates) run on the logs of the two other
types, and the parameters it writes are scored on the held-out type's logs by BAM's own
``Simulator.rollout_log(simulate_control=True)``, the MAE ``bam.fit`` itself minimises
(mean over the logs of the type). BAM's shipped parameters are scored the same way beside.

Nothing here imports simgap: the figures are BAM's alone, so they can be held beside
``benchmarks/actuator.py``'s (``--simgap out.json`` prints its selected model's row).

Needs a Python with better-actuator-models 1.0.2 and what its ``bam.fit`` imports (optuna,
cmaes, wandb; wandb is imported, never used offline). Say 3.12:
    python3.12 -m venv /tmp/bam && /tmp/bam/bin/pip install better-actuator-models==1.0.2 \
        optuna cmaes wandb
    /tmp/bam/bin/python benchmarks/actuator_bam_fit.py [--data ../shared/data] \
        [--model m3] [--trials 2000] [--repeats 2] [--held-out none] [--simgap out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TYPES = ("lift_and_drop", "sin_sin", "up_and_down")


def _mae(model: Any, log: dict[str, Any]) -> float:
    """BAM's own score of one log (``bam.fit.compute_score``'s arithmetic)."""
    from bam import simulate

    pos = simulate.Simulator(model).rollout_log(log, simulate_control=True)[0]
    ref = np.array([e["position"] for e in log["entries"]])
    return float(np.mean(np.abs(np.array(pos) - ref)))


def _by_type(model: Any, logs: list[dict[str, Any]]) -> dict[str, float]:
    return {
        t: float(np.mean([_mae(model, lg) for lg in logs if lg["trajectory"] == t])) for t in TYPES
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--model", default="m3", help="BAM friction family (m1 ... m6)")
    ap.add_argument("--trials", type=int, default=2000, help="bam.fit --trials per fit")
    ap.add_argument(
        "--repeats",
        type=int,
        default=2,
        help="independent bam.fit runs per held-out type (it is unseeded)",
    )
    ap.add_argument(
        "--simgap",
        type=Path,
        default=None,
        help="a --json of benchmarks/actuator.py to print beside",
    )
    ap.add_argument(
        "--held-out",
        default=",".join(TYPES),
        help="comma-separated types to hold out in turn; 'none' fits on all "
        "12 logs (the training MAE of BAM's search, beside simgap's)",
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    helds = [h for h in args.held_out.split(",") if h]
    bad = [h for h in helds if h not in (*TYPES, "none")]
    if bad:
        ap.error(f"--held-out: unknown {bad}; valid: {', '.join((*TYPES, 'none'))}")
    raw = args.data / "bam_xl330" / "raw"
    if not raw.is_dir():
        print(f"skip: no XL330 logs at {raw}")
        return 0
    try:
        from bam.logs import Logs
        from bam.model import load_model
    except ImportError:
        print(
            "skip: BAM (better-actuator-models 1.0.2) is not installed in this Python; "
            "see this script's docstring"
        )
        return 0
    work = Path(tempfile.mkdtemp(prefix="simgap-bamfit-"))
    try:
        processed = work / "processed"
        processed.mkdir()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bam.process",
                "--raw",
                str(raw),
                "--logdir",
                str(processed),
                "--dt",
                "0.005",
            ],
            check=True,
            capture_output=True,
        )
        logs = Logs(str(processed)).logs
        rows: dict[str, Any] = {"shipped": {}, "folds": {}}
        for m in ("m1", "m3", args.model):
            rows["shipped"][m] = _by_type(load_model(motor_name="xl330", model=m), logs)
        for held in helds:
            fold = work / f"without_{held}"
            fold.mkdir()
            for lg in logs:
                if lg["trajectory"] != held:
                    name = Path(lg["filename"]).name
                    shutil.copy(processed / name, fold / name)
            runs = []
            for r in range(args.repeats):
                out = work / f"{held}_{r}.json"
                t0 = time.perf_counter()
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "bam.fit",
                        "--logdir",
                        str(fold),
                        "--actuator",
                        "xl330",
                        "--model",
                        args.model,
                        "--trials",
                        str(args.trials),
                        "--output",
                        str(out),
                    ],
                    check=True,
                    capture_output=True,
                    cwd=work,
                )
                secs = time.perf_counter() - t0
                model = load_model(str(out))
                score = _by_type(model, logs)
                params = json.loads(out.read_text())
                train = float(np.mean([_mae(model, lg) for lg in logs if lg["trajectory"] != held]))
                runs.append(
                    {
                        "held_out_rad": score.get(held, float("nan")),
                        "train_rad": train,
                        "by_type_rad": score,
                        "fit_s": secs,
                        "params": params,
                    }
                )
                what = "on all logs" if held == "none" else f"without {held}"
                scored = "" if held == "none" else f", held out {score[held]:.4f} rad"
                print(
                    f"bam.fit {args.model} {what} (run {r + 1}, {args.trials} trials, "
                    f"{secs:.0f} s): training {train:.4f} rad{scored}, armature "
                    f"{params.get('armature', float('nan')) * 1e3:.2f} g m^2",
                    flush=True,
                )
            rows["folds"][held] = runs
    finally:
        shutil.rmtree(work, ignore_errors=True)

    head = "".join(f"{t:>22}" for t in TYPES)
    print(f"\nheld-out MAE [rad] per held-out type\n{'model':<26}{head}")
    for m, by in rows["shipped"].items():
        print(f"{'BAM shipped ' + m:<26}" + "".join(f"{by[t]:>22.4f}" for t in TYPES))
    cells = []
    for t in TYPES:
        v = [r["held_out_rad"] for r in rows["folds"].get(t, [])]
        cells.append(f"{np.median(v):.4f} ({min(v):.3f}-{max(v):.3f})" if v else "-")
    if any(t in rows["folds"] for t in TYPES):
        print(
            f"{'bam.fit ' + args.model + ' type-out':<26}"
            + "".join(f"{c:>22}" for c in cells)
            + f"   median (range) of {args.repeats} runs"
        )
    if "none" in rows["folds"]:
        v = [r["train_rad"] for r in rows["folds"]["none"]]
        secs = [r["fit_s"] for r in rows["folds"]["none"]]
        print(
            f"bam.fit {args.model} on all {len(logs)} logs: training MAE "
            + ", ".join(f"{x:.4f}" for x in v)
            + " rad in "
            + ", ".join(f"{x:.0f}" for x in secs)
            + " s"
        )
    if args.simgap and args.simgap.is_file():
        sg = json.loads(args.simgap.read_text())
        fam = sg.get("friction_family")
        by = sg["rows"].get(f"rung servo ({fam})", {}).get("held_out_by_group_rad", {})
        if by:
            print(
                f"{'simgap selected ' + str(fam):<26}"
                + "".join(f"{by.get(t, float('nan')):>22.4f}" for t in TYPES)
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
