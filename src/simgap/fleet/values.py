"""Per-arm identified values, read from each arm's ``findings.json``.

The actuator finding's ``figures`` carry ``delay_s {joint: s}``, ``delay_interval_s {joint:
[lo, hi]}``, ``params {joint: {kp|kv|damping|frictionloss|armature: value}}``,
``params_interval {joint: {name: [lo, hi]}}`` and ``not_identifiable {joint: {name:
reason}}`` (``delay`` there: the delay trades against the servo's lag, so only the
effective delay ``effective_delay_s`` with ``effective_delay_interval_s`` is identified);
the controller finding carries ``params``, ``params_interval`` and
``not_identifiable`` the same way. This module turns them into one ``ArmValue`` per arm,
branch, parameter and joint.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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


def _figures(findings: Mapping[str, Any], branch: str) -> Mapping[str, Any] | None:
    """The figures of the first finding of ``branch`` that carries identified values."""
    for f in findings.get("findings") or []:
        if not isinstance(f, Mapping) or f.get("branch") != branch:
            continue
        fig = f.get("figures") or {}
        if isinstance(fig, Mapping) and ("params" in fig or "delay_s" in fig):
            return fig
    return None


def _table(fig: Mapping[str, Any]) -> dict[tuple[str, str], tuple[Any, Any, Any]]:
    """(param, joint) -> (value, interval, not-identifiable reason) of one finding."""
    out: dict[tuple[str, str], tuple[Any, Any, Any]] = {}
    unid = fig.get("not_identifiable") or {}
    for key, iv_key in (("delay_s", "delay_interval_s"),
                        ("effective_delay_s", "effective_delay_interval_s")):
        delay = fig.get(key)
        if not isinstance(delay, Mapping):
            continue
        ivs = fig.get(iv_key) or {}
        for j, v in delay.items():
            ju = unid.get(j) if isinstance(unid, Mapping) else None
            # the identification names a delay traded against the servo's lag "delay"
            why = (ju.get(key) or (ju.get("delay") if key == "delay_s" else None)) \
                if isinstance(ju, Mapping) else None
            out[(key, str(j))] = (v, ivs.get(j) if isinstance(ivs, Mapping) else None, why)
    params = fig.get("params")
    ivs = fig.get("params_interval") or {}
    if isinstance(params, Mapping):
        for j, per in params.items():
            if not isinstance(per, Mapping):
                continue
            jiv = ivs.get(j) if isinstance(ivs, Mapping) else None
            jun = unid.get(j) if isinstance(unid, Mapping) else None
            for name, v in per.items():
                iv = jiv.get(name) if isinstance(jiv, Mapping) else None
                why = jun.get(name) if isinstance(jun, Mapping) else None
                out[(str(name), str(j))] = (v, iv, why)
    if isinstance(unid, Mapping):  # named unidentifiable without a value
        for j, per in unid.items():
            if isinstance(per, Mapping):
                for name, why in per.items():
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
        return ArmValue(arm, None, status="not_identifiable",
                        reason=f"no finite value (got {v!r})")
    pair = _pair(iv)
    if pair is None:
        return ArmValue(arm, value, status="no_interval",
                        reason=f"the fit gave no 95 % interval (got {iv!r})")
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
