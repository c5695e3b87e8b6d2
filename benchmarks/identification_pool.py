"""Pool the JSON results of several ``benchmarks/identification.py`` runs (issue 12).

Each run draws a few benches from its own ``--seed0``; this reads their ``--json`` files,
keeps one row per (bench seed, frame rate) and prints the same tables as one long run
(``identification.summarise``), then per rate:

- identified parameters inside their 95 % intervals (covered / (covered + missed)): the
  coverage of the intervals actually stated, with its exact 95 % CI;
- where the misses sit, by the joint's force saturation (the fraction of samples at the
  force limit, truth-free) and by the fit's RMS over the stated noise floor (truth-free)
  beside the fit's RMS over the planted truth's own RMS (needs the truth).

Run from the repository root:
    python benchmarks/identification_pool.py RUN1.json RUN2.json ... [--json pooled.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import identification as ident  # noqa: E402

SAT_BANDS = ((0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01))
RATIO_BANDS = ((0.0, 1.0), (1.0, 1.5), (1.5, 2.0), (2.0, float("inf")))


def load_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """Rows of every file, one per (seed, fps); a repeated bench keeps its first row."""
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for p in paths:
        try:
            data = json.loads(p.read_text())
            benches = data["benches"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SystemExit(
                f"error: {p}: not an identification.py --json result ({e}); "
                "fix: pass the files that benchmark wrote"
            ) from None
        for r in benches:
            rows.setdefault((int(r["seed"]), int(r["fps"])), r)
    return list(rows.values())


def joint_params(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (faulty bench, joint, parameter) with an interval or a declaration."""
    out = []
    for r in rows:
        fig = r.get("figures_actuator") or {}
        if not r["faulty"] or not fig:
            continue
        conv = r.get("convergence") or {}
        sat = fig.get("force_saturation") or {}
        floor = fig.get("noise_floor_rad") or {}
        ivals = fig.get("params_interval") or {}
        noid = fig.get("not_identifiable") or {}
        for j, jt in r["truth"].items():
            fit_rms = (conv.get("fit_rms_rad") or {}).get(j)
            fl = (floor.get(j) or {}).get("total_rad")
            for p in ident.PARAMS:
                state = ident.param_state(
                    ident.as_interval(ivals.get(j, {}).get(p)),
                    noid.get(j, {}).get(p),
                    jt["value"][p],
                )
                out.append(
                    {
                        "seed": r["seed"],
                        "fps": r["fps"],
                        "joint": j,
                        "param": p,
                        "state": state,
                        "saturation": sat.get(j),
                        "fit_over_floor": fit_rms / fl if fit_rms and fl else None,
                        "fit_over_truth": (conv.get("ratio") or {}).get(j),
                    }
                )
    return out


def _band_table(
    entries: list[dict[str, Any]], key: str, bands: tuple[tuple[float, float], ...], label: str
) -> None:
    print(f"  misses by {label}:")
    for lo, hi in bands:
        sel = [e for e in entries if e[key] is not None and lo <= e[key] < hi]
        c = sum(e["state"] == "covered" for e in sel)
        m = sum(e["state"] == "missed" for e in sel)
        d = sum(e["state"] == "declared" for e in sel)
        band = (
            f">= {lo:g}"
            if hi == float("inf")
            else f"{lo:g}-{min(hi, 1.0):g}"
            if key == "saturation"
            else f"{lo:g}-{hi:g}"
        )
        print(f"    {band:<9} covered {c:4d}  missed {m:3d}  declared {d:4d}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+", help="identification.py --json files")
    ap.add_argument("--json", type=Path, default=None, help="write the pooled summary here")
    args = ap.parse_args()
    rows = load_rows(args.runs)
    fps_list = sorted({int(r["fps"]) for r in rows})
    print(
        f"{len(rows)} benches from {len(args.runs)} runs: "
        + ", ".join(
            f"{fps} fps {sum(r['faulty'] for r in rows if r['fps'] == fps)} faulty + "
            f"{sum(not r['faulty'] for r in rows if r['fps'] == fps)} clean"
            for fps in fps_list
        )
    )
    summary, ok = ident.summarise(rows, fps_list)
    entries = joint_params(rows)
    for fps in fps_list:
        ent = [e for e in entries if e["fps"] == fps]
        c = sum(e["state"] == "covered" for e in ent)
        m = sum(e["state"] == "missed" for e in ent)
        print(f"\n{fps} fps: identified parameters inside their intervals {ident.pct(c, c + m)}")
        summary[f"identified_inside_{fps}"] = {
            "covered": c,
            "identified": c + m,
            "ci95": ident.clopper_pearson(c, c + m) if c + m else None,
        }
        stated = [e for e in ent if e["param"] not in ("kp", "kv")]
        _band_table(
            stated, "saturation", SAT_BANDS, "force saturation (damping, frictionloss, armature)"
        )
        _band_table(ent, "fit_over_floor", RATIO_BANDS, "fit RMS / noise floor (truth-free)")
        _band_table(ent, "fit_over_truth", RATIO_BANDS, "fit RMS / planted truth's RMS")
    print(f"\nall targets met: {ok}")
    if args.json:
        tmp = args.json.with_name(args.json.name + ".partial")
        tmp.write_text(
            json.dumps(
                {"runs": [str(p) for p in args.runs], "summary": summary, "params": entries},
                indent=1,
            )
        )
        tmp.replace(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
