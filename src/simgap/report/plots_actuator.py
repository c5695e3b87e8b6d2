"""Report plots of the actuator branch, most telling first: real against simulated joint
trajectories before and after the fit (the joint dynamics' held-out traces), the held-out
error of every joint for the ideal actuator and the selected rung against the noise floor
(the ladder), the identified delay per joint with its 95% interval and its profile (the
joint dynamics), then each joint's ladder."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simgap.figures.actuator import (
    DelayProfile,
    JointDynamicsDetails,
    JointDynamicsFigures,
    LadderDetails,
    LadderFigures,
    LadderJointDetails,
    TraceJoint,
)
from simgap.finding import details_of, figures_of
from simgap.report.svg.bars import bars
from simgap.report.svg.intervals import intervals as interval_plot
from simgap.report.svg.lines import lines
from simgap.report.svg.scale import fmt


def _f(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def trajectory_plots(joints: Mapping[str, TraceJoint], floor: float | None) -> list[str]:
    """Per joint: real, simulated before and after the fit; and the residual against the
    noise floor (``details.joints[j].traces`` of the joint dynamics)."""
    out = []
    for name, j in joints.items():
        tr = j.traces
        if not tr.t_s or not tr.real_rad:
            continue
        series: dict[str, Any] = {"real": tr.real_rad}
        if tr.before_rad:
            series["sim, nominal"] = tr.before_rad
        if tr.after_rad:
            series[f"sim, fitted ({j.selected or 'fit'})"] = tr.after_rad
        out.append(
            lines(
                tr.t_s,
                series,
                xlabel="time [s]",
                ylabel="angle [rad]",
                title=f"{name}: real vs simulated trajectory",
            )
        )
        if tr.after_rad:
            res = [_f(a) - _f(b) for a, b in zip(tr.real_rad, tr.after_rad, strict=False)]
            out.append(
                lines(
                    tr.t_s[: len(res)],
                    {"real - fitted": res},
                    xlabel="time [s]",
                    ylabel="residual [rad]",
                    title=f"{name}: residual after the fit",
                    band=(floor, f"noise floor +-{fmt(floor)} rad") if floor else None,
                )
            )
    return out


def overview(joints: Mapping[str, LadderJointDetails], floor: float | None) -> str:
    """Held-out error per joint: the ideal actuator and the selected rung, against the floor."""
    names, ideal, chosen = [], [], []
    for name, j in joints.items():
        rungs = {r.model: r for r in j.rungs}
        if not rungs:
            continue
        names.append(name)
        ideal.append(_f(rungs["ideal"].validation_mae_rad) if "ideal" in rungs else math.nan)
        chosen.append(_f(rungs[j.selected].validation_mae_rad) if j.selected in rungs else math.nan)
    return bars(
        names,
        {"ideal actuator": ideal, "selected rung": chosen},
        xlabel="joint",
        ylabel="held-out MAE [rad]",
        title="Held-out error per joint, ideal vs fitted actuator",
        hline=(floor, f"noise floor {fmt(floor)} rad") if floor else None,
    )


NO_INTERVAL = (
    "a delay without an interval (the best fit of the joint's selected rung: "
    "the actuator ladder gives its delays none)"
)
RIDGE = (
    "a delay on a ridge, not identified on its own (hover the point for what it trades "
    "off with; its bar is the 95% interval along the ridge)"
)


def delay_plots(
    delays: Mapping[str, float],
    intervals: Mapping[str, tuple[float, float]] | None = None,
    ridges: Mapping[str, str] | None = None,
    selected: Mapping[str, str] | None = None,
) -> list[str]:
    """The identified delay per joint with its 95% interval.

    A delay is drawn hollow, and the caption says why, when it has no interval (the actuator
    ladder fits a delay per rung and gives none: ``intervals`` None, ``selected`` its rung
    per joint) or lies on a ridge (the joint dynamics found the delay trading off with the
    servo's lag: ``ridges``), so the plot never shows a bare hollow point beside a text that
    states the delay."""
    iv, ridges, selected = intervals or {}, ridges or {}, selected or {}
    names = [n for n, v in delays.items() if math.isfinite(_f(v))]
    if not names:
        return []
    bounds: list[tuple[float, float] | None] = []
    notes: list[str | None] = []
    causes: list[str] = []
    for n in names:
        b = iv.get(n)
        ok = b is not None and len(b) == 2 and all(math.isfinite(_f(x)) for x in b)
        bounds.append((_f(b[0]) * 1e3, _f(b[1]) * 1e3) if ok and b is not None else None)
        ridge = ridges.get(n)
        if not ok:
            sel = selected.get(n)
            notes.append(f"no interval: the best fit of the {sel} rung" if sel else "no interval")
            causes.append(NO_INTERVAL if not iv else "a delay without an interval")
        elif ridge:
            notes.append(f"on a ridge: {ridge}")
            causes.append(RIDGE)
        else:
            notes.append(None)
    return [
        interval_plot(
            names,
            [_f(delays[n]) * 1e3 for n in names],
            bounds,
            xlabel="joint",
            ylabel="delay [ms]",
            title="Identified command-to-motion delay per joint",
            notes=notes,
            hollow="; ".join(dict.fromkeys(causes)),
        )
    ]


def profile_plots(profiles: Mapping[str, DelayProfile]) -> list[str]:
    """Per joint, the fit's squared error at each assumed delay (the profile the delay's
    interval is read from)."""
    return [
        lines(
            [_f(v) * 1e3 for v in p.delays_s],
            {"fit error": p.ssr_rad2},
            xlabel="assumed delay [ms]",
            ylabel="summed squared error [rad^2]",
            title=f"{name}: delay profile",
        )
        for name, p in profiles.items()
        if len(p.delays_s) == len(p.ssr_rad2) > 1
    ]


def ladder_plots(joints: Mapping[str, LadderJointDetails], floor: float | None) -> list[str]:
    """Each joint's ladder: train and held-out error per rung, and the selected rung's
    held-out error per log."""
    out = []
    for name, j in joints.items():
        if not j.rungs:
            continue
        labels = [r.model for r in j.rungs]
        out.append(
            bars(
                labels,
                {
                    "train": [_f(r.train_mae_rad) for r in j.rungs],
                    "held-out": [_f(r.validation_mae_rad) for r in j.rungs],
                },
                xlabel="actuator model (ladder rung)",
                ylabel="MAE [rad]",
                hline=(floor, f"noise floor {fmt(floor)} rad") if floor else None,
                title=f"{name}: actuator ladder (selected {j.selected})",
            )
        )
        sel = next((r for r in j.rungs if r.model == j.selected), None)
        per = sel.validation_per_log_rad if sel is not None else ()
        if len(per) > 1:
            out.append(
                bars(
                    [f"log {i + 1}" for i in range(len(per))],
                    {j.selected: [_f(v) for v in per]},
                    xlabel="held-out trajectory",
                    ylabel="held-out MAE [rad]",
                    title=f"{name}: held-out error per trajectory",
                )
            )
    return out


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets (inline SVG) for one actuator finding (its ``to_dict`` form), by kind:
    the ladder's (bench logs) or the joint dynamics' (a LeRobot dataset)."""
    kind = str(finding.get("kind") or "")
    out: list[str] = []
    if kind == LadderFigures.kind:
        fig = figures_of(finding, LadderFigures)
        det = details_of(finding, LadderDetails)
        floor_v = _f(det.noise_floor_rad)
        if not math.isfinite(floor_v):
            floor_v = _f(fig.noise_floor_rad)
        floor = floor_v if math.isfinite(floor_v) and floor_v > 0 else None
        out.append(overview(det.joints, floor))
        out += delay_plots(
            {n: j.delay_s for n, j in det.joints.items()},
            selected={n: j.selected for n, j in det.joints.items()},
        )
        out += ladder_plots(det.joints, floor)
    elif kind == JointDynamicsFigures.kind:
        jd = figures_of(finding, JointDynamicsFigures)
        jdd = details_of(finding, JointDynamicsDetails)
        out += trajectory_plots(jdd.joints, None)  # the floor is per joint: no one band
        ridges = dict(jd.delay_ridge)
        for n, why in jd.not_identifiable.items():
            if why.get("delay") and n not in ridges:
                ridges[n] = why["delay"]
        out += delay_plots(jd.delay_s, jd.delay_interval_s, ridges)
        out += profile_plots(jdd.delay_profile)
    return [p for p in out if p]
