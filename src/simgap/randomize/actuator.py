"""The actuator branch's randomisation entries: the servo delay, lag and gains it identified."""

from __future__ import annotations

import math

from simgap.figures.actuator import JointDynamicsFigures, LadderFigures
from simgap.finding import Diagnosis
from simgap.randomize.draft import Draft, measured_finding
from simgap.values.randomization import Entry


def _median(vals: list[float]) -> float | None:
    """The median the ladder's docstring promises (the upper one of an even count)."""
    return sorted(vals)[len(vals) // 2] if vals else None


def _actuator_values(diag: Diagnosis) -> dict[str, float]:
    """Median over joints of each actuator figure a randomisation pins, by the names the
    fits use (``delay_s``, the rung's ``lag_s``, ``kp``...): the ladder's selected rung per
    joint (its delay and parameters), or the joint dynamics' identified parameters and the
    servo's share of each joint's delay (the whole delay where the loop was not measured)."""
    vals: dict[str, list[float]] = {}

    def add(name: str, v: float | None) -> None:
        if v is not None and math.isfinite(v):
            vals.setdefault(name, []).append(float(v))

    ladder = measured_finding(diag, "actuator", LadderFigures.kind)
    if ladder is not None:
        for j in ladder.typed(LadderFigures).joints.values():
            add("delay_s", j.delay.total_s if j.delay is not None else None)
            for k, v in j.params.items():
                add(k, v)
    dyn = measured_finding(diag, "actuator", JointDynamicsFigures.kind)
    if dyn is not None:
        fig = dyn.typed(JointDynamicsFigures)
        account = fig.delay_account
        for name, d in fig.delay_s.items():
            dl = account.delays.get(name) if account is not None else None
            add("delay_s", dl.servo_s if dl is not None and math.isfinite(dl.servo_s) else d)
        for per in fig.params.values():
            for k, v in per.items():
                add(k, v)
    return {k: v for k, v in ((k, _median(v)) for k, v in vals.items()) if v is not None}


def actuator_entries(draft: Draft) -> list[Entry]:
    """The actuator branch's entries: the servo delay, lag and gains its fits identified
    (the median over joints), pinned."""
    out: list[Entry] = []
    fig = _actuator_values(draft.diagnosis)
    for name, keys in (
        ("servo_delay_s", ("delay_s",)),
        ("servo_lag_time_constant_s", ("lag_time_constant_s", "time_constant_s", "lag_s", "tau_s")),
        ("kp_scale", ("kp_scale", "gain_scale")),
        ("kp", ("kp", "stiffness")),
        ("kv", ("kv",)),  # never the joint's passive damping: not the PD gain
    ):
        v = next((fig[k] for k in keys if k in fig), None)
        if v is not None:
            out.append(
                Entry(
                    name,
                    "pinned",
                    "fitted",
                    value=v,
                    target=".*",
                    note="identified from logged joint data: pinned",
                )
            )
    return out
