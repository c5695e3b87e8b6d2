"""Reference outputs of the batched Levenberg-Marquardt's two users, to compare checkouts.

Run from the repository root::

    PYTHONPATH=src python benchmarks/lm_reference.py --out before.npz
    PYTHONPATH=src python benchmarks/lm_reference.py --out after.npz --compare before.npz

It runs ``simgap.fit.lm.lm_fit`` and ``simgap.fit.profile.grid_fit`` of the checkout on
``PYTHONPATH`` on the deterministic synthetic problems of ``tests/test_fit_lm_reference.py``
(a saturating first-order lag over folds; two coupled delayed joints over a delay grid: box
bounds active, diverging candidates, kinks, the forward/central/joint-block Jacobians) and
saves every output (theta, cost, iterations; z, ssr, jac, resid, iterations, n_evals) and a
digest of every evaluation call's candidates. ``--compare`` states, per array, whether the
two files are bitwise equal (NaN where NaN), and exits 1 where one is not.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_fit_lm_reference import (  # noqa: E402
    GRID_CASES,
    LM_CASES,
    Logged,
    run_grid_case,
    run_lm_case,
)


def _calls_digest(log: Logged) -> np.ndarray:
    """sha256 of every call's candidates and tags, in order, as a uint8 array."""
    h = hashlib.sha256()
    for x, tags in log.calls:
        h.update(np.ascontiguousarray(x).tobytes())
        h.update(np.ascontiguousarray(tags).tobytes())
    return np.frombuffer(h.digest(), dtype=np.uint8)


def outputs() -> dict[str, np.ndarray]:
    """Every output of both fits on every reference problem, keyed ``fit/case/field``."""
    out: dict[str, np.ndarray] = {}
    for name in sorted(LM_CASES):
        fit, log = run_lm_case(name)
        out[f"lm/{name}/theta"] = fit.theta
        out[f"lm/{name}/cost"] = fit.cost
        out[f"lm/{name}/iterations"] = np.array(fit.iterations)
        out[f"lm/{name}/calls"] = _calls_digest(log)
    for name in sorted(GRID_CASES):
        grid, log = run_grid_case(name)
        for key in ("delays", "z", "ssr", "jac", "resid"):
            out[f"grid/{name}/{key}"] = getattr(grid, key)
        out[f"grid/{name}/iterations"] = np.array(grid.iterations)
        out[f"grid/{name}/n_evals"] = np.array(grid.n_evals)
        out[f"grid/{name}/calls"] = _calls_digest(log)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="where to save the outputs (.npz)")
    ap.add_argument("--compare", type=Path, help="an earlier --out file to compare with")
    args = ap.parse_args()
    now = outputs()
    np.savez(args.out, **now)
    print(f"{len(now)} arrays saved to {args.out}")
    if args.compare is None:
        return 0
    with np.load(args.compare) as ref:
        keys = sorted(set(ref.files) | set(now))
        differ = [
            k
            for k in keys
            if k not in ref.files
            or k not in now
            or ref[k].shape != now[k].shape
            or not np.array_equal(ref[k], now[k], equal_nan=True)
        ]
    for k in differ:
        print(f"DIFFERS: {k}")
    print(f"{len(keys) - len(differ)} of {len(keys)} arrays bitwise identical to {args.compare}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
