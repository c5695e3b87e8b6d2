"""Plumbing checks on what was commanded: the torque-on jump, the gripper's unit, joint
limits and clipping, and the control rate. Each returns a Finding (implicated or
eliminated) or None when the trace lacks what the check needs."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from simgap.figures.base import Record
from simgap.figures.plumbing import (
    ControlRateFigures,
    GripperUnitFigures,
    JointLimitsFigures,
    TorqueJumpFigures,
)
from simgap.finding import Finding, Verdict
from simgap.values.trace import JOINT_FEATURES, MOTORS, Trace

BRANCH = "plumbing"
TICKS_PER_REV = 4096
TORQUE_JUMP_TICKS = 100
"""A goal this far from the present position when torque comes on (about 8.8 deg) is a jump."""
GRIPPER_CLIP_FRACTION = 0.05
"""Gripper commands outside 0..100 on at least this fraction of ticks: wrong unit or scale."""
GRIPPER_PINNED_TICKS = 10
"""A gripper command clipped to a bound this many ticks in a row: a conversion never ran."""
RADIAN_SPAN_MAX = 2.0 * math.pi
"""Gripper commands that move but all stay within one turn's worth of numbers (|v| <= 2 pi)
on a 0..100 interface look like radians."""
LIMIT_TOLERANCE_FRACTION = 0.005
"""An action is outside a joint limit when past it by more than this fraction of the range."""
RATE_TOLERANCE = 0.10
"""The median control period may differ from the rig's by this fraction."""
LATE_FACTOR = 1.5
"""A tick is late when its period exceeds this multiple of the rig's period."""


def make_finding(
    title: str,
    implicated: bool,
    figures: Record,
    key: str,
    summary: str,
    fix: str,
    details: Record | None = None,
) -> Finding:
    """A plumbing Finding: implicated (with the fix as next step) or eliminated; its kind is
    its figures' (``simgap.figures.plumbing``)."""
    return Finding(
        branch=BRANCH,
        verdict=Verdict.IMPLICATED if implicated else Verdict.ELIMINATED,
        title=title,
        figures=figures,
        key_figure=key,
        summary=summary,
        next_step=fix if implicated else "Nothing to change.",
        details={} if details is None else details,
    )


def _to_ticks(value: float, motor: str, unit: str, meta: Mapping[str, Any]) -> float | None:
    """A recorded value in raw ticks through the trace's calibration (None if impossible)."""
    cal = (meta.get("calibration") or {}).get(motor)
    if unit == "ticks":
        return value
    if not cal:
        return None
    lo, hi = float(cal["range_min"]), float(cal["range_max"])
    if unit == "deg":
        return value * 4095.0 / 360.0 + (lo + hi) / 2.0
    if unit == "m100":
        return (value + 100.0) / 200.0 * (hi - lo) + lo
    if unit == "pct":
        return value / 100.0 * (hi - lo) + lo
    return None


def check_torque_jump(trace: Trace) -> Finding | None:
    """Torque enabled while goal and present differ: each joint's distance [ticks, deg]
    between the goal in force and the present position when torque came on.

    Every off -> on transition counts (the worst per joint is kept). Uses register writes
    and reads when the trace has them (the goal register reads
    ``meta.power_up_goal_ticks``, 0 by default, until written); else the first action
    against the first observation, through ``meta.calibration``.
    """
    meta = trace.meta
    dist: dict[str, float] = {}
    source = "registers"
    if any(w.register == "Torque_Enable" for w in trace.writes):
        goal = {m: float(meta.get("power_up_goal_ticks", 0)) for m in MOTORS}
        torque = {m: False for m in MOTORS}
        present: dict[str, float] = {}
        reads = sorted(trace.reads, key=lambda r: r.row)
        ri = 0
        for w in trace.writes:
            while ri < len(reads) and reads[ri].row <= w.row:
                r = reads[ri]
                if r.register == "Present_Position":
                    present[r.motor] = r.value
                ri += 1
            if w.register == "Goal_Position":
                goal[w.motor] = w.value
            elif w.register == "Torque_Enable":
                on = w.value >= 0.5
                if on and not torque.get(w.motor, False):
                    p = present.get(w.motor)
                    if p is None:
                        feat = f"{w.motor}.pos"
                        if feat in trace.observation and np.isfinite(
                            trace.observation[feat][w.row]
                        ):
                            p = _to_ticks(
                                float(trace.observation[feat][w.row]),
                                w.motor,
                                trace.units.get(feat, "deg"),
                                meta,
                            )
                    if p is not None:  # the worst of every off -> on transition
                        d = abs(goal.get(w.motor, 0.0) - p)
                        dist[w.motor] = max(d, dist.get(w.motor, 0.0))
                torque[w.motor] = on
    else:
        source = "first_action"
        for feat in JOINT_FEATURES:
            if feat not in trace.action or feat not in trace.observation:
                continue
            rows = np.flatnonzero(np.isfinite(trace.action[feat]))
            if rows.size == 0 or not np.isfinite(trace.observation[feat][rows[0]]):
                continue
            m = feat.removesuffix(".pos")
            unit = trace.units.get(feat, "deg")
            a = _to_ticks(float(trace.action[feat][rows[0]]), m, unit, meta)
            p = _to_ticks(float(trace.observation[feat][rows[0]]), m, unit, meta)
            if a is None and unit == "deg":
                d = abs(float(trace.action[feat][rows[0]] - trace.observation[feat][rows[0]]))
                dist[m] = d * TICKS_PER_REV / 360.0
            elif a is not None and p is not None:
                dist[m] = abs(a - p)
    if not dist:
        return None
    deg = {m: d * 360.0 / TICKS_PER_REV for m, d in dist.items()}
    worst = max(dist, key=lambda m: dist[m])
    far = {m: d for m, d in dist.items() if d > TORQUE_JUMP_TICKS}
    figs = {
        "max_distance_ticks": dist[worst],
        "max_distance_deg": deg[worst],
        "min_distance_ticks": min(dist.values()),
        "joints_far": len(far),
        "distance_ticks": dist,
        "distance_deg": deg,
        "source": source,
    }
    if far:
        lo, hi = min(far.values()), max(far.values())
        summary = (
            f"Torque came on with the goal {lo:.0f} to {hi:.0f} encoder ticks from the "
            f"present position on {len(far)} joint(s) (up to {deg[worst]:.0f} deg on "
            f"{worst}): the arm jumps toward the stale goal."
        )
    else:
        summary = f"Torque came on with every goal within {dist[worst]:.0f} ticks of present."
    return make_finding(
        "Torque on before goal = present",
        bool(far),
        TorqueJumpFigures.from_mapping(figs),
        "max_distance_deg",
        summary,
        "Write Goal_Position = Present_Position for every motor before enabling torque.",
    )


def _longest_run(mask: np.ndarray) -> int:
    best = cur = 0
    for v in mask:
        cur = cur + 1 if v else 0
        best = max(best, cur)
    return best


def check_gripper_unit(trace: Trace) -> Finding | None:
    """Gripper commands in the wrong unit or scale for LeRobot's 0..100 gripper: requested
    values outside 0..100 (simulator degrees), clipped to a bound for many ticks in a row (a
    conversion that never ran), or moving within a radian-sized span."""
    a = trace.action.get("gripper.pos")
    if a is None or not np.any(np.isfinite(a)):
        return None
    v = a[np.isfinite(a)]
    outside = (v < 0.0) | (v > 100.0)
    frac = float(outside.mean())
    pinned = _longest_run(outside)
    span = float(v.max() - v.min())
    radians = bool(np.all(np.abs(v) <= RADIAN_SPAN_MAX) and span > 0.05 and v.size >= 10)
    scale = bool(frac >= GRIPPER_CLIP_FRACTION or pinned >= GRIPPER_PINNED_TICKS)
    looks = "radians" if radians else ("out_of_range" if scale else "0..100")
    figs = {
        "requested_min": float(v.min()),
        "requested_max": float(v.max()),
        "requested_span": span,
        "clipped_ticks": int(outside.sum()),
        "clipped_fraction": frac,
        "longest_pinned_run_ticks": pinned,
        "looks_like": looks,
    }
    bad = radians or scale
    if radians:
        summary = (
            f"Gripper commands span {span:.2f} units ({v.min():.2f} to {v.max():.2f}) "
            "on a 0..100 interface: radians sent unconverted (a conversion branch that "
            "never ran?)."
        )
    elif scale:
        summary = (
            f"{frac:.0%} of gripper commands fall outside 0..100 ({v.min():.1f} to "
            f"{v.max():.1f}); {pinned} ticks in a row were clipped to a bound: "
            "simulator units sent to a 0..100 interface."
        )
    else:
        summary = f"Gripper commands stay within 0..100 ({v.min():.1f} to {v.max():.1f})."
    return make_finding(
        "Gripper unit or scale",
        bad,
        GripperUnitFigures.from_mapping(figs),
        "requested_span" if radians else "clipped_fraction",
        summary,
        "Convert the policy's gripper value to LeRobot's 0..100 (0 closed, 100 open) "
        "unconditionally; do not branch on robot.name (it is 'so_follower' since "
        "LeRobot 0.4.3).",
    )


def _limits(trace: Trace, feat: str) -> tuple[float, float] | None:
    lim = (trace.meta.get("joint_limits") or {}).get(feat)
    if lim is not None and len(lim) == 2:
        return float(lim[0]), float(lim[1])
    unit = trace.units.get(feat)
    if unit == "m100":
        return -100.0, 100.0
    return None


def check_joint_limits(trace: Trace) -> Finding | None:
    """Body-joint actions past the joint limits (``meta.joint_limits``, or -100..100), or
    clipped on the way to the motors (``sent`` differs from ``action``). The gripper has its
    own check."""
    per: dict[str, dict[str, float]] = {}
    for feat in JOINT_FEATURES[:-1]:
        a = trace.action.get(feat)
        if a is None:
            continue
        ok = np.isfinite(a)
        row: dict[str, float] = {}
        lim = _limits(trace, feat)
        if lim is not None:
            tol = LIMIT_TOLERANCE_FRACTION * (lim[1] - lim[0])
            excess = np.maximum(a[ok] - lim[1], lim[0] - a[ok])
            row["ticks_outside"] = int(np.sum(excess > tol))
            row["max_excess"] = float(max(0.0, excess.max())) if excess.size else 0.0
        s = trace.sent.get(feat)
        if s is not None:
            both = ok & np.isfinite(s)
            row["ticks_clipped"] = int(np.sum(np.abs(a[both] - s[both]) > 1e-6))
        if row:
            per[feat] = row
    if not per:
        return None
    outside = sum(int(r.get("ticks_outside", 0)) for r in per.values())
    clipped = sum(int(r.get("ticks_clipped", 0)) for r in per.values())
    worst = max(per, key=lambda k: per[k].get("max_excess", 0.0))
    figs = {
        "ticks_outside": outside,
        "ticks_clipped": clipped,
        "max_excess": per[worst].get("max_excess", 0.0),
        "worst_joint": worst,
        "per_joint": per,
    }
    bad = outside > 0 or clipped > 0
    summary = (
        f"{outside} body-joint commands past a joint limit and {clipped} clipped on the "
        f"way to the motors (worst {worst}, {figs['max_excess']:.1f} "
        f"{trace.units.get(worst, '')} past)."
        if bad
        else "Every body-joint command stayed within the joint limits, unclipped."
    )
    return make_finding(
        "Actions outside joint limits or clipped",
        bad,
        JointLimitsFigures.from_mapping(figs),
        "ticks_outside",
        summary,
        "Check the action's unit and scale against the robot's (degrees vs "
        "-100..100) and clamp in the policy's own space, not silently at the bus.",
    )


def check_control_rate(trace: Trace, expected_dt_s: float | None) -> Finding | None:
    """The control period between consecutive actions within episodes, against the rig's
    (or ``meta.control_dt_s``)."""
    exp = expected_dt_s if expected_dt_s is not None else trace.meta.get("control_dt_s")
    if exp is None or len(trace) < 3:
        return None
    exp = float(exp)
    acted = np.zeros(len(trace), dtype=bool)  # records that sent an action (not bookkeeping)
    for col in trace.action.values():
        acted |= np.isfinite(col)
    t, ep = trace.t[acted], trace.episode[acted]
    same = ep[1:] == ep[:-1]
    dt = np.diff(t)[same]
    dt = dt[np.isfinite(dt)]
    if dt.size < 2:
        return None
    med = float(np.median(dt))
    late = float(np.mean(dt > LATE_FACTOR * exp))
    ratio = med / exp
    bad = abs(ratio - 1.0) > RATE_TOLERANCE or late > RATE_TOLERANCE
    figs = {
        "median_dt_s": med,
        "expected_dt_s": exp,
        "rate_hz": 1.0 / med if med > 0 else None,
        "expected_rate_hz": 1.0 / exp,
        "period_ratio": ratio,
        "late_fraction": late,
        "ticks": int(dt.size),
    }
    summary = (
        f"The deployment ran at a median period of {med * 1e3:.1f} ms against the rig's "
        f"{exp * 1e3:.1f} ms (ratio {ratio:.2f}); {late:.0%} of ticks were late."
    )
    return make_finding(
        "Control rate",
        bad,
        ControlRateFigures.from_mapping(figs),
        "period_ratio",
        summary,
        "Run the control loop at the rate the policy was trained at: sleep to a fixed "
        "period and keep slow work (inference, I/O) off the loop.",
    )
