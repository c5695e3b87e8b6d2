"""The failure-phase branch: where real episodes break, against simulated ones.

Reads ``evidence.dataset`` / ``evidence.sim_dataset`` (LeRobot v3) and the protocol
manifests (success labels, annotated phases). Ends in one Finding that states the failure
phases side by side, where real departs from simulation, and which branches that points at
or eliminates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

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
from simgap.finding import Finding, Verdict
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
    return [EpisodeRecord(t=tr.t, gripper_cmd=tr.q_cmd[:, k], gripper=tr.q[:, k],
                          gripper_range=rng, ee=fk.positions(tr.q) if fk else None,
                          obj=obj, episode=tr.episode, source=str(run.source))
            for tr, obj in zip(run.trajectories, run.object_pos, strict=True)]


def _evaluate(run: RecordedEpisodes | None, manifest: ManifestTrials | None,
              rig: Rig) -> list[EpisodeResult] | None:
    """Results of one evaluation (None when neither episodes nor manifest exist)."""
    if run is None and manifest is None:
        return None
    if run is None:
        assert manifest is not None
        return [EpisodeResult(episode=i, success=t.success, success_source="manifest",
                              reached=None, failure_phase=t.phase if not t.success else None,
                              signature="annotated" if t.phase and not t.success else None,
                              before=t.note or "", annotated=t.phase is not None)
                for i, t in enumerate(manifest.trials)]
    labels = annotations = None
    if manifest is not None and manifest.trials:
        if len(manifest.trials) != len(run.trajectories):
            raise InputError(file=manifest.path, field="trials",
                             expected=f"{len(run.trajectories)} trials, one per recorded "
                                      f"episode of {run.source}",
                             got=f"{len(manifest.trials)} trials",
                             fix="list one [[trials]] entry per recorded episode, in order")
        labels = [t.success for t in manifest.trials]
        annotations = [t.phase for t in manifest.trials]
    return analyse(episode_records(run, rig), labels=labels, annotations=annotations)


@dataclass(frozen=True)
class PhaseEvaluation:
    """Both evaluations' results and their comparison."""

    real: list[EpisodeResult] | None
    sim: list[EpisodeResult] | None
    comparison: PhaseComparison


def evaluate(ctx: Context) -> PhaseEvaluation:
    """Segment and classify the real and simulated evaluations of the rig."""
    ev = ctx.evidence
    real = _evaluate(ev.get("episodes.real_dataset", load_real_episodes),
                     ev.get("episodes.real_manifest", load_real_manifest), ctx.rig)
    sim = _evaluate(ev.get("episodes.sim_dataset", load_sim_episodes),
                    ev.get("episodes.sim_manifest", load_sim_manifest), ctx.rig)
    return PhaseEvaluation(real=real, sim=sim, comparison=compare_phases(sim, real))


def _finding(pe: PhaseEvaluation) -> Finding:
    cmp = pe.comparison
    base: dict[str, Any] = {"comparison": cmp.to_dict(), "branch_map": branch_map()}
    details = {"phases": list(PHASES),
               "real_episodes": [r.to_dict() for r in pe.real] if pe.real else None,
               "sim_episodes": [r.to_dict() for r in pe.sim] if pe.sim else None}
    title = "Failure phases"
    if pe.real is None and pe.sim is None:
        return Finding(branch="phases", verdict=Verdict.NOT_MEASURED, title=title,
                       summary="No recorded rollouts and no protocol manifest.",
                       next_step="Name evidence.dataset (and evidence.sim_dataset) in rig.toml.",
                       needs=("evidence.dataset or evidence.sim_dataset",))
    counts = cmp.real if cmp.real is not None else cmp.sim
    assert counts is not None
    which = "real" if cmp.real is not None else "sim"
    failed = [ph for ph in PHASES if counts.by_phase[ph]]
    dominant = max(failed, key=lambda ph: counts.by_phase[ph]) if failed else None
    focus = list(cmp.departs) or failed
    points = sorted({b for ph in focus for b in PHASE_BRANCHES[ph]["points_at"]})
    elim = sorted(set.intersection(*[set(PHASE_BRANCHES[ph]["eliminates"]) for ph in failed])) \
        if failed else []
    figs = {**base, "evaluation": which, "dominant_phase": dominant, "departs": list(cmp.departs),
            "points_at": points, "eliminates": elim,
            "failures": counts.n - counts.successes, "episodes": counts.n}
    split = ", ".join(f"{ph} {counts.by_phase[ph]}" for ph in failed)
    if counts.n == 0:
        # outcomes are evidence: without them the phases are not measured, not undecided
        return Finding(branch="phases", verdict=Verdict.NOT_MEASURED, title=title,
                       summary=f"No {which} episode has a known outcome ({counts.unknown} "
                               "unknown): success could not be read or inferred.",
                       figures=figs, details=details,
                       next_step="Name the protocol manifest (success per trial) in rig.toml, "
                                 "or record observation.object_pos so success can be inferred.",
                       needs=(f"evidence.{which}_manifest (success per trial) or "
                              "observation.object_pos in the dataset",))
    if which == "sim" or not failed:
        verdict = Verdict.ELIMINATED if (which == "real" and not failed) else Verdict.INCONCLUSIVE
        summary = (f"No {which} episode failed ({counts.n} with a known outcome)." if not failed
                   else f"Only the simulated evaluation is recorded: failures by phase {split}.")
        return Finding(branch="phases", verdict=verdict, title=title, summary=summary,
                       figures=figs, key_figure="dominant_phase", details=details,
                       next_step="Record the real evaluation of the same protocol."
                       if which == "sim" else "Nothing breaks on the real rig.")
    why = "; ".join(PHASE_BRANCHES[ph]["why"] for ph in focus)
    if cmp.departs:
        verdict = Verdict.IMPLICATED
        head = (f"Real departs from simulation at {', '.join(cmp.departs)} "
                f"(real failures by phase: {split}).")
    elif cmp.sim is None or cmp.sim.n == 0:
        verdict = Verdict.IMPLICATED
        head = (f"Real failures by phase: {split} (no simulated evaluation with known "
                "outcomes to compare).")
    elif all(cmp.sim.by_phase.get(ph, 0) > 0 for ph in failed):
        verdict = Verdict.INCONCLUSIVE
        head = (f"Real breaks where simulation breaks ({split}): the simulator reproduces "
                "these failures, so they are the policy's, not a sim-to-real gap.")
    else:
        verdict = Verdict.INCONCLUSIVE
        sim_split = ", ".join(f"{ph} {cmp.sim.by_phase.get(ph, 0)} of {cmp.sim.n}"
                              for ph in failed)
        p_text = ", ".join(f"{ph} p = {cmp.p_values[ph]:.2g}" for ph in failed
                           if ph in cmp.p_values)
        head = (f"Real fails at {split} of {counts.n} where simulation fails at {sim_split}; "
                f"too few trials to call it a departure ({p_text}, Fisher exact): run more "
                "trials of both (simgap trials sizes them).")
    summary = head + (f" Eliminated by where it broke: {', '.join(elim)}." if elim else "")
    step = (f"Measure {', '.join(points)} first: {why}." if points
            else f"Change the deployment: {why}.")
    return Finding(branch="phases", verdict=verdict, title=title, summary=summary, figures=figs,
                   key_figure="dominant_phase", next_step=step, details=details)


def assess(ctx: Context) -> list[Finding]:
    """The failure-phase Finding of the rig's recorded evaluations."""
    return [_finding(evaluate(ctx))]
