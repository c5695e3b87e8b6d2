"""Benchmark: how much one held-out-type fold pins the servo parameters, on the 12 real
XL330 logs.

The fold trains on every trajectory type but one (default: lift_and_drop held out) and is
searched N times independently: one CMA-ES search per copy of the fold, each with the
ladder's budget, all copies in one lockstep batch (``fit_families`` draws a different
seed for every problem). Printed per search, best training MAE first: the training MAE,
the MAE on the held-out type, and the fitted parameters. Where equal training errors come
with different parameters and different held-out errors, the training types do not pin
what the held-out type needs. Then the held-out score of any one search is a draw, not a
property of the family.

Run from the repository root:
    PYTHONPATH=src python benchmarks/actuator_fold_spread.py [--family m1] [--searches 8]
        [--hold-out lift_and_drop] [--data ../shared/data] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--family", default="m1", help="friction family m1 ... m6")
    ap.add_argument("--searches", type=int, default=8)
    ap.add_argument("--hold-out", default="lift_and_drop", help="the trajectory type held out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--delay",
        action="store_true",
        help="also fit a transport delay (the ladder fits none on BAM logs)",
    )
    args = ap.parse_args()
    from actuator import load_xl330, xl330_raw

    raw = xl330_raw(args.data)
    if raw is None:
        return 0

    from simgap.actuator.families import XL330
    from simgap.actuator.family_fit import fit_families, per_log_mae
    from simgap.actuator.friction import friction_family
    from simgap.actuator.ladder import build_batch
    from simgap.errors import NameNotFoundError
    from simgap.fit import cma_es as cma_fit

    try:
        family = friction_family(args.family).name
    except NameNotFoundError as e:
        print(f"error: --family: {e}")
        return 2
    logs, types, loads, drives = load_xl330(raw)
    if args.hold_out not in set(types):
        print(
            f"error: --hold-out {args.hold_out!r} is not a trajectory type of these logs; "
            f"valid: {', '.join(sorted(set(types)))}"
        )
        return 2
    batch = build_batch(logs, 0, loads, drives)
    held = types == args.hold_out
    train = np.tile(~held, (args.searches, 1))
    fit = fit_families(
        batch, train, XL330, args.seed, [family], cma_fit.CmaSettings(), fit_delay=args.delay
    )[family]
    per = per_log_mae(fit.pred, batch)
    names = fit.space.names
    print(
        f"{family}, {args.searches} searches of the fold that holds out {args.hold_out} "
        f"({int(held.sum())} of {len(logs)} logs), seed {args.seed}"
    )
    print(f"{'train':>8}{'held-out':>10}  " + "".join(f"{n[:12]:>13}" for n in names))
    for r in np.argsort(fit.train_cost):
        print(
            f"{fit.train_cost[r]:8.4f}{per[r][held].mean():10.4f}  "
            + "".join(f"{v:13.4g}" for v in fit.x[r])
        )
    ho = per[:, held].mean(axis=1)
    print(
        f"training MAE {fit.train_cost.min():.4f}-{fit.train_cost.max():.4f} rad; "
        f"held-out {args.hold_out} MAE {ho.min():.4f}-{ho.max():.4f} rad"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
