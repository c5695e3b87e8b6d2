"""Report plots of the actuator branch, most telling first: real against simulated joint
trajectories before and after the fit (when the finding carries them), the held-out error of
every joint for the ideal actuator and the selected rung against the noise floor, the
identified delay per joint with its 95% interval (and the delay profile when identification
wrote one), then each joint's ladder."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from simgap.report import svg


def _f(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def trajectory_plots(joints: Mapping[str, Any], floor: float | None) -> list[str]:
    """Per joint: real, simulated before and after the fit; and the residual against the
    noise floor. Reads ``details.joints[j].traces`` = {t_s, real_rad, before_rad, after_rad}."""
    out = []
    for name, j in joints.items():
        tr = j.get("traces") if isinstance(j, Mapping) else None
        if not isinstance(tr, Mapping) or not tr.get("t_s") or not tr.get("real_rad"):
            continue
        series = {"real": tr["real_rad"]}
        if tr.get("before_rad"):
            series["sim, nominal"] = tr["before_rad"]
        if tr.get("after_rad"):
            series[f"sim, fitted ({j.get('selected', 'fit')})"] = tr["after_rad"]
        out.append(svg.lines(tr["t_s"], series, xlabel="time [s]", ylabel="angle [rad]",
                             title=f"{name}: real vs simulated trajectory"))
        if tr.get("after_rad"):
            res = [_f(a) - _f(b) for a, b in zip(tr["real_rad"], tr["after_rad"], strict=False)]
            out.append(svg.lines(tr["t_s"][:len(res)], {"real - fitted": res},
                                 xlabel="time [s]", ylabel="residual [rad]",
                                 title=f"{name}: residual after the fit",
                                 band=(floor, f"noise floor +-{svg.fmt(floor)} rad")
                                 if floor else None))
    return out


def overview(joints: Mapping[str, Any], floor: float | None) -> str:
    """Held-out error per joint: the ideal actuator and the selected rung, against the floor."""
    names, ideal, chosen = [], [], []
    for name, j in joints.items():
        rungs = {str(r.get("model")): r for r in j.get("rungs") or []}
        if not rungs:
            continue
        names.append(name)
        ideal.append(_f((rungs.get("ideal") or {}).get("validation_mae_rad")))
        chosen.append(_f((rungs.get(str(j.get("selected"))) or {}).get("validation_mae_rad")))
    return svg.bars(names, {"ideal actuator": ideal, "selected rung": chosen},
                    xlabel="joint", ylabel="held-out MAE [rad]",
                    title="Held-out error per joint, ideal vs fitted actuator",
                    hline=(floor, f"noise floor {svg.fmt(floor)} rad") if floor else None)


NO_INTERVAL = ("a delay without an interval (the best fit of the joint's selected rung: "
               "the actuator ladder gives its delays none)")
RIDGE = ("a delay on a ridge, not identified on its own (hover the point for what it trades "
         "off with; its bar is the 95% interval along the ridge)")


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def delay_plots(fig: Mapping[str, Any], joints: Mapping[str, Any]) -> list[str]:
    """The identified delay per joint with its 95% interval; the delay profile if written.

    A delay is drawn hollow, and the caption says why, when it has no interval (the actuator
    ladder fits a delay per rung and gives none: ``details.joints[j].delay_s`` only) or lies
    on a ridge (``figures.delay_ridge`` or ``figures.not_identifiable[j].delay``: the joint
    dynamics found the delay trading off with the servo's lag), so the plot never shows a
    bare hollow point beside a text that states the delay."""
    out = []
    delays = fig.get("delay_s")
    if not isinstance(delays, Mapping):
        delays = {n: j.get("delay_s") for n, j in joints.items() if isinstance(j, Mapping)}
    iv, ridges = _mapping(fig.get("delay_interval_s")), _mapping(fig.get("delay_ridge"))
    unid = _mapping(fig.get("not_identifiable"))
    names = [n for n, v in delays.items() if math.isfinite(_f(v))]
    if names:
        bounds: list[tuple[float, float] | None] = []
        notes: list[str | None] = []
        causes: list[str] = []
        for n in names:
            j = _mapping(joints.get(n))
            b = iv.get(n, j.get("delay_interval_s"))
            ok = isinstance(b, Sequence) and len(b) == 2 and all(math.isfinite(_f(x)) for x in b)
            bounds.append((_f(b[0]) * 1e3, _f(b[1]) * 1e3) if ok else None)
            ridge = ridges.get(n) or _mapping(unid.get(n)).get("delay")
            if not ok:
                sel = j.get("selected")
                notes.append(f"no interval: the best fit of the {sel} rung" if sel
                             else "no interval")
                causes.append(NO_INTERVAL if not iv else "a delay without an interval")
            elif ridge:
                notes.append(f"on a ridge: {ridge}")
                causes.append(RIDGE)
            else:
                notes.append(None)
        out.append(svg.intervals(names, [_f(delays[n]) * 1e3 for n in names], bounds,
                                 xlabel="joint", ylabel="delay [ms]",
                                 title="Identified command-to-motion delay per joint",
                                 notes=notes, hollow="; ".join(dict.fromkeys(causes))))
    prof = fig.get("delay_profile")
    if isinstance(prof, Mapping):
        for name, p in prof.items():
            if not isinstance(p, Mapping):
                continue
            x = p.get("delay_s") or p.get("delays_s")
            y = p.get("loss") or p.get("mae_rad") or p.get("cost")
            if isinstance(x, Sequence) and isinstance(y, Sequence) and len(x) == len(y) > 1:
                out.append(svg.lines([_f(v) * 1e3 for v in x], {"fit error": y},
                                     xlabel="assumed delay [ms]", ylabel="fit error [rad]",
                                     title=f"{name}: delay profile"))
    return out


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets (inline SVG) for one actuator finding (its ``to_dict`` form)."""
    details = finding.get("details") or {}
    fig = finding.get("figures") or {}
    joints = details.get("joints") or {}
    floor_v = _f(details.get("noise_floor_rad", fig.get("noise_floor_rad")))
    floor = floor_v if math.isfinite(floor_v) and floor_v > 0 else None
    out = trajectory_plots(joints, floor)
    out.append(overview(joints, floor))
    out += delay_plots(fig, joints)
    for name, j in joints.items():
        rungs = j.get("rungs") or []
        if not rungs:
            continue
        labels = [str(r["model"]) for r in rungs]
        out.append(svg.bars(labels, {"train": [_f(r.get("train_mae_rad")) for r in rungs],
                                     "held-out": [_f(r.get("validation_mae_rad"))
                                                  for r in rungs]},
                            xlabel="actuator model (ladder rung)", ylabel="MAE [rad]",
                            hline=(floor, f"noise floor {svg.fmt(floor)} rad") if floor
                            else None,
                            title=f"{name}: actuator ladder (selected {j.get('selected')})"))
        sel = next((r for r in rungs if r["model"] == j.get("selected")), None)
        per = (sel or {}).get("validation_per_log_rad") or []
        if len(per) > 1:
            out.append(svg.bars([f"log {i + 1}" for i in range(len(per))],
                                {str(j.get("selected")): [_f(v) for v in per]},
                                xlabel="held-out trajectory", ylabel="held-out MAE [rad]",
                                title=f"{name}: held-out error per trajectory"))
    return [p for p in out if p]
