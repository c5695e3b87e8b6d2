"""Benchmark: fit time and held-out error of each actuator rung on the 12 real XL330 logs.

Leave-one-trajectory-out, the whole ladder (ideal -> delay_lag -> servo -> net). Target:
the whole ladder under 60 s on 2 cores; servo held-out MAE at most 0.08 rad (BAM's shipped
M1 scores 0.082 on these logs, its refit 0.060).

Run from the repository root:
    PYTHONPATH=src python benchmarks/actuator.py [--data ../shared/data] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--no-net", action="store_true")
    args = ap.parse_args()
    raw = args.data / "bam_xl330" / "raw"
    if not raw.is_dir():
        print(f"skip: no XL330 logs at {raw}")
        return 0
    warnings.simplefilter("ignore", RuntimeWarning)
    from simgap.branches.actuator import analyse
    from simgap.evidence.bam import read_bam_log

    t0 = time.perf_counter()
    logs = [read_bam_log(p) for p in sorted(raw.glob("*.json"))]
    t_read = time.perf_counter() - t0
    t1 = time.perf_counter()
    out, _ = analyse(logs, use_net=not args.no_net)
    total = time.perf_counter() - t1
    rows = out["joints"]["xl330"]["rungs"]
    print(f"read {len(logs)} logs in {t_read:.2f} s; whole ladder {total:.1f} s "
          f"(target < 60 s)")
    print(f"{'rung':<10} {'fit [s]':>8} {'train MAE':>10} {'held-out MAE':>13}")
    for r in rows:
        print(f"{r['model']:<10} {r['fit_time_s']:>8.2f} {r['train_mae_rad']:>10.4f} "
              f"{r['validation_mae_rad']:>13.4f}")
    print(f"selected: {out['joints']['xl330']['selected']} "
          f"({out['joints']['xl330']['stop_reason']})")
    print("reference (BAM's simulator, 16 logs): shipped M1 0.082, refit M1 0.060 rad")
    result = {"total_s": total, "read_s": t_read,
              "rungs": [{k: r[k] for k in ("model", "fit_time_s", "train_mae_rad",
                                           "validation_mae_rad")} for r in rows],
              "selected": out["joints"]["xl330"]["selected"]}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    servo = next(r for r in rows if r["model"] == "servo")
    return 0 if total < 60 and servo["validation_mae_rad"] <= 0.08 else 1


if __name__ == "__main__":
    sys.exit(main())
