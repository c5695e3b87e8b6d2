"""``run_selftest``: plan, synthesise, diagnose every trial as a fleet, score, write.

Layout of ``DIR``:

- ``trials/<trial>/``: each trial's synthetic rig (``simgap.selftest.synthesise``);
- ``diagnoses/``: the trials diagnosed by ``simgap.fleet.run.run_fleet`` (one folder per
  trial, ``fleet.json``): on local processes or on Ray, and resumable, since a trial whose
  inputs are unchanged keeps its findings (the same seed draws the same trials and
  synthesises the same files, which are not written again);
- ``selftest.json`` (plan, every cell, the table, the gap, the sentence), ``selftest.md``
  and ``report.html`` (the recovery table; beside the real diagnosis when one is given).

The user's files are never written: ``DIR`` may not hold or lie inside any input of the rig
(its rig.toml, its model's closure, its evidence), checked before any work.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.figures.actuator import JointDynamicsFigures
from simgap.finding import figures_of
from simgap.outputs import (
    atomic_write_json,
    atomic_write_text,
    guard_inputs,
    input_clash,
    resolve_paths,
)
from simgap.selftest.plan import DEFAULT_TRIALS, Plan, plan_trials
from simgap.selftest.score import Cell, GapScore, replay_gap, score_cells
from simgap.selftest.synthesise import TrialFiles, rig_dataset, synthesise_trial
from simgap.selftest.table import FamilyRow, markdown, recovery_table, sentence

SELFTEST_FILE = "selftest.json"
SELFTEST_MD = "selftest.md"
SELFTEST_HTML = "report.html"
GOOD_CLOSE = 0.8
"""A patch that closes at least this share of the gap counts as good (issue 40's target)."""


@dataclass(frozen=True)
class TrialResult:
    """One trial, diagnosed and scored.

    Attributes:
        name: the trial.
        status: the fleet's (``done``, ``cached``, ``failed``, ...).
        cells: its scored cells (empty when the diagnosis failed).
        gap: the replay gap on its held-out episode, or None (failed).
        implicated: the findings the diagnosis implicated (``branch: title``).
        error: the failure's message.
    """

    name: str
    status: str
    cells: tuple[Cell, ...] = ()
    gap: GapScore | None = None
    implicated: tuple[str, ...] = ()
    error: str = ""


@dataclass(frozen=True)
class SelftestResult:
    """A selftest's outcome.

    Attributes:
        rows: the recovery table, one row per planted family.
        sentence: what the numbers say, in words.
        trials: every trial's result, the null trial first.
        plan: what was planted.
        out: the selftest's folder.
        wall_s: seconds the run took [s].
    """

    rows: tuple[FamilyRow, ...]
    sentence: str
    trials: tuple[TrialResult, ...]
    plan: Plan
    out: Path
    wall_s: float

    @property
    def null(self) -> TrialResult:
        """The null trial's result."""
        return self.trials[0]


def _actuator(findings: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return next((f for f in findings.get("findings", []) if f.get("branch") == "actuator"), None)


def _identification(act: Mapping[str, Any] | None) -> JointDynamicsFigures | None:
    """The joint identification an actuator finding (JSON form) states, if it is one."""
    if act is None or act.get("kind") != JointDynamicsFigures.kind:
        return None
    return figures_of(act, JointDynamicsFigures)


def _score_trial(
    name: str, files: TrialFiles, status: str, folder: Path, error: str, families: Sequence[str]
) -> TrialResult:
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.rig import load_rig

    if status not in ("done", "cached"):
        return TrialResult(name, status, error=error)
    doc = resolve_paths(
        json.loads((folder / "findings.json").read_text(encoding="utf-8")), folder
    )  # its paths are relative to its folder
    act = _actuator(doc)
    fig = _identification(act)
    cells = score_cells(name, files.truth, fig, families)
    trial_rig = load_rig(files.rig)
    held = dataset_trajectories(read_lerobot_dataset(files.heldout), trial_rig)[0]
    clock = fig.clock.chosen if fig is not None and fig.clock and fig.clock.chosen else "exact"
    patch = ((act or {}).get("artifacts") or {}).get("mjcf_patch")
    gap = replay_gap(trial_rig.model_path, files.truth_model, patch, held, clock)
    implicated = tuple(
        f"{f.get('branch')}: {f.get('title')}"
        for f in doc.get("findings", [])
        if f.get("verdict") == "implicated"
    )
    return TrialResult(name, status, tuple(cells), gap, implicated)


def gap_summary(results: Sequence[TrialResult]) -> dict[str, Any]:
    """The gap closed over the faulty trials with a gap: median, worst, how many at least
    ``GOOD_CLOSE``, and how many offered a patch; ``text`` in words."""
    gaps = [r.gap for r in results[1:] if r.gap is not None]
    closed = np.array([g.closed for g in gaps if math.isfinite(g.closed)])
    out: dict[str, Any] = {
        "trials": len(gaps),
        "with_gap": int(closed.size),
        "patch_offered": sum(g.patch_offered for g in gaps),
    }
    if closed.size:
        out.update(
            median=float(np.median(closed)),
            worst=float(np.min(closed)),
            good=int(np.sum(closed >= GOOD_CLOSE)),
        )
        out["text"] = (
            f"median {100 * out['median']:.0f} %, worst {100 * out['worst']:.0f} "
            f"%, at least {100 * GOOD_CLOSE:.0f} % on {out['good']} of "
            f"{closed.size} trials (a patch offered on {out['patch_offered']} of "
            f"{len(gaps)})"
        )
    else:
        out["text"] = "no faulty trial had a gap to close"
    return out


def check_selftest_out(out: Path, inputs: Sequence[Path]) -> None:
    """Refuse an ``--out`` that is a file, or holds or lies inside one of the rig's inputs.

    Raises:
        InputError: naming the input and the fix (nothing is written).
    """
    if out.exists() and not out.is_dir():
        raise InputError(
            file=out,
            expected="a folder for the selftest",
            got="a file",
            fix="name a folder, e.g. --out selftest-out",
        )
    clash = input_clash(out, inputs, folder=True)
    if clash is not None:
        raise InputError(
            file=out,
            expected="a folder apart from the rig's inputs (rig.toml, "
            "model and its meshes, evidence)",
            got=f"the folder {clash[0]} {clash[1]}",
            fix="write the selftest elsewhere, e.g. --out selftest-out (nothing was written)",
        )


def run_selftest(
    rig_path: str | Path,
    out_dir: str | Path,
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    jobs: int | None = None,
    ray: str | None = None,
    diagnosis: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> SelftestResult:
    """Known-truth recovery on the user's own rig (module docstring): ``trials`` drawn
    from ``seed`` (``plan_trials``) and the null trial, run by ``run_plan``.

    Args:
        rig_path: the user's rig.toml (its model and its LeRobot dataset).
        out_dir: the selftest's folder (created; an earlier run's is resumed).
        trials: faulty trials (the null trial runs as well).
        seed: seed of the draws and the recordings.
        jobs: trials diagnosed at once (default: the CPU count).
        ray: a Ray address (``local``, ``auto``, ``host:port``), None for local processes.
        diagnosis: the real diagnosis' findings.json (or its folder: ``simgap diagnose
            RIG --out D``), whose statements the page shows beside the table; None: the
            table alone.
        progress: called with one line per step.

    Raises:
        InputError: the rig or its dataset is not usable, or ``out_dir`` clashes with an
            input (nothing is written then).
    """
    from simgap.demo.nominal import nominal_model, nominal_params
    from simgap.sim.rig_names import load_checked_rig

    rig = load_checked_rig(rig_path)
    nominal = nominal_params(nominal_model(rig.model_path), rig.joint_names)
    plan = plan_trials(nominal, rig.evidence, trials=trials, seed=seed)
    return run_plan(
        rig_path, out_dir, plan, jobs=jobs, ray=ray, diagnosis=diagnosis, progress=progress
    )


def run_plan(
    rig_path: str | Path,
    out_dir: str | Path,
    plan: Plan,
    *,
    jobs: int | None = None,
    ray: str | None = None,
    diagnosis: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> SelftestResult:
    """Synthesise, diagnose (``run_fleet``), score and write the trials of ``plan``, its
    first trial the null one (arguments as ``run_selftest``).

    Raises:
        InputError: as ``run_selftest``; or the plan's first trial plants something.
    """
    from simgap.fleet.closure import inputs_digest, rig_inputs
    from simgap.fleet.run import run_fleet
    from simgap.sim.rig_names import load_checked_rig

    t0 = time.perf_counter()
    say = progress or (lambda m: None)
    if not plan.trials or not plan.trials[0].null:
        raise InputError(
            field="plan.trials",
            expected="the null trial first",
            got=[t.name for t in plan.trials[:1]],
        )
    rig = load_checked_rig(rig_path)
    ds = rig_dataset(rig)
    inputs = rig_inputs(rig_path)
    paths = [p for _, p in inputs]
    out = Path(os.path.abspath(out_dir))
    check_selftest_out(out, paths)
    real = load_real(diagnosis) if diagnosis is not None else None
    digest = inputs_digest(inputs)
    with guard_inputs(paths):
        say(
            f"selftest: synthesising {len(plan.trials)} recording(s) of {rig.name}'s "
            f"commands ({len(plan.trials) - 1} with planted faults, 1 null)"
        )
        files = [
            synthesise_trial(rig, ds, t, out / "trials" / t.name, rig_digest=digest)
            for t in plan.trials
        ]
        results, _ = run_fleet(
            [f.rig for f in files], out / "diagnoses", ray=ray, jobs=jobs, progress=say
        )
        scored = tuple(
            _score_trial(t.name, f, r.status, out / "diagnoses" / r.folder, r.error, plan.families)
            for t, f, r in zip(plan.trials, files, results, strict=True)
        )
        cells = [c for r in scored for c in r.cells]
        rows = tuple(recovery_table(cells, plan.families, null_trial=plan.trials[0].name))
        null = scored[0]
        null_claims = list(null.implicated) + [
            f"{c.family} on {c.joint}" for c in null.cells if c.outcome == "false"
        ]
        text = sentence(rows, null_claims)
        if null.status not in ("done", "cached"):
            text += f" The null run failed ({null.error}): the false-implication check is open."
        res = SelftestResult(rows, text, scored, plan, out, time.perf_counter() - t0)
        write_selftest(res, rig, real, ray)
    return res


def load_real(path: str | Path) -> dict[str, Any]:
    """The real diagnosis' findings (``findings.json`` or the folder holding it).

    Raises:
        InputError: it is not a diagnosis' findings.json.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "findings.json"
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(doc.get("findings"), list):
            raise ValueError("no findings list")
    except (OSError, ValueError, AttributeError) as e:
        raise InputError(
            file=p,
            field="--diagnosis",
            expected="the findings.json of 'simgap diagnose RIG --out D' (or the folder D)",
            got=str(e)[:200],
            fix="run simgap diagnose first, or leave --diagnosis out",
        ) from None
    return dict(resolve_paths(doc, p.parent))


def real_beside(
    real: Mapping[str, Any] | None,
    rows: Sequence[FamilyRow],
) -> dict[str, dict[str, str]]:
    """Family -> joint -> what the real diagnosis states (value and interval, or declared
    not identifiable), for the families of ``rows``; empty without a real diagnosis or
    without its actuator finding."""
    from simgap.actuator.excite_estimate import from_bench_logs

    act = _actuator(real or {})
    if act is None:
        return {}
    fig = _identification(act)
    bench = from_bench_logs(act)
    out: dict[str, dict[str, str]] = {}
    for r in rows:
        per: dict[str, str] = {}
        for j in r.joints:
            why = fig.not_identifiable.get(j, {}).get(r.family) if fig else None
            v: float | None
            iv: tuple[float, float] | None
            if fig is None:
                v, iv, scale, unit = None, None, 1.0, ""
            elif r.family == "delay":
                v, iv = fig.delay_s.get(j), fig.delay_interval_s.get(j)
                scale, unit = 1e3, " ms"
            else:
                v = fig.params.get(j, {}).get(r.family)
                iv = fig.params_interval.get(j, {}).get(r.family)
                scale, unit = 1.0, ""
            if why:
                per[j] = "declared not identifiable"
            elif isinstance(v, (int, float)) and iv:
                per[j] = f"{v * scale:.3g}{unit} [{iv[0] * scale:.3g}, {iv[1] * scale:.3g}]"
            elif bench:
                per[j] = (
                    "not stated: the diagnosis's actuator finding came from the bench "
                    "logs (evidence.actuator_logs), which give no per-joint "
                    "identification"
                )
            else:
                per[j] = "not stated"
        out[r.family] = per
    return out


def to_json(
    res: SelftestResult, rig: Any, real: Mapping[str, Any] | None, backend: str
) -> dict[str, Any]:
    """``selftest.json``."""
    return {
        "rig": rig.name,
        "rig_path": str(rig.source),
        "seed": res.plan.seed,
        "backend": backend,
        "wall_s": res.wall_s,
        "sentence": res.sentence,
        "plan": res.plan.to_dict(),
        "families": [r.to_dict() for r in res.rows],
        "gap": gap_summary(res.trials),
        "null": {
            "status": res.null.status,
            "implicated": list(res.null.implicated),
            "false_cells": [c.to_dict() for c in res.null.cells if c.outcome == "false"],
        },
        "real_diagnosis": real_beside(real, res.rows),
        "trials": [
            {
                "name": r.name,
                "status": r.status,
                "error": r.error,
                "implicated": list(r.implicated),
                "gap": r.gap.to_dict() if r.gap else None,
                "cells": [c.to_dict() for c in r.cells],
            }
            for r in res.trials
        ],
    }


def write_selftest(
    res: SelftestResult, rig: Any, real: Mapping[str, Any] | None, ray: str | None
) -> None:
    """``selftest.json``, ``selftest.md`` and ``report.html`` into ``res.out``."""
    from simgap.outputs import json_safe
    from simgap.report.selftest import write_selftest_report

    doc = json_safe(to_json(res, rig, real, f"ray:{ray}" if ray else "local"))
    atomic_write_json(res.out / SELFTEST_FILE, doc)
    atomic_write_text(
        res.out / SELFTEST_MD,
        markdown(
            res.rows,
            res.sentence,
            gap=doc["gap"],
            not_planted=res.plan.not_planted,
            title=f"simgap selftest of {rig.name}",
        ),
    )
    write_selftest_report(doc, res.out / SELFTEST_HTML)
