"""The evidence gate: checks of the recording itself, run before any branch fits it.

A fit takes the recording's stamps as the times its motion happened at. When they are not
(a ``lerobot-record`` loop that ran at 2 Hz under a 30 fps label), every delay, lag and
gain it returns fits the wrong clock. ``assess`` checks the time base of
``evidence.dataset`` (``simgap.episodes.time_base``) and returns its Finding (branch
``evidence``, title "Time base"); ``time_base_refusal`` is how a branch that needs the time
base (the joint-dynamics fit, the controller, the envelope's rate and speed checks) asks
whether it may run, and ``not_run`` is the Finding it returns when it may not. Where the
joint fit will run, ``excitation_finding`` says before it whether the recording can answer
it (``simgap.episodes.excitation``: enough seconds to fit and to prove on, each joint moved,
what its commands cannot show).

The speed limit is the servo family's (``deploy.servo_model``: the larger of its no-load
speed and its firmware clamp); a rig that names no servo is held against
``ANY_SERVO_RAD_S``, a bound no arm servo simgap knows comes near, and says so.
"""

from __future__ import annotations

import math

from simgap.actuator.families import servo_family
from simgap.branches.branch import Branch
from simgap.branches.context import Context
from simgap.episodes.excitation import Excitation
from simgap.episodes.time_base import (
    DETECT_MAX,
    REFUSAL_FIX,
    SPEED_MARGIN,
    TimeBase,
    assess_time_base,
)
from simgap.errors import NameNotFoundError
from simgap.evidence.lerobot import dataset_trajectories
from simgap.evidence.ros2_bag import rig_recording
from simgap.figures.evidence import (
    ExcitationFigures,
    NotRunFigures,
    TimeBaseDetails,
    TimeBaseFigures,
)
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

BRANCH = "evidence"
TITLE = "Time base"
EXCITATION_TITLE = "Excitation and data"
ANY_SERVO_RAD_S = 20.0
"""Speed limit [rad/s] of a rig that names no servo (``deploy.servo_model``): about twice
the fastest servo simgap knows (the XL330, 10.8 rad/s no-load at 5 V; the STS3215 turns
4.7 rad/s at 7.4 V). A loose bound: it refuses only motion no arm servo makes."""
GATED = ("envelope", "actuator", "controller")
"""The branches that ask ``time_base_refusal`` before they read the dataset's stamps."""
NEEDS_TIME_BASE = ("joint dynamics", "controller", "control rate", "speed")
"""What reads the dataset's stamps as time (for the report's words)."""


def speed_limits(rig: Rig) -> tuple[list[float], str]:
    """Per rig joint, the servo's speed limit [rad/s], and where it comes from."""
    model = rig.deploy.servo_model
    if model and rig.stated("deploy.servo_model"):  # a guessed servo is no one's statement
        try:
            fam = servo_family(model)
        except NameNotFoundError:
            fam = None
        if fam is not None:
            clamp = fam.max_velocity_rad_s if math.isfinite(fam.max_velocity_rad_s) else 0.0
            lim = max(fam.no_load_speed_rad_s, clamp)
            return [lim] * len(rig.joints), (
                f"deploy.servo_model = {model!r}: the {fam.name.upper()}'s no-load speed "
                f"{fam.no_load_speed_rad_s:.3g} rad/s and firmware clamp "
                f"{fam.max_velocity_rad_s:.3g} rad/s, the larger"
            )
    return [ANY_SERVO_RAD_S] * len(rig.joints), (
        f"no deploy.servo_model in the rig: {ANY_SERVO_RAD_S:g} rad/s, about twice the "
        "fastest servo simgap knows (set deploy.servo_model for a tighter bound)"
    )


def time_base_of(rig: Rig, ds: object) -> TimeBase:
    """The time-base checks of a LeRobot dataset (``simgap.evidence.lerobot``) on ``rig``."""
    trajs = dataset_trajectories(ds, rig)  # type: ignore[arg-type]
    limits, source = speed_limits(rig)
    grip = next((i for i, j in enumerate(rig.joints) if j.gripper), None)
    return assess_time_base(
        [tr.t for tr in trajs],
        [tr.q for tr in trajs],
        [tr.q_cmd for tr in trajs],
        rig.joint_names,
        limits,
        fps=float(ds.fps),  # type: ignore[attr-defined]
        gripper=grip,
        episodes=[tr.episode for tr in trajs],
        limit_from=source,
    )


def finding(tb: TimeBase, provenance: dict[str, str] | None = None) -> Finding:
    """The time base as a Finding: implicated (refused) with the fix, else eliminated;
    ``provenance`` (rig key -> given | guessed | default) goes into its figures."""
    figs = TimeBaseFigures.from_mapping({**tb.figures(), "provenance": dict(provenance or {})})
    period_ms = tb.period_s * 1e3
    if tb.refused:
        slow = (
            f" The fastest step needs a period of at least {tb.min_real_period_s * 1e3:.0f} "
            f"ms at the servo's speed, against the {period_ms:.0f} ms the label gives."
            if tb.min_real_period_s > tb.period_s * 1.01
            else ""
        )
        return Finding(
            branch=BRANCH,
            verdict=Verdict.IMPLICATED,
            title=TITLE,
            key_figure="peak_to_limit_ratio",
            figures=figs,
            summary=f"Refused: the dataset's stamps are not the times its motion happened at "
            f"({'; '.join(tb.reasons)}).{slow} Nothing that reads its stamps as time "
            f"({', '.join(NEEDS_TIME_BASE)}) was run on it.",
            next_step=f"Re-record: {REFUSAL_FIX}. Check that lerobot-record does not log "
            "'Record loop is running slower', then diagnose the new recording.",
            details=TimeBaseDetails.from_mapping({"reasons": list(tb.reasons)}),
        )
    peak = figs.peak_speed_rad_s
    power = tb.detectable_slowdown
    if not power <= DETECT_MAX:  # too little motion to tell a slow loop from a slow arm
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title=TITLE,
            key_figure="detectable_slowdown_ratio",
            figures=figs,
            summary=f"The arm moves too slowly to check the time base: its fastest joint step "
            f"is {peak:.3g} rad/s ({figs.peak_speed_joint}), so only a loop "
            f"{power:.3g} times slower than its {tb.fps:g} fps label would show as "
            f"impossible motion ({DETECT_MAX:g} x is checked). The fits run on its "
            "stamps as they are.",
            next_step="Record faster moves (or set deploy.servo_model for a tighter bound) to "
            "vouch for the recording's rate; check that lerobot-record did not log "
            "'Record loop is running slower'.",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.ELIMINATED,
        title=TITLE,
        key_figure="peak_to_limit_ratio",
        figures=figs,
        summary=f"The motion fits the labelled {tb.fps:g} fps: the fastest joint step is "
        f"{peak:.3g} rad/s ({figs.peak_speed_joint}), "
        f"{figs.peak_to_limit_ratio:.2f} x the servo's {figs.speed_limit_rad_s:.3g} "
        f"rad/s (refused above {SPEED_MARGIN:g} x: a loop {power:.3g} times slower "
        f"than its label would have been); {tb.stale_frames} stale of "
        f"{tb.moving_frames} mid-motion frames, {tb.gaps} gaps, float32 stamps "
        f"resolve {tb.resolution_s * 1e6:.3g} us.",
        next_step="Nothing to change in how the dataset is recorded.",
    )


def excitation_finding(exc: Excitation) -> Finding:
    """The excitation and data checks as a Finding: inconclusive when the data are too
    little for a joint finding to implicate or a joint barely moved (the fit still runs,
    and its joints are held at inconclusive with the reason), else eliminated, naming what
    the commands cannot show."""
    figs = ExcitationFigures.from_mapping(exc.figures())
    still = [j.name for j in exc.joints if not j.excited]
    unseen = [f"{j.name} {k}" for j in exc.joints if j.excited for k in j.unseen]
    amount = (
        f"{exc.fitted_s:.1f} s fitted over {exc.fitted_episodes} episode(s) "
        f"({exc.frames} frames), {exc.proof_s:.1f} s to prove a patch on"
    )
    blind = (
        f" The commands cannot show {', '.join(unseen)} (figures.joints.*.unseen says why)."
        if unseen
        else ""
    )
    if exc.thin or still:
        why = "; ".join(
            [exc.thin] * bool(exc.thin) + [f"{j}: {exc.joint(j).unseen['all']}" for j in still]  # type: ignore[union-attr]
        )
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title=EXCITATION_TITLE,
            key_figure="fitted_s",
            figures=figs,
            summary=f"The recording cannot answer the joint fit in full ({amount}): {why}. "
            f"No joint finding is implicated on it.{blind}",
            next_step="Record more and livelier motion: 'simgap excite RIG' writes chirps for "
            "every joint, and 'simgap excite --for DIR' the episode a diagnosis "
            "needs; then diagnose again.",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.ELIMINATED,
        title=EXCITATION_TITLE,
        key_figure="fitted_s",
        figures=figs,
        summary=f"Enough data for the joint fit ({amount}), every joint moved.{blind}",
        next_step="Nothing to change in what was recorded."
        if not unseen
        else "To identify what the commands cannot show, record the episode 'simgap "
        "excite --for DIR' designs after the diagnosis.",
    )


def assess(ctx: Context) -> list[Finding]:
    """The evidence gate's Findings (none when the rig names no dataset)."""
    from simgap.branches.joint_dynamics import applies, fit_split

    rig = ctx.rig
    if rig.evidence.recording is None:
        return []
    ds = ctx.evidence.get("lerobot_dataset", rig_recording)  # a dataset, or ROS 2 bags
    out = [
        finding(time_base_of(rig, ds), {"deploy.servo_model": rig.provenance("deploy.servo_model")})
    ]
    if applies(rig):
        out.append(excitation_finding(fit_split(rig, ds, dict(ctx.options or {}))[5]))
        from simgap.branches import effective_command  # what reached the servo (issue 36)

        if out[0].typed(TimeBaseFigures).refused:  # its clip search replays stamps as time
            out.append(not_run(BRANCH, effective_command.TITLE, out[0]))
        else:
            out.append(effective_command.finding(rig, ds))
    return out


def time_base_refusal(ctx: Context) -> Finding | None:
    """The refused time-base Finding among those run so far, or None (a branch that reads
    the dataset's stamps as time does not run when there is one)."""
    return next(
        (
            f
            for f in ctx.findings
            if f.branch == BRANCH
            and f.kind == TimeBaseFigures.kind
            and f.typed(TimeBaseFigures).refused
        ),
        None,
    )


def not_run(branch: str, title: str, refusal: Finding) -> Finding:
    """The Finding of a branch that was not run because the time base was refused."""
    f = refusal.typed(TimeBaseFigures)
    return Finding(
        branch=branch,
        verdict=Verdict.INCONCLUSIVE,
        title=title,
        summary=f"Not run: the dataset's time base is refused (evidence: {TITLE}; the "
        f"fastest step is {f.peak_to_limit_ratio:.3g} x the servo's "
        "speed at the labelled rate), so a fit would fit the wrong clock.",
        next_step=f"Re-record: {REFUSAL_FIX}.",
        figures=NotRunFigures.of(branch)(
            not_run=True,
            refused_by=f"{BRANCH}: {TITLE}",
            labelled_fps=f.labelled_fps,
            peak_to_limit_ratio=f.peak_to_limit_ratio,
        ),
        key_figure="peak_to_limit_ratio",
    )


SPEC = Branch(
    name=BRANCH,
    cost=0.0,
    needs=("evidence.dataset (the recording the fits read)",),
    assess=assess,
)
"""The evidence gate's contract: it runs before the rungs (``simgap.ladder.run_ladder``),
not among them; its findings carry no plot and no randomisation entry."""
