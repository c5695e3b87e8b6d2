"""The joint dynamics of record, shared by the actuator and controller branches.

One identification per run (``identification(ctx)``, cached in the evidence bundle): the
rig's LeRobot dataset replayed against the rig's own MJCF (``simgap.actuator.joint_id``),
the delay profiled, every parameter with a 95 % interval or a reason. The actuator finding
reports it; the controller finding reports the gains of the same fit (and its SIMPLER pose
fit only as a cross-check), so the two never disagree on the delay or the gains, and the
same seed gives the same numbers standalone and inside ``diagnose``.

Verdict per joint against the least residual (``least_residual``: the instrument's noise
floor of ``simgap.actuator.noise_floor``, the one the actuator ladder holds its MAE against,
here in RMS, with the model's own where the recording follows continuous time), the one rule
of ``simgap.fit.verdict``: ``eliminated`` when the rig's model as given replays within
``ELIMINATE_FACTOR`` x it; ``implicated`` when it is more than ``IMPLICATE_FACTOR`` x it away
and the identified model removes at least ``IMPLICATE_GAIN`` of its RMS error, and the
evidence can say what is off (enough data,
the joint excited, something on it identified: ``simgap.episodes.excitation``; otherwise it
is held at inconclusive with the reason, ``joint_held``); ``inconclusive`` otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.figures.actuator import DelayAccount
from simgap.figures.delay import Delay
from simgap.figures.latency import LatencyFigures
from simgap.fit.verdict import least_residual, verdict
from simgap.rig import Rig

MAX_FIT_EPISODES = 2
"""Episodes fitted (the rest are held out to prove a patch)."""
FIT_SECONDS = 8.0
"""Seconds of each fitted episode replayed (the fit's cost grows with it)."""

TAIL_WARMUP_S = 1.0
"""A proof stretch cut out of a fitted episode starts this long before the fit's end,
replayed from rest and not scored until the fit's end."""

MIN_TAIL_S = 2.0
"""Fewest seconds after the fit's end for a fitted episode to give a proof stretch."""


def dataset_logs(
    rig: Rig,
    ds: Any,
    seconds: float | None = None,
) -> tuple[list[Any], list[np.ndarray], list[Any]]:
    """(ReplayLogs and measured joints (T, J) [rad] of each episode's first ``seconds``
    (all of it when None), Trajectories of every episode whole); the actuators hold the
    first command before it acts (LeRobot: the arm was already at it)."""
    from simgap.episodes.command_shaping import shaped_trajectory
    from simgap.evidence.lerobot import dataset_trajectories
    from simgap.series import Trajectory
    from simgap.sim.replay import ReplayLog

    logs, targets, trajs = [], [], []
    for tr in dataset_trajectories(ds, rig):
        tr = shaped_trajectory(rig, tr)  # the command as it reached the servo ([deploy])
        t_all = np.asarray(tr.t, dtype=float)
        keep = slice(None) if seconds is None else t_all - t_all[0] <= seconds + 1e-9
        t, q, c = t_all[keep], np.asarray(tr.q)[keep], np.asarray(tr.q_cmd)[keep]
        logs.append(
            ReplayLog(
                t=t,
                commands=c,
                joints=rig.joint_names,
                q0=q[0],
                hold_before=c[0],
                source=f"{tr.source} episode {tr.episode}",
            )
        )
        targets.append(q)
        trajs.append(
            Trajectory(
                t=t_all,
                q_cmd=np.asarray(tr.q_cmd),
                q=np.asarray(tr.q),
                joint_names=rig.joint_names,
                episode=tr.episode,
                source=tr.source,
            )
        )
    return logs, targets, trajs


def _verdicts(js: dict[str, Any], exc: Any = None) -> tuple[str, dict[str, str], dict[str, str]]:
    """(verdict, per joint, why a joint the replay implicates is held at inconclusive).

    A joint whose replay is off and improved (the rule in the module docstring) is
    implicated only when the evidence can say what is off: enough data (``exc.thin``
    empty), the joint excited, and something on it identified (a parameter with an
    interval, or a delay whose interval excludes 0)."""
    per: dict[str, str] = {}
    held: dict[str, str] = {}
    for j, nom in js["nominal_rms_rad"].items():
        floor = least_residual(js["noise_floor_rad"][j])
        per[j] = verdict(nom, js["identified_rms_rad"][j], floor)
        if per[j] == "implicated":
            why = _held_because(js, exc, j)
            if why:
                per[j], held[j] = "inconclusive", why
    vals = list(per.values())
    overall = (
        "implicated"
        if "implicated" in vals
        else ("eliminated" if all(v == "eliminated" for v in vals) else "inconclusive")
    )
    return overall, per, held


def _held_because(js: dict[str, Any], exc: Any, joint: str) -> str:
    """Why the evidence cannot say what is off on ``joint`` ('' when it can)."""
    if exc is not None and exc.thin:
        return exc.thin
    je = exc.joint(joint) if exc is not None else None
    if je is not None and not je.excited:
        return je.unseen["all"]
    lo = js["delay_interval_s"][joint][0]
    if not js["params"].get(joint) and (lo <= 0 or joint in js.get("delay_ridge", {})):
        return (
            "nothing on this joint is identified (its delay interval starts at "
            f"{lo * 1e3:.0f} ms and no parameter has an interval): the replay is off, "
            "but the fit cannot say by what"
        )
    return ""


def loop_latency(ctx: Any) -> dict[str, Any] | None:
    """The control loop's measured latency (observation read -> send) from the latency
    finding of this run, if that branch ran and measured it."""
    for f in getattr(ctx, "findings", []) or []:
        if isinstance(f.figures, LatencyFigures) and f.figures.total_p50_s is not None:
            ci = f.figures.total_p50_ci_s
            return {"p50_s": f.figures.total_p50_s, "ci_s": list(ci) if ci else None}
    return None


def delay_account(js: dict[str, Any], loop: dict[str, Any] | None) -> DelayAccount:
    """How much of each joint's delay the loop explains and what is left for the servo.

    Each joint's :class:`Delay` is the whole command-to-motion delay with its interval; with
    the loop measured, ``loop_s`` is the loop's median and ``servo_s`` what is left of the
    whole delay (never below 0)."""
    ridge = js.get("delay_ridge") or {}
    source = "joint dynamics: the recording replayed against the rig's model"
    if loop is None:
        delays = {
            j: Delay(
                total_s=float(d),
                interval_s=_pair(js["delay_interval_s"][j]),
                on_ridge=j in ridge,
                source=source,
            )
            for j, d in js["delay_s"].items()
        }
        return DelayAccount(
            loop_s=None,
            delays=delays,
            note="the latency branch did not measure the loop: the delay is the whole "
            "command-to-motion delay (loop + servo)",
        )
    p50 = loop["p50_s"]
    delays, servo_iv = {}, {}
    for j, d in js["delay_s"].items():
        lo, hi = js["delay_interval_s"][j]
        delays[j] = Delay(
            total_s=float(d),
            interval_s=_pair((lo, hi)),
            loop_s=float(p50),
            servo_s=max(0.0, d - p50),
            on_ridge=j in ridge,
            source=source,
        )
        servo_iv[j] = (max(0.0, lo - p50), max(0.0, hi - p50))
    worst = max(dl.servo_s for dl in delays.values())
    note = (
        f"the loop's own latency ({p50 * 1e3:.1f} ms median) explains "
        f"that much of the delay; at most {worst * 1e3:.1f} ms is left for the "
        "servo: act on the latency first, and model only the servo's part"
    )
    return DelayAccount(loop_s=p50, delays=delays, servo_interval_s=servo_iv, note=note)


def _pair(iv: Any) -> tuple[float, float]:
    lo, hi = iv
    return float(lo), float(hi)


def identify_rig(
    rig: Rig, ds: Any, *, seed: int = 0, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The identification of record as JSON (contract keys plus verdicts)."""
    from simgap.actuator.joint_id import IdConfig, JointProblem, identify

    opts = options or {}
    logs, targets, trajs, n_fit, proof, exc = fit_split(rig, ds, opts)
    cfg = IdConfig(
        max_delay_s=float(opts.get("joint_id_max_delay_s", 0.14)),
        kinds=tuple(opts.get("joint_id_kinds", IdConfig.kinds)),
        profile_delay=bool(opts.get("joint_id_profile_delay", True)),
        joint_blocks=bool(opts.get("joint_id_joint_blocks", IdConfig.joint_blocks)),
        fine_iters=int(opts.get("joint_id_fine_iters", IdConfig.fine_iters)),
        clock=str(opts.get("joint_id_clock", rig.clock)),
        jitter_s=rig.clock_jitter_s,
    )
    problem = JointProblem(
        rig.model_path,
        rig.joint_names,
        logs[:n_fit],
        targets[:n_fit],
        cfg.kinds,
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
    )
    try:
        res = identify(problem, encoder_rad=rig.encoder_rad, config=cfg)
    finally:
        problem.close()
    js = res.to_json()
    verdict, per, held = _verdicts(js, exc)
    # a replay that is off and improved earns a patch to prove, identified or not, where
    # the data suffice to prove it (the finding says when nothing in it is identified)
    patch_joints = [
        j
        for j, v in per.items()
        if v == "implicated"
        or (j in held and not exc.thin and (exc.joint(j) is None or exc.joint(j).excited))
    ]
    js.update(
        {
            "verdict": verdict,
            "joint_verdicts": per,
            "joint_held": held,
            "patch_joints": patch_joints,
            "excitation": exc.figures(),
            "seed": seed,
            "fitted_episodes": n_fit,
            "held_out_episodes": len(logs) - n_fit,
            "fit_seconds": float(opts.get("joint_id_seconds", FIT_SECONDS)),
            "null_hypothesis": f"the rig's MJCF as given ({rig.model_path.name}): its "
            "actuators, damping, frictionloss and armature",
        }
    )
    # the patch is proven on the held-out episodes whole, not on the fit's first seconds,
    # and on what the fit did not replay of the fitted episodes: replaying two models open
    # loop costs little, and one joint's RMS over 8 s moves by tens of percent between
    # episodes
    js["_held_out"] = trajs[n_fit:]
    js["_proof"] = proof
    return js


def fit_split(
    rig: Rig,
    ds: Any,
    options: dict[str, Any] | None = None,
) -> tuple[list[Any], list[np.ndarray], list[Any], int, Any, Any]:
    """What the identification of record fits and proves on, and whether it can answer:
    (ReplayLogs and measured joints of every episode's fitted seconds, Trajectories whole,
    episodes fitted (the first ones, at least one held out), the proof stretches,
    the excitation and data checks of ``simgap.episodes.excitation``)."""
    from simgap.episodes.excitation import assess_excitation

    opts = options or {}
    seconds = float(opts.get("joint_id_seconds", FIT_SECONDS))
    logs, targets, trajs = dataset_logs(rig, ds, seconds)
    n_fit = min(len(logs), int(opts.get("joint_id_episodes", MAX_FIT_EPISODES)))
    if len(logs) > 1:
        n_fit = min(n_fit, len(logs) - 1)  # keep at least one episode held out
    proof = proof_stretches(trajs, n_fit, seconds)
    proof_s = sum(max(0.0, float(tr.t[-1] - tr.t[0]) - s) for tr, s in zip(*proof, strict=True))
    exc = assess_excitation(
        [lg.commands for lg in logs[:n_fit]],
        rig.joint_names,
        float(ds.fps),
        rig.encoder_rad,
        proof_s,
    )
    return logs, targets, trajs, n_fit, proof, exc


def proof_stretches(
    whole: list[Any],
    n_fit: int,
    fit_seconds: float,
) -> tuple[list[Any], list[float]]:
    """(stretches, seconds of each replayed before it is scored): the held-out episodes
    whole, then each fitted episode from ``TAIL_WARMUP_S`` before the end of what the fit
    replayed (a stretch starts at rest, so its first second is not scored), where at least
    ``MIN_TAIL_S`` are left to score."""
    out, skip = list(whole[n_fit:]), [0.0] * max(0, len(whole) - n_fit)
    for tr in whole[:n_fit]:
        t = np.asarray(tr.t, dtype=float)
        rel = t - t[0]
        if rel[-1] - fit_seconds < MIN_TAIL_S:
            continue
        keep = rel >= fit_seconds - TAIL_WARMUP_S - 1e-9
        out.append(tr.rows(keep, f"{tr.source} (after the fit's {fit_seconds:g} s)"))
        skip.append(float(fit_seconds - rel[keep][0]))
    return out, skip


def identification(ctx: Any) -> dict[str, Any]:
    """The run's identification of record (computed once, shared by the branches)."""
    from simgap.evidence.ros2_bag import rig_recording

    def load(rig: Rig) -> dict[str, Any]:
        ds = ctx.evidence.get("lerobot_dataset", rig_recording)  # a dataset, or ROS 2 bags
        return identify_rig(rig, ds, seed=ctx.seed, options=ctx.options)

    out: dict[str, Any] = ctx.evidence.get("joint_identification", load)
    return out


def applies(rig: Rig) -> bool:
    """Whether the rig's evidence is a LeRobot dataset (or ROS 2 bags) with the rig's own
    model (and no servo bench logs, which the actuator ladder reads instead)."""
    return (
        not rig.evidence.actuator_logs
        and rig.evidence.recording is not None
        and rig.model_path.is_file()
    )
