"""The effective command: the evidence gate's check of what reached the servo.

The joint fit replays the command as it reached the servo (``simgap.episodes.
command_shaping``: the rig's ``[deploy] max_relative_target`` and ``goal_speed_rad_s``
applied to the recorded action). A clip nobody states is absorbed by the fit as delay or
lag, so this Finding (branch ``evidence``, title "Command shaping") runs beside the time
base and excitation checks, before any fit, on the same recording:

- the rig states no shaping and the recording shows a clip (``simgap.episodes.
  clip_search``): implicated, with the bound found, its evidence (replay RMS of the rig's
  model with the action as recorded and clipped, per joint) and the ``[deploy]`` line to set;
- the rig states no shaping and none shows: eliminated;
- the rig states it: how much of the replay's residual the shaping explains (replay RMS
  without and with it, per joint), eliminated when the data agree with the stated bound,
  inconclusive (naming the bound the data prefer) when they do not.

It lives in the evidence gate, not in plumbing, because it is a fact of the recording (the
goal the follower sent is computable from the frames) that every fit downstream depends on,
and because the gate already reads the recording and knows whether the joint fit will run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.actuator.clip_search import ClipSearch, replay_rms, search_clip
from simgap.episodes.command_shaping import Shaping, shaping_of
from simgap.evidence.lerobot import dataset_trajectories
from simgap.figures.evidence import CommandShapingFigures
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

BRANCH = "evidence"
TITLE = "Command shaping"
AGREE_RATIO = 1.35
"""A bound the data prefer within this factor of the stated one agrees with it."""
KEYS = (
    "deploy.max_relative_target",
    "deploy.goal_speed_rad_s",
    "deploy.servo_p_gain",
    "deploy.gripper_torque_limit",
)


def _mrad(x: float) -> str:
    return f"{x * 1e3:.1f} mrad"


def _unit(u: str) -> str:
    return {"deg": "deg", "pct": "% of range", "m100": "(-100..100)"}.get(u, u)


def finding(rig: Rig, ds: Any) -> Finding:
    """The command-shaping Finding of a recording (``ds``: a LeRobot dataset) on ``rig``."""
    trajs = dataset_trajectories(ds, rig)
    cs = search_clip(rig, trajs)
    shaping = shaping_of(rig)
    prov = {k: rig.provenance(k) for k in KEYS}
    figs: dict[str, Any] = {
        "clip_search": cs.figures(),
        "provenance": prov,
        "stated_max_relative_target": list(shaping.bound_recorded)
        if shaping.bound_recorded
        else None,
        "stated_goal_speed_rad_s": shaping.speed_rad_s,
    }
    if shaping.active:
        return _stated(rig, trajs, cs, shaping, figs)
    found = cs.bounds_found()
    gain = [
        1 - c / u if u > 0 else 0.0
        for c, u in zip(cs.rms_clipped_rad, cs.rms_unclipped_rad, strict=True)
    ]
    figs["best_clip_gain_fraction"] = float(max(gain))  # the key figure of every verdict
    if not found:
        return Finding(
            branch=BRANCH,
            verdict=Verdict.ELIMINATED,
            title=TITLE,
            key_figure="best_clip_gain_fraction",
            figures=CommandShapingFigures.from_mapping(figs),
            summary=f"No clip of the goal shows in the recording: clipping the action at "
            f"any max_relative_target removes at most {100 * max(gain):.0f} % of a "
            f"joint's replay RMS (a clip needs {100 * 0.5:.0f} %), and no recorded "
            "gap piles up at a bound. The fits replay the action as recorded.",
            next_step="Nothing to set: the follower's max_relative_target is None, as "
            "LeRobot's default.",
        )
    line = cs.rig_line(rig)
    per = "; ".join(
        f"{j} {v:.3g} {_unit(u)} (replay {_mrad(ru)} -> {_mrad(rc)}, "
        f"{100 * f:.0f} % of goals clipped)"
        for j, u, v, ru, rc, f in _rows(cs)
        if v is not None
    )
    figs["bound_found"] = found
    figs["rig_line"] = line
    # the recorded gap piled at a bound is the clip itself; a replay that prefers a clipped
    # action is a lead only: a slow arm (kp x0.5, armature and damping x2, no clip) makes
    # the model's replay prefer a 2 deg clip by 55 %, so it implicates nothing
    measured = any(p is not None for p in cs.piled)
    if not measured:
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title=TITLE,
            key_figure="best_clip_gain_fraction",
            figures=CommandShapingFigures.from_mapping(figs),
            summary=f"The rig's model replays the recording better with the goal clipped "
            f"against the present position ({per}), but the recorded goals show no "
            "clip themselves (no gap piles up at a bound), and an arm slower than its "
            "model replays the same way: a lead, not a measurement.",
            next_step=f"Check the follower's config (SOFollowerConfig.max_relative_target): "
            f"if it is set, write it under [deploy] in the rig ({line}) and diagnose "
            "again; if it is None, the arm is slower than its model (see the "
            "actuator finding).",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.IMPLICATED,
        title=TITLE,
        key_figure="best_clip_gain_fraction",
        figures=CommandShapingFigures.from_mapping(figs),
        summary=f"The recording shows a clip of the goal against the present position that "
        f"the rig does not state: {per}. Replayed as recorded, the arm is asked for "
        "motion the servo never was, and the fit takes the difference for delay or "
        "lag.",
        next_step=f"Check the follower's config (SOFollowerConfig.max_relative_target) and "
        f"write it under [deploy] in the rig: {line}; then diagnose again, so the "
        "fit replays the command as it was sent.",
    )


def _rows(cs: ClipSearch) -> list[tuple[str, str, float | None, float, float, float]]:
    found = cs.bounds_found()
    return [
        (j, u, found.get(j), ru, rc, f)
        for j, u, ru, rc, f in zip(
            cs.joints,
            cs.units,
            cs.rms_unclipped_rad,
            cs.rms_clipped_rad,
            cs.clipped_fraction,
            strict=True,
        )
    ]


def _stated(
    rig: Rig, trajs: list[Any], cs: ClipSearch, shaping: Shaping, figs: dict[str, Any]
) -> Finding:
    """The rig states a shaping: what it explains, and whether the data agree."""
    cut = trajs[:2]
    rms = replay_rms(rig, cut, [None, shaping])
    explained = {
        j: float(1 - s / n) if n > 0 else 0.0
        for j, n, s in zip(rig.joint_names, rms[0], rms[1], strict=True)
    }
    figs["replay_rms_unshaped_rad"] = dict(zip(rig.joint_names, rms[0].tolist(), strict=True))
    figs["replay_rms_shaped_rad"] = dict(zip(rig.joint_names, rms[1].tolist(), strict=True))
    figs["explained_fraction"] = explained
    figs["median_explained_fraction"] = float(np.median(list(explained.values())))
    stated = shaping.bound_recorded
    disagree = {}
    if stated is not None:
        for j, b, s in zip(rig.joint_names, cs.best_bound, stated, strict=True):
            found = cs.bounds_found().get(j)
            if found is not None and not 1 / AGREE_RATIO <= found / s <= AGREE_RATIO:
                disagree[j] = (found, s, b)
    figs["disagree"] = {j: {"found": f, "stated": s} for j, (f, s, _) in disagree.items()}
    what = []
    if stated is not None:
        what.append(f"max_relative_target {', '.join(f'{s:g}' for s in sorted(set(stated)))}")
    if shaping.speed_rad_s is not None:
        what.append(f"goal speed {shaping.speed_rad_s:g} rad/s")
    expl = ", ".join(
        f"{j} {_mrad(n)} -> {_mrad(s)}"
        for j, n, s in zip(rig.joint_names, rms[0], rms[1], strict=True)
    )
    summary = (
        f"The fits replay the command as sent ([deploy] {'; '.join(what)}): it "
        f"explains a median {100 * figs['median_explained_fraction']:.0f} % of the "
        f"replay RMS of the action as recorded ({expl})."
    )
    if disagree:
        rows = "; ".join(f"{j} {f:.3g} against {s:g}" for j, (f, s, _) in disagree.items())
        return Finding(
            branch=BRANCH,
            verdict=Verdict.INCONCLUSIVE,
            title=TITLE,
            key_figure="median_explained_fraction",
            figures=CommandShapingFigures.from_mapping(figs),
            summary=summary + f" The data prefer another bound: {rows}.",
            next_step="Check max_relative_target in the follower's config against the rig's "
            f"[deploy] (provenance: {figs['provenance']['deploy.max_relative_target']})"
            f"; the data suggest {cs.rig_line(rig)}.",
        )
    return Finding(
        branch=BRANCH,
        verdict=Verdict.ELIMINATED,
        title=TITLE,
        key_figure="median_explained_fraction",
        figures=CommandShapingFigures.from_mapping(figs),
        summary=summary,
        next_step="Nothing to change: the fits use the command as it reached the servo.",
    )
