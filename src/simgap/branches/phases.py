"""The failure-phase branch: where real episodes break, against simulated ones.

Reads ``evidence.dataset`` / ``evidence.sim_dataset`` (LeRobot v3) and the protocol
manifests (success labels, annotated phases). Ends in one Finding that states the failure
phases side by side, where real departs from simulation, and which branches that points at
or eliminates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.branches.branch import Branch
from simgap.branches.context import Context
from simgap.episodes.compare import PhaseComparison, compare_phases
from simgap.episodes.signatures import PHASE_BRANCHES, EpisodeResult, analyse, branch_map
from simgap.errors import InputError
from simgap.evidence.episodes_io import (
    ManifestTrials,
    RecordedEpisodes,
    load_real_episodes,
    load_real_manifest,
    load_sim_episodes,
    load_sim_manifest,
)
from simgap.figures.phases import PhasesDetails, PhasesFigures
from simgap.finding import Finding, Verdict
from simgap.report import plots_phases
from simgap.rig import Rig
from simgap.values.episode import PHASES, EpisodeRecord


def gripper_range(run: RecordedEpisodes, rig: Rig) -> tuple[float, float]:
    """(closed, open) gripper angles [rad]: the calibrated range, else the recorded extent."""
    g = rig.gripper
    if g is not None and g.unit.lo_rad is not None and g.unit.hi_rad is not None:
        a, b = sorted((float(g.unit.to_rad(0.0)), float(g.unit.to_rad(100.0))))
        return a, b
    k = run.gripper_index
    vals = np.concatenate([np.r_[tr.q[:, k], tr.q_cmd[:, k]] for tr in run.trajectories])
    lo, hi = float(vals.min()), float(vals.max())
    return lo, hi if hi > lo else lo + 1e-6


def episode_records(run: RecordedEpisodes, rig: Rig) -> list[EpisodeRecord]:
    """Reduce recorded episodes to what segmentation reads (end effector through FK)."""
    fk = None
    if rig.ee_site:
        from simgap.sim.fk import ForwardKinematics

        fk = ForwardKinematics(rig.model_path, rig.joint_names, rig.ee_site)
    rng = gripper_range(run, rig)
    k = run.gripper_index
    return [
        EpisodeRecord(
            t=tr.t,
            gripper_cmd=tr.q_cmd[:, k],
            gripper=tr.q[:, k],
            gripper_range=rng,
            ee=fk.positions(tr.q) if fk else None,
            obj=obj,
            episode=tr.episode,
            source=str(run.source),
        )
        for tr, obj in zip(run.trajectories, run.object_pos, strict=True)
    ]


def _evaluate(
    run: RecordedEpisodes | None, manifest: ManifestTrials | None, rig: Rig
) -> list[EpisodeResult] | None:
    """Results of one evaluation (None when neither episodes nor manifest exist)."""
    if run is None and manifest is None:
        return None
    if run is None:
        assert manifest is not None
        return [
            EpisodeResult(
                episode=i,
                success=t.success,
                success_source="manifest",
                reached=None,
                failure_phase=t.phase if not t.success else None,
                signature="annotated" if t.phase and not t.success else None,
                before=t.note or "",
                annotated=t.phase is not None,
            )
            for i, t in enumerate(manifest.trials)
        ]
    labels = annotations = None
    if manifest is not None and manifest.trials:
        if len(manifest.trials) != len(run.trajectories):
            raise InputError(
                file=manifest.path,
                field="trials",
                expected=f"{len(run.trajectories)} trials, one per recorded "
                f"episode of {run.source}",
                got=f"{len(manifest.trials)} trials",
                fix="list one [[trials]] entry per recorded episode, in order",
            )
        labels = [t.success for t in manifest.trials]
        annotations = [t.phase for t in manifest.trials]
    return analyse(episode_records(run, rig), labels=labels, annotations=annotations)


def why_unknown(run: RecordedEpisodes | None, manifest: ManifestTrials | None, which: str) -> str:
    """Why no episode of one evaluation has a known outcome (``analyse``'s rules).

    A manifest labels success per trial. Without one, success is inferred from where the
    object ends against the place target, and that target is the median release point of
    the episodes the manifest labels successful: the object's position alone never gives
    an outcome.
    """
    key = f"evidence.{which}_manifest"
    if manifest is not None and not manifest.trials:
        return f"the protocol manifest {manifest.path} ({key}) lists no trials"
    if run is not None and any(o is not None for o in run.object_pos):
        return (
            f"the dataset records observation.object_pos, but success is inferred from "
            f"it only against the place target, the median release point of the "
            f"episodes a protocol manifest labels successful, and the rig names no {key}"
        )
    return (
        f"the rig names no {key} (success per trial), and the dataset records no "
        "observation.object_pos either"
    )


@dataclass(frozen=True)
class PhaseEvaluation:
    """Both evaluations' results and their comparison.

    Attributes:
        why_unknown: per evaluation (``real``, ``sim``), why its outcomes are unknown when
            none is known (``why_unknown``).
    """

    real: list[EpisodeResult] | None
    sim: list[EpisodeResult] | None
    comparison: PhaseComparison
    why_unknown: dict[str, str] = field(default_factory=dict)


def evaluate(ctx: Context) -> PhaseEvaluation:
    """Segment and classify the real and simulated evaluations of the rig."""
    ev = ctx.evidence
    runs = {
        "real": (
            ev.get("episodes.real_dataset", load_real_episodes),
            ev.get("episodes.real_manifest", load_real_manifest),
        ),
        "sim": (
            ev.get("episodes.sim_dataset", load_sim_episodes),
            ev.get("episodes.sim_manifest", load_sim_manifest),
        ),
    }
    real, sim = (_evaluate(*runs[k], ctx.rig) for k in ("real", "sim"))
    return PhaseEvaluation(
        real=real,
        sim=sim,
        comparison=compare_phases(sim, real),
        why_unknown={k: why_unknown(*runs[k], k) for k in runs},
    )


def _finding(pe: PhaseEvaluation) -> Finding:
    cmp = pe.comparison
    base: dict[str, Any] = {"comparison": cmp.to_dict(), "branch_map": branch_map()}
    details = PhasesDetails.from_mapping(
        {
            "phases": list(PHASES),
            "real_episodes": [r.to_dict() for r in pe.real] if pe.real else None,
            "sim_episodes": [r.to_dict() for r in pe.sim] if pe.sim else None,
        },
        where="details",
    )
    title = "Failure phases"
    if pe.real is None and pe.sim is None:
        return Finding(
            branch="phases",
            verdict=Verdict.NOT_MEASURED,
            title=title,
            summary="No recorded rollouts and no protocol manifest.",
            next_step="Name evidence.dataset (and evidence.sim_dataset) in rig.toml.",
            needs=("evidence.dataset or evidence.sim_dataset",),
        )
    counts = cmp.real if cmp.real is not None else cmp.sim
    assert counts is not None
    which = "real" if cmp.real is not None else "sim"
    failed = [ph for ph in PHASES if counts.by_phase[ph]]
    dominant = max(failed, key=lambda ph: counts.by_phase[ph]) if failed else None
    focus = list(cmp.departs) or failed
    points = sorted({b for ph in focus for b in PHASE_BRANCHES[ph]["points_at"]})
    elim = (
        sorted(set.intersection(*[set(PHASE_BRANCHES[ph]["eliminates"]) for ph in failed]))
        if failed
        else []
    )
    figs = PhasesFigures.from_mapping(
        {
            **base,
            "evaluation": which,
            "dominant_phase": dominant,
            "departs": list(cmp.departs),
            "points_at": points,
            "eliminates": elim,
            "failures": counts.n - counts.successes,
            "episodes": counts.n,
        }
    )
    split = ", ".join(f"{ph} {counts.by_phase[ph]}" for ph in failed)
    if counts.n == 0:
        # outcomes are evidence: without them the phases are not measured, not undecided
        return Finding(
            branch="phases",
            verdict=Verdict.NOT_MEASURED,
            title=title,
            summary=f"No {which} episode has a known outcome ({counts.unknown} "
            f"unknown): {pe.why_unknown.get(which, 'no success labels')}.",
            figures=figs,
            details=details,
            next_step=f"Name the protocol manifest of the {which} evaluation "
            f"(success per trial) as evidence.{which}_manifest in "
            "rig.toml.",
            needs=(f"evidence.{which}_manifest (success per trial)",),
        )
    if which == "sim" or not failed:
        verdict = Verdict.ELIMINATED if (which == "real" and not failed) else Verdict.INCONCLUSIVE
        summary = (
            f"No {which} episode failed ({counts.n} with a known outcome)."
            if not failed
            else f"Only the simulated evaluation is recorded: failures by phase {split}."
        )
        return Finding(
            branch="phases",
            verdict=verdict,
            title=title,
            summary=summary,
            figures=figs,
            key_figure="dominant_phase",
            details=details,
            next_step="Record the real evaluation of the same protocol."
            if which == "sim"
            else "Nothing breaks on the real rig.",
        )
    why = "; ".join(PHASE_BRANCHES[ph]["why"] for ph in focus)
    if cmp.departs:
        verdict = Verdict.IMPLICATED
        head = (
            f"Real departs from simulation at {', '.join(cmp.departs)} "
            f"(real failures by phase: {split})."
        )
    elif cmp.sim is None or cmp.sim.n == 0:
        verdict = Verdict.IMPLICATED
        head = (
            f"Real failures by phase: {split} (no simulated evaluation with known "
            "outcomes to compare)."
        )
    elif all(cmp.sim.by_phase.get(ph, 0) > 0 for ph in failed):
        verdict = Verdict.INCONCLUSIVE
        head = (
            f"Real breaks where simulation breaks ({split}): the simulator reproduces "
            "these failures, so they are the policy's, not a sim-to-real gap."
        )
    else:
        verdict = Verdict.INCONCLUSIVE
        sim_split = ", ".join(f"{ph} {cmp.sim.by_phase.get(ph, 0)} of {cmp.sim.n}" for ph in failed)
        p_text = ", ".join(
            f"{ph} p = {cmp.p_values[ph]:.2g}" for ph in failed if ph in cmp.p_values
        )
        head = (
            f"Real fails at {split} of {counts.n} where simulation fails at {sim_split}; "
            f"too few trials to call it a departure ({p_text}, Fisher exact): run more "
            "trials of both (simgap trials sizes them)."
        )
    summary = head + (f" Eliminated by where it broke: {', '.join(elim)}." if elim else "")
    step = (
        f"Measure {', '.join(points)} first: {why}." if points else f"Change the deployment: {why}."
    )
    return Finding(
        branch="phases",
        verdict=verdict,
        title=title,
        summary=summary,
        figures=figs,
        key_figure="dominant_phase",
        next_step=step,
        details=details,
    )


def assess(ctx: Context) -> list[Finding]:
    """The failure-phase Finding of the rig's recorded evaluations."""
    return [_finding(evaluate(ctx))]


SPEC = Branch(
    name="phases",
    cost=0.7,
    needs=("evidence.dataset or evidence.sim_dataset (recorded rollouts)",),
    assess=assess,
    plots=lambda f: plots_phases.plots(f),  # looked up when drawn: a test may replace it
)
"""The failure-phase branch's contract: its plots; no randomisation entries."""
