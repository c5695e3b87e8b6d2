"""Per-arm identified values, read from each arm's ``findings.json``.

Read typed (``simgap.figures``): the actuator's joint identification
(:class:`~simgap.figures.joint_dynamics.JointDynamicsFigures`: a delay per joint with its interval,
the effective delay where the delay trades against the servo's lag, and each parameter
identified with its interval or declared not identifiable, ``delay`` there naming the ridge)
and the controller's gains (:class:`~simgap.figures.controller.GainsFigures` or SIMPLER's
:class:`~simgap.figures.controller.SimplerFigures`: ``params``, ``params_interval`` and
``not_identifiable`` the same way). The bench ladder's figures identify nothing with an
interval and are not read. This module turns them into one ``ArmValue`` per arm, branch,
parameter and joint.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from simgap.figures.controller import GainsFigures, SimplerFigures
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.figures.registry import figures_type, kind_of
from simgap.finding import figures_of

Status = Literal["ok", "not_identifiable", "no_interval", "absent"]

UNITS: dict[str, str] = {
    "delay_s": "s",
    "effective_delay_s": "s",
    "kp": "N m/rad",
    "kv": "N m s/rad",
    "damping": "N m s/rad",
    "frictionloss": "N m",
    "armature": "kg m^2",
}
"""The unit of each identified parameter (the actuator and controller fits' names)."""

BRANCHES = ("actuator", "controller")
"""The branches whose identified parameters are aggregated across a fleet."""


@dataclass(frozen=True)
class ArmValue:
    """One arm's identified value of one parameter on one joint.

    Attributes:
        arm: the arm's name (its rig's name, made unique within the fleet).
        value: the fitted value, in the parameter's unit (None unless identified).
        lo: lower end of the fit's own 95 % interval (same unit).
        hi: upper end of that interval.
        status: ``ok``; ``not_identifiable`` (the fit said why); ``no_interval`` (a value
            without an interval cannot be weighed); ``absent`` (this arm's findings do not
            have it).
        reason: why it is not used, in words and numbers, when status is not ``ok``.
    """

    arm: str
    value: float | None
    lo: float | None = None
    hi: float | None = None
    status: Status = "ok"
    reason: str = ""


Key = tuple[str, str, str]
"""(branch, parameter, joint)."""


def _num(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(float(v)):
        return float(v)
    return None


def _pair(v: Any) -> tuple[float, float] | None:
    if isinstance(v, Sequence) and not isinstance(v, str) and len(v) == 2:
        lo, hi = _num(v[0]), _num(v[1])
        if lo is not None and hi is not None and lo <= hi:
            return lo, hi
    return None


Identified = JointDynamicsFigures | GainsFigures | SimplerFigures
"""The figures that carry identified values with their intervals."""
IDENTIFIED: tuple[type[Identified], ...] = (JointDynamicsFigures, GainsFigures, SimplerFigures)


def _figures(findings: Mapping[str, Any], branch: str) -> Identified | None:
    """The figures of the first finding of ``branch`` that carries identified values."""
    for f in findings.get("findings") or []:
        if not isinstance(f, Mapping) or f.get("branch") != branch:
            continue
        rec = figures_type(branch, kind_of(f))
        for cls in IDENTIFIED:
            if rec is cls:
                return figures_of(f, cls)
    return None


def _table(fig: Identified) -> dict[tuple[str, str], tuple[Any, Any, Any]]:
    """(param, joint) -> (value, interval, not-identifiable reason) of one finding."""
    out: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
    unid = fig.not_identifiable
    delays: list[tuple[str, Mapping[str, float], Mapping[str, tuple[float, float]]]] = []
    if isinstance(fig, (JointDynamicsFigures, GainsFigures)):
        delays.append(("delay_s", fig.delay_s, fig.delay_interval_s))
    if isinstance(fig, JointDynamicsFigures):
        delays.append(("effective_delay_s", fig.effective_delay_s, fig.effective_delay_interval_s))
    for key, delay, ivs in delays:
        for j, v in delay.items():
            ju = unid.get(j, {})
            # the identification names a delay traded against the servo's lag "delay"
            why = ju.get(key) or (ju.get("delay") if key == "delay_s" else None)
            out[(key, str(j))] = (v, ivs.get(j), why)
    for j, per in fig.params.items():
        jiv, jun = fig.params_interval.get(j, {}), unid.get(j, {})
        for name, v in per.items():
            out[(str(name), str(j))] = (v, jiv.get(name), jun.get(name))
    for j, reasons in unid.items():  # named unidentifiable without a value
        for name, why in reasons.items():
            if name != "delay":
                out.setdefault((str(name), str(j)), (None, None, why))
    return out


def arm_values(arms: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[Key, list[ArmValue]]:
    """Every (branch, parameter, joint) any arm identified, with each arm's value.

    Args:
        arms: (arm name, parsed findings.json) pairs, in fleet order.

    Returns:
        key -> one ``ArmValue`` per arm, in ``arms`` order (``absent`` where an arm's
        findings lack the key). Keys are sorted by branch, parameter, joint.
    """
    tables: list[dict[Key, tuple[Any, Any, Any]]] = []
    for _, findings in arms:
        t: dict[Key, tuple[Any, Any, Any]] = {}
        for branch in BRANCHES:
            fig = _figures(findings, branch)
            if fig is not None:
                for (param, joint), row in _table(fig).items():
                    t[(branch, param, joint)] = row
        tables.append(t)
    keys = sorted({k for t in tables for k in t})
    out: dict[Key, list[ArmValue]] = {}
    for key in keys:
        out[key] = [_one(name, t.get(key)) for (name, _), t in zip(arms, tables, strict=True)]
    return out


def _one(arm: str, cell: tuple[Any, Any, Any] | None) -> ArmValue:
    if cell is None:
        return ArmValue(arm, None, status="absent", reason="not in this arm's findings")
    v, iv, why = cell
    if why:
        return ArmValue(arm, _num(v), status="not_identifiable", reason=str(why))
    value = _num(v)
    if value is None:
        return ArmValue(arm, None, status="not_identifiable", reason=f"no finite value (got {v!r})")
    pair = _pair(iv)
    if pair is None:
        return ArmValue(
            arm, value, status="no_interval", reason=f"the fit gave no 95 % interval (got {iv!r})"
        )
    lo, hi = min(pair[0], value), max(pair[1], value)
    return ArmValue(arm, value, lo, hi)


def verdicts(findings: Mapping[str, Any]) -> dict[str, str]:
    """branch -> verdict of one diagnosis; a branch with several findings shows the most
    severe (implicated > inconclusive > eliminated > not_measured)."""
    rank = {"implicated": 3, "inconclusive": 2, "eliminated": 1, "not_measured": 0}
    out: dict[str, str] = {}
    for f in findings.get("findings") or []:
        if not isinstance(f, Mapping):
            continue
        b, v = str(f.get("branch", "")), str(f.get("verdict", ""))
        if b and rank.get(v, -1) > rank.get(out.get(b, ""), -1):
            out[b] = v
    return out
