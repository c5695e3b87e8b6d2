"""Benchmark: identification on SO-101 benches nobody designed (issue 12).

Draws benches with ``simgap.demo.factory`` (the Menagerie SO-101 with faults drawn from the
issue's ranges: delay 0-80 ms, kp x0.4-1.5, kv and damping x0.5-3, frictionloss x0.5-4,
armature x0.5-2; 3 episodes of 20 s; a rig written without knowledge of the faults), runs
``simgap.diagnose.diagnose_rig`` on each, and measures against the planted truth:

- clean benches: the branches implicated (target: none on any clean bench);
- the delay: the actuator finding's ``delay_interval_s`` holds the truth on >= 90% of joints
  at 100 fps and >= 80% at 30 fps, with the interval widths;
- the parameters (kp kv damping frictionloss armature per joint): inside
  ``params_interval`` or named in ``not_identifiable`` with a reason (target >= 90%), for the
  actuator finding (the estimate of record) and the controller finding (its cross-check);
- offered patches (``artifacts.mjcf_patch``): stable and better than the nominal model on the
  bench's held-out episode (``simgap.sim.patch_proof.prove_patch``); ``artifacts.isaaclab``
  executes against permissive Isaac Lab stand-ins with finite values only.

Findings that lack these keys (an engine before issue 12's) count as misses, so the numbers
only become meaningful once the identification engine lands.

Run from the repository root (the default, 50 benches, takes a long time on 2 cores; use
``--jobs`` on a bigger machine):
    PYTHONPATH=src python benchmarks/identification.py [--quick] [--faulty 20] [--clean 5]
        [--fps 30,100] [--jobs 1] [--data ../shared/data] [--work DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
import types
from collections.abc import Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ("kp", "kv", "damping", "frictionloss", "armature")
CONTROLLER_PARAMS = ("kp", "kv")
"""What the controller branch fits (its gain fit); the joint's own dynamics are the
actuator finding's."""
TARGET_DELAY = {30: 0.80, 100: 0.90}
TARGET_PARAMS = 0.90
FIGURES = (
    "delay_s",
    "delay_interval_s",
    "params",
    "params_interval",
    "not_identifiable",
    "shared_delay_s",
    "shared_delay_interval_s",
    "force_saturation",
    "noise_floor_rad",
)


def _finding(findings: list[dict[str, Any]], branch: str) -> dict[str, Any] | None:
    return next((f for f in findings if f["branch"] == branch), None)


def as_interval(v: Any) -> tuple[float, float] | None:
    """A finite [lo, hi] pair from the JSON, else None."""
    if (
        isinstance(v, (list, tuple))
        and len(v) == 2
        and all(isinstance(x, (int, float)) and math.isfinite(x) for x in v)
    ):
        return float(v[0]), float(v[1])
    return None


def param_state(interval: tuple[float, float] | None, reason: Any, value: float) -> str:
    """``covered`` (the truth in the stated 95 % interval), ``declared`` (no interval, a
    reason instead) or ``missed`` (an interval without the truth, or neither)."""
    if interval is not None:
        return "covered" if interval[0] <= value <= interval[1] else "missed"
    return "declared" if reason else "missed"


def param_scores(
    fig: Mapping[str, Any], truth: Mapping[str, Any], kinds: tuple[str, ...] = PARAMS
) -> dict[str, Any]:
    """Per parameter of ``kinds``: covered (truth in the 95% interval), declared not
    identifiable (with a reason), missed (neither). Kinds outside ``kinds`` score nothing
    (all zero)."""
    ivals = fig.get("params_interval") or {}
    noid = fig.get("not_identifiable") or {}
    out: dict[str, Any] = {
        p: {"covered": 0, "declared": 0, "missed": 0, "rel_width": []} for p in PARAMS
    }
    for j, jt in truth.items():
        for p in kinds:
            val = jt["value"][p]
            iv = as_interval((ivals.get(j) or {}).get(p))
            state = param_state(iv, (noid.get(j) or {}).get(p), val)
            out[p][state] += 1
            if state == "covered" and iv is not None:
                out[p]["rel_width"].append((iv[1] - iv[0]) / abs(val) if val else math.inf)
    return out


def delay_scores(fig: Mapping[str, Any], truth: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per joint: the truth, the estimate, the interval and whether it holds the truth."""
    est = fig.get("delay_s") or {}
    ivals = fig.get("delay_interval_s") or {}
    rows = []
    for j, jt in truth.items():
        iv = as_interval(ivals.get(j))
        rows.append(
            {
                "joint": j,
                "truth_s": jt["delay_s"],
                "estimate_s": est.get(j),
                "interval_s": iv,
                "covered": iv is not None and iv[0] - 1e-9 <= jt["delay_s"] <= iv[1] + 1e-9,
                "width_s": None if iv is None else iv[1] - iv[0],
            }
        )
    return rows


def _resolve(p: str, out_dir: Path) -> Path:
    q = Path(p)
    return q if q.is_absolute() else out_dir / q


def check_isaaclab(path: Path) -> dict[str, Any]:
    """Execute the generated module against permissive stand-ins of ``isaaclab.actuators``:
    it must run, and every number in every configuration must be finite."""
    made: list[tuple[str, dict[str, Any]]] = []

    def cls(name: str) -> type:
        def init(self: Any, **kw: Any) -> None:
            made.append((name, kw))

        return type(name, (), {"__init__": init})

    mod = types.ModuleType("isaaclab.actuators")
    for n in (
        "DelayedPDActuatorCfg",
        "DCMotorCfg",
        "ActuatorNetMLPCfg",
        "IdealPDActuatorCfg",
        "ImplicitActuatorCfg",
    ):
        setattr(mod, n, cls(n))
    saved = {k: sys.modules.get(k) for k in ("isaaclab", "isaaclab.actuators")}
    sys.modules["isaaclab"], sys.modules["isaaclab.actuators"] = types.ModuleType("isaaclab"), mod
    try:
        exec(compile(path.read_text(), str(path), "exec"), {})  # noqa: S102
        ok, err = True, ""
    except Exception as e:  # noqa: BLE001
        ok, err = False, f"{type(e).__name__}: {e}"
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def numbers(v: Any) -> Iterator[float]:
        if isinstance(v, dict):
            for x in v.values():
                yield from numbers(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                yield from numbers(x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            yield float(v)

    finite = all(math.isfinite(x) for _, kw in made for x in numbers(kw))
    return {
        "runs": ok,
        "error": err,
        "configs": len(made),
        "finite": finite,
        "classes": sorted({n for n, _ in made}),
    }


def run_one(job: Mapping[str, Any]) -> dict[str, Any]:
    """Build one bench, diagnose it, score it against its truth."""
    import warnings

    warnings.simplefilter("ignore")
    from simgap.demo.factory import make_so101_bench
    from simgap.diagnose import diagnose_rig
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.rig import load_rig
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import prove_patch

    folder = (
        Path(job["work"]) / f"{'faulty' if job['faulty'] else 'clean'}-{job['fps']}-{job['seed']}"
    )
    t0 = time.perf_counter()
    bench = make_so101_bench(
        folder,
        job["model"],
        job["seed"],
        fps=job["fps"],
        duration_s=job["duration_s"],
        faults="random" if job["faulty"] else None,
    )
    t_build = time.perf_counter() - t0
    truth = {t.name: t.to_dict() for t in bench.truth}
    out_dir = folder / "diagnosis"
    t1 = time.perf_counter()
    try:
        if job.get("engine_only"):
            diag = _engine_only(bench, job["duration_s"], job.get("joint_blocks", True))
        else:
            diag = diagnose_rig(bench.rig, out_dir, force=True).to_dict()
        error = ""
    except Exception as e:  # noqa: BLE001  (a crash is a result here)
        diag, error = {"findings": [], "stop": {}}, f"{type(e).__name__}: {e}"
    t_diag = time.perf_counter() - t1
    findings = diag["findings"]
    row: dict[str, Any] = {
        "seed": job["seed"],
        "fps": job["fps"],
        "faulty": job["faulty"],
        "error": error,
        "build_s": t_build,
        "diagnose_s": t_diag,
        "truth": truth,
        "implicated": sorted({f["branch"] for f in findings if f["verdict"] == "implicated"}),
        "stop": diag.get("stop", {}),
    }
    act, ctl = _finding(findings, "actuator"), _finding(findings, "controller")
    row["delay"] = delay_scores((act or {}).get("figures", {}), truth)
    row["params_actuator"] = param_scores((act or {}).get("figures", {}), truth)
    # engine-only runs have no controller branch: not scored (None), rather than all missed;
    # the controller fits the gains only (CONTROLLER_PARAMS), so only those are scored
    row["params_controller"] = (
        None
        if job.get("engine_only")
        else param_scores((ctl or {}).get("figures", {}), truth, CONTROLLER_PARAMS)
    )
    fig = (act or {}).get("figures", {})
    row["figures_actuator"] = {k: fig.get(k) for k in FIGURES}  # to look into a miss
    row["convergence"] = convergence(bench, fig) if fig.get("identified_rms_rad") else None
    arts = (act or {}).get("artifacts") or {}
    row["patch"] = None
    if arts.get("mjcf_patch"):
        patched = _resolve(arts["mjcf_patch"], out_dir)
        rig = load_rig(bench.rig)
        assert bench.heldout is not None
        held = dataset_trajectories(read_lerobot_dataset(bench.heldout), rig)
        proof = prove_patch(
            compile_spec(strip_visuals(load_spec(bench.model))),
            compile_spec(strip_visuals(load_spec(patched))),
            held,
        )
        row["patch"] = proof.to_dict()
    row["isaaclab"] = (
        check_isaaclab(_resolve(arts["isaaclab"], out_dir)) if arts.get("isaaclab") else None
    )
    return row


def convergence(bench: Any, fig: Mapping[str, Any]) -> dict[str, Any]:
    """Per joint, the identified model's RMS residual and the planted truth's own on the same
    fitted episodes (the truth replayed by the engine's own ``JointProblem``). The truth is
    in the model class here, so a ratio well above 1 is a fit that stopped short of the
    minimum (a local minimum or too few iterations), not a model that cannot do better:
    what the profile and the intervals were computed from."""
    from simgap.actuator.joint_id import KINDS, JointProblem
    from simgap.branches.joint_dynamics import dataset_logs
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    rig = load_rig(bench.rig)
    assert rig.evidence.dataset is not None  # the factory's rig names its dataset
    logs, targets, _ = dataset_logs(
        rig, read_lerobot_dataset(rig.evidence.dataset), float(fig["fit_seconds"])
    )
    n = int(fig["fitted_episodes"])
    jp = JointProblem(
        rig.model_path,
        rig.joint_names,
        logs[:n],
        targets[:n],
        KINDS,
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
    )
    try:
        by_name = {t.name: t for t in bench.truth}
        val = np.array([[by_name[j].value(k) for k in KINDS] for j in jp.joints])
        z = np.log(val / jp.ref).reshape(-1)
        delay = float(np.median([t.delay_s for t in bench.truth]))
        r = jp.residuals(z[None], np.array([delay]))[0]
    finally:
        jp.close()
    truth_rms = np.sqrt(np.mean(r**2, axis=-1))
    fit_rms = np.array([float(fig["identified_rms_rad"][j]) for j in jp.joints])
    return {
        "truth_rms_rad": dict(zip(jp.joints, truth_rms.tolist(), strict=True)),
        "fit_rms_rad": dict(zip(jp.joints, fit_rms.tolist(), strict=True)),
        "ratio": dict(
            zip(jp.joints, (fit_rms / np.maximum(truth_rms, 1e-12)).tolist(), strict=True)
        ),
    }


def _engine_only(bench: Any, seconds: float, joint_blocks: bool = True) -> dict[str, Any]:
    """The joint identification of record alone (``identify_rig``, the figures the actuator
    finding carries), without the other branches: a faster coverage check of the engine
    (``joint_blocks``: its LM on the joint-block Jacobian, ``IdConfig.joint_blocks``)."""
    from simgap.branches.joint_dynamics import identify_rig
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    rig = load_rig(bench.rig)
    js = identify_rig(
        rig,
        read_lerobot_dataset(rig.evidence.dataset),
        options={"joint_id_seconds": seconds, "joint_id_joint_blocks": joint_blocks},
    )
    return {
        "findings": [
            {"branch": "actuator", "verdict": js["verdict"], "figures": js, "artifacts": {}}
        ],
        "stop": {},
    }


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion k/n."""
    from scipy.stats import beta

    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def pct(a: int, b: int) -> str:
    if not b:
        return "0/0"
    lo, hi = clopper_pearson(a, b)
    return f"{a}/{b} ({a / b:.0%}, 95% CI {lo:.0%}-{hi:.0%})"


def summarise(rows: list[dict[str, Any]], fps_list: list[int]) -> tuple[dict[str, Any], bool]:
    """Print the tables; returns (summary, whether every target was met)."""
    ok = True
    summary: dict[str, Any] = {}
    clean = [r for r in rows if not r["faulty"]]
    bad = [r for r in clean if r["implicated"]]
    print(f"\nclean benches: {len(clean)}; with a branch implicated: {len(bad)} (target 0)")
    for r in bad:
        print(f"  seed {r['seed']} @ {r['fps']} fps: {', '.join(r['implicated'])}")
    ok &= not bad and bool(clean)
    summary["clean_implicated"] = [(r["seed"], r["fps"], r["implicated"]) for r in bad]
    for fps in fps_list:
        faulty = [r for r in rows if r["faulty"] and r["fps"] == fps]
        d = [x for r in faulty for x in r["delay"]]
        cov = sum(x["covered"] for x in d)
        widths = np.array([x["width_s"] for x in d if x["width_s"] is not None]) * 1e3
        w = (
            f"widths median {np.median(widths):.1f} ms, p90 {np.percentile(widths, 90):.1f} ms"
            if widths.size
            else "no intervals reported"
        )
        met = bool(d) and cov / len(d) >= TARGET_DELAY[fps]
        ok &= met
        print(
            f"\n{fps} fps, {len(faulty)} faulty benches: delay interval holds the truth on "
            f"{pct(cov, len(d))} joints (target {TARGET_DELAY[fps]:.0%}); {w}"
        )
        for x in [x for x in d if not x["covered"]][:6]:
            iv = x["interval_s"]
            print(
                f"  missed: {x['joint']} truth {x['truth_s'] * 1e3:.1f} ms, interval "
                + (f"[{iv[0] * 1e3:.1f}, {iv[1] * 1e3:.1f}] ms" if iv else "none")
            )
        summary[f"delay_{fps}"] = {
            "covered": cov,
            "joints": len(d),
            "ci95": clopper_pearson(cov, len(d)) if d else None,
            "width_ms_median": float(np.median(widths)) if widths.size else None,
        }
        ratios = np.array(
            [
                v
                for r in faulty + [r for r in clean if r["fps"] == fps]
                if r.get("convergence")
                for v in r["convergence"]["ratio"].values()
            ]
        )
        if ratios.size:
            # below 1 is not "more converged": the chaotic replay is fitted past the truth
            print(
                f"  fit RMS / planted truth's RMS on the fitted episodes (above 1: short "
                f"of the truth's; below: past it): "
                f"median {np.median(ratios):.2f}, p90 {np.percentile(ratios, 90):.2f}, "
                f"max {ratios.max():.2f}; within 1.25x on {np.sum(ratios <= 1.25)}/"
                f"{ratios.size} joints"
            )
            summary[f"convergence_{fps}"] = {
                "median": float(np.median(ratios)),
                "p90": float(np.percentile(ratios, 90)),
                "within_1.25": int(np.sum(ratios <= 1.25)),
                "joints": int(ratios.size),
            }
        for key in ("params_actuator", "params_controller"):
            if key == "params_controller" and not any(r[key] for r in faulty):
                print("  controller: no controller finding (--engine-only): not scored")
                continue
            print(
                f"  {key.split('_')[1]:<10} {'param':<13} {'covered':>14} {'declared':>9} "
                f"{'missed':>7} {'rel width':>9}"
            )
            tot_ok = tot = 0
            for p in CONTROLLER_PARAMS if key == "params_controller" else PARAMS:
                c = sum(r[key][p]["covered"] for r in faulty)
                dcl = sum(r[key][p]["declared"] for r in faulty)
                m = sum(r[key][p]["missed"] for r in faulty)
                rw = [x for r in faulty for x in r[key][p]["rel_width"]]
                n = c + dcl + m
                tot_ok, tot = tot_ok + c + dcl, tot + n
                print(
                    f"  {'':<10} {p:<13} {pct(c, n):>14} {dcl:>9} {m:>7} "
                    f"{(np.median(rw) if rw else float('nan')):>9.3g}"
                )
            summary[f"{key}_{fps}"] = {
                "ok": tot_ok,
                "total": tot,
                "ci95": clopper_pearson(tot_ok, tot) if tot else None,
            }
            if key == "params_actuator":
                ok &= bool(tot) and tot_ok / tot >= TARGET_PARAMS
            print(
                f"  {'':<10} covered or declared: {pct(tot_ok, tot)} (target {TARGET_PARAMS:.0%})"
            )
    offered = [r for r in rows if r["patch"] is not None]
    passed = [r for r in offered if r["patch"]["passed"]]
    print(
        f"\nMJCF patches offered: {len(offered)}; stable and better on held-out: "
        f"{len(passed)} (target all)"
    )
    for r in offered:
        if not r["patch"]["passed"]:
            print(f"  seed {r['seed']} @ {r['fps']} fps: {r['patch']['reason']}")
    ok &= len(passed) == len(offered)
    isl = [r for r in rows if r["isaaclab"] is not None]
    isl_ok = [r for r in isl if r["isaaclab"]["runs"] and r["isaaclab"]["finite"]]
    print(f"Isaac Lab files: {len(isl)}; executing with finite values: {len(isl_ok)}")
    ok &= len(isl_ok) == len(isl)
    errs = [r for r in rows if r["error"]]
    for r in errs:
        print(f"  diagnose failed, seed {r['seed']} @ {r['fps']} fps: {r['error'][:200]}")
    ok &= not errs
    summary.update(
        {
            "patches_offered": len(offered),
            "patches_passed": len(passed),
            "isaaclab_files": len(isl),
            "isaaclab_ok": len(isl_ok),
            "errors": len(errs),
        }
    )
    return summary, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument(
        "--quick",
        action="store_true",
        help="2 faulty + 1 clean bench per frame rate, 10 s episodes",
    )
    ap.add_argument("--faulty", type=int, default=20)
    ap.add_argument("--clean", type=int, default=5)
    ap.add_argument("--fps", default="30,100")
    ap.add_argument("--duration", type=float, default=20.0, help="episode length [s]")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--work", type=Path, default=None, help="bench folder (default: a temp)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--engine-only",
        action="store_true",
        help="score the joint identification alone, not a whole diagnose",
    )
    ap.add_argument(
        "--full-jacobian",
        action="store_true",
        help="with --engine-only: the LM on the full Jacobian instead of the "
        "joint-block one (IdConfig.joint_blocks, the default since stop "
        "30), to compare",
    )
    ap.add_argument(
        "--seed0",
        type=int,
        default=0,
        help="added to every bench seed (draw benches not used before)",
    )
    args = ap.parse_args()
    model = args.data / "so101" / "so101.xml"
    if not model.is_file():
        print(f"skip: no SO-101 model at {model}")
        return 0
    if args.quick:
        args.faulty, args.clean, args.duration = 2, 1, 10.0
    fps_list = [int(x) for x in args.fps.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="simgap-ident-"))
    jobs = [
        {
            "model": str(model),
            "seed": 1000 * k + i + args.seed0,
            "fps": fps,
            "faulty": k == 1,
            "duration_s": args.duration,
            "work": str(work),
            "engine_only": args.engine_only,
            "joint_blocks": not args.full_jacobian,
        }
        for fps in fps_list
        for k, n in ((1, args.faulty), (2, args.clean))
        for i in range(n)
    ]
    print(
        f"{len(jobs)} benches ({args.faulty} faulty + {args.clean} clean at "
        f"{', '.join(map(str, fps_list))} fps, {args.duration:g} s episodes) in {work}"
    )
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    if args.jobs > 1:
        import multiprocessing as mp

        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn")) as pool:
            for row in pool.map(run_one, jobs):
                rows.append(row)
                _progress(row, rows, args.json)
    else:
        for job in jobs:
            rows.append(run_one(job))
            _progress(rows[-1], rows, args.json)
    summary, ok = summarise(rows, fps_list)
    total = time.perf_counter() - t0
    print(f"\n{len(rows)} benches in {total:.0f} s; all targets met: {ok}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"summary": summary, "benches": rows, "total_s": total}, indent=2, default=str
            )
        )
    return 0 if ok else 1


def _progress(r: Mapping[str, Any], rows: list[dict[str, Any]], out: Path | None) -> None:
    """One line per bench; the rows so far go to ``out.partial`` (a long run stopped
    early still leaves its scored benches)."""
    if out is not None:
        out.with_suffix(out.suffix + ".partial").write_text(
            json.dumps({"benches": rows}, indent=2, default=str)
        )
    kind = "faulty" if r["faulty"] else "clean "
    d = [x for x in r["delay"] if x["estimate_s"] is not None]
    delay = (
        (
            f"delay truth {r['delay'][0]['truth_s'] * 1e3:.0f} ms, est "
            + ",".join(f"{x['estimate_s'] * 1e3:.0f}" for x in d)
        )
        if d
        else "no delay_s"
    )
    print(
        f"{kind} seed {r['seed']:>5} @ {r['fps']:>3} fps: build {r['build_s']:.1f} s, "
        f"diagnose {r['diagnose_s']:.0f} s; implicated {r['implicated'] or 'none'}; {delay}"
        + (f"; ERROR {r['error'][:120]}" if r["error"] else ""),
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
