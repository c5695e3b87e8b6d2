"""The training-envelope branch: one Finding per check (observation noise, speed, control
rate, grasp margin, initial states), implicated when the real deployment runs outside what
training showed the policy, eliminated when inside, not_measured without the evidence.

The training side is what the user stated: a default, or a value rig.toml marks as
guessed (``Rig.stated``), is no training value, and a check that would rest on one is not
measured, with what to add.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from simgap.branches.branch import Branch
from simgap.branches.context import Context
from simgap.branches.evidence_gate import time_base_refusal
from simgap.branches.phases import episode_records
from simgap.episodes.envelope import EnvelopeCheck
from simgap.episodes.envelope_grasp import grasp_evidence, grasp_margin_check
from simgap.episodes.envelope_noise import noise_check
from simgap.episodes.envelope_rate import rate_check
from simgap.episodes.envelope_speed import speed_check
from simgap.episodes.placements import placements_check
from simgap.episodes.segment import segment
from simgap.episodes.time_base import REFUSAL_FIX
from simgap.evidence.episodes_io import (
    ManifestTrials,
    RecordedEpisodes,
    load_real_episodes,
    load_real_manifest,
    load_sim_episodes,
    load_sim_manifest,
)
from simgap.figures.envelope import envelope_records
from simgap.figures.evidence import TimeBaseFigures
from simgap.finding import Finding, Verdict
from simgap.report import plots_envelope
from simgap.rig import Rig

_VERDICT = {
    "outside": Verdict.IMPLICATED,
    "inside": Verdict.ELIMINATED,
    "not_measured": Verdict.NOT_MEASURED,
}


def _body(run: RecordedEpisodes) -> list[int]:
    return [i for i in range(len(run.trajectories[0].joint_names)) if i != run.gripper_index]


def training_period(rig: Rig) -> tuple[float | None, str, str]:
    """Training's control period [s], the rig key it comes from, and why there is none.

    ``training.control_dt_s``, else the simulated control period ``control.dt_s`` when the
    user stated it. ``simgap init`` guesses ``control.dt_s`` as 1 / fps of the recording:
    the real rate itself, which no comparison with the real rate may rest on.
    """
    if rig.training.control_dt_s is not None:
        return float(rig.training.control_dt_s), "training.control_dt_s", ""
    if not math.isfinite(rig.control_dt_s):
        return None, "", "the rig gives no [training] control_dt_s and no control.dt_s"
    if not rig.stated("control.dt_s"):
        return (
            None,
            "",
            (
                "the rig gives no [training] control_dt_s, and its control.dt_s "
                "is marked '# guessed' (simgap init's 1 / fps of this recording: "
                "the real rate itself, so holding the two together would compare "
                "the recording with itself)"
            ),
        )
    return float(rig.control_dt_s), "control.dt_s", ""


def _squeeze(run: RecordedEpisodes | None, rig: Rig) -> tuple[np.ndarray, str]:
    """(measured - commanded) gripper angle [rad] over every sample held in a grasp
    (``grasp_evidence``), and why no episode grasped when none did."""
    if run is None:
        return np.empty(0), "no episodes"
    out, why = [], []
    for rec in episode_records(run, rig):
        ev = grasp_evidence(rec, segment(rec))
        out.append(rec.gripper[ev.held] - rec.gripper_cmd[ev.held])
        if not ev.happened:
            why.append(f"episode {rec.episode}: {ev.how}")
    sq = np.concatenate(out) if out else np.empty(0)
    return sq, "; ".join(why[:3]) + (f"; and {len(why) - 3} more" if len(why) > 3 else "")


def _median_dt(run: RecordedEpisodes) -> float | None:
    d = np.concatenate([np.diff(tr.t) for tr in run.trajectories])
    d = d[d > 0]
    return float(np.median(d)) if d.size else None


def speed_causes(rig: Rig, real_dt_s: float | None) -> dict[str, float]:
    """The speed factors the rig names: action scale, decision rate, servo gain ratios."""
    tr, dep = rig.training, rig.deploy
    causes: dict[str, float] = {}
    if dep.action_scale != tr.action_scale:
        causes["action_scale_ratio"] = dep.action_scale / tr.action_scale
    train_dt = training_period(rig)[0]
    real_dt = rig.real_dt_s or real_dt_s
    if real_dt and train_dt and abs(train_dt / real_dt - 1.0) > 1e-3:
        causes["rate_ratio"] = train_dt / real_dt
    if dep.servo_p_gain and tr.servo_p_gain and dep.servo_p_gain != tr.servo_p_gain:
        causes["servo_gain_ratio"] = dep.servo_p_gain / tr.servo_p_gain
    return causes


def _placements(
    real_m: ManifestTrials | None, sim_m: ManifestTrials | None, real: RecordedEpisodes | None
) -> dict[str, tuple[np.ndarray, Sequence]]:
    evals: dict[str, tuple[np.ndarray, Sequence]] = {}
    for name, m in (("real", real_m), ("sim", sim_m)):
        if m is not None and m.initial_states:
            xy = np.array([s[:2] for s in m.initial_states])
            trials = [(t.initial_state, t.success) for t in m.trials if t.initial_state is not None]
            evals[name] = (xy, trials)
    if "real" not in evals and real is not None and all(o is not None for o in real.object_pos):
        xy = np.array([o[0, :2] for o in real.object_pos if o is not None])
        trials = (
            [(i, t.success) for i, t in enumerate(real_m.trials)]
            if real_m is not None and len(real_m.trials) == len(xy)
            else []
        )
        evals["real"] = (xy, trials)
    return evals


def _not_timed(refusal: Finding) -> list[EnvelopeCheck]:
    """The speed and control-rate checks of a dataset whose time base is refused."""
    f = refusal.typed(TimeBaseFigures)
    why = (
        f"Not measured: the dataset's time base is refused (evidence: Time base): its "
        f"labelled {f.labelled_fps:g} fps is not the rate its motion "
        "was recorded at, so neither its speeds nor its rate can be read off its stamps."
    )
    need = f"evidence.dataset re-recorded: {REFUSAL_FIX}"
    return [
        EnvelopeCheck(
            check,
            title,
            "not_measured",
            summary=why,
            next_step=f"Re-record: {REFUSAL_FIX}.",
            needs=(need,),
        )
        for check, title in (("speed", "Speed"), ("control_rate", "Control rate"))
    ]


def checks(ctx: Context) -> list[EnvelopeCheck]:
    """Every envelope check of the rig's evidence."""
    rig, ev = ctx.rig, ctx.evidence
    real = ev.get("episodes.real_dataset", load_real_episodes)
    sim = ev.get("episodes.sim_dataset", load_sim_episodes)
    real_m = ev.get("episodes.real_manifest", load_real_manifest)
    sim_m = ev.get("episodes.sim_manifest", load_sim_manifest)
    out: list[EnvelopeCheck] = []
    if real is not None:
        body = _body(real)
        names = [real.trajectories[0].joint_names[i] for i in body]
        out.append(
            noise_check(real.trajectories, body, rig.training.obs_noise_std_rad, rig.encoder_rad)
        )
        refused = time_base_refusal(ctx)
        if refused is not None:  # speeds and the rate are read off stamps that are wrong
            out.extend(_not_timed(refused))
        else:
            out.append(
                speed_check(
                    real.trajectories,
                    sim.trajectories if sim else None,
                    body,
                    names,
                    training_top_rad_s=rig.training.top_speed_rad_s,
                    causes=speed_causes(rig, _median_dt(real)),
                )
            )
            train_dt, source, no_dt = training_period(rig)
            out.append(
                rate_check(
                    [tr.t for tr in real.trajectories],
                    train_dt,
                    rig.real_dt_s,
                    source=source,
                    why_not=no_dt,
                )
            )
        sim_sq, sim_why = _squeeze(sim, rig) if sim is not None else (None, "")
        real_sq, why_not = _squeeze(real, rig)
        out.append(
            grasp_margin_check(real_sq, sim_sq, rig.deploy.gripper_torque_limit, why_not, sim_why)
        )
    else:
        for check, title in (
            ("observation_noise", "Observation noise"),
            ("speed", "Speed"),
            ("control_rate", "Control rate"),
            ("grasp_margin", "Grasp margin"),
        ):
            out.append(
                EnvelopeCheck(
                    check,
                    title,
                    "not_measured",
                    summary="No real episodes recorded.",
                    next_step="Name evidence.dataset (the real rollouts).",
                    needs=("evidence.dataset (the real rollouts)",),
                )
            )
    out.append(
        placements_check(
            _placements(real_m, sim_m, real), rig.training.workspace_x_m, rig.training.workspace_y_m
        )
    )
    return out


def to_finding(c: EnvelopeCheck) -> Finding:
    """An envelope check as a Finding of the ``envelope`` branch."""
    figures, details = envelope_records(c.check)
    return Finding(
        branch="envelope",
        verdict=_VERDICT[c.status],
        title=c.title,
        summary=c.summary,
        figures=figures.from_mapping({"check": c.check, **c.figures}),
        key_figure=c.key_figure,
        next_step=c.next_step,
        details=details.from_mapping({"check": c.check, **c.details}, where="details"),
        needs=c.needs if c.status == "not_measured" else (),
    )


def assess(ctx: Context) -> list[Finding]:
    """One Finding per envelope check."""
    return [to_finding(c) for c in checks(ctx)]


SPEC = Branch(
    name="envelope",
    cost=0.8,
    needs=("evidence.dataset and a [training] section",),
    assess=assess,
    plots=lambda f: plots_envelope.plots(f),  # looked up when drawn: a test may replace it
)
"""The training-envelope branch's contract: its plots; no randomisation entries."""
