"""Planted joint faults of a bench: what they are, how they are drawn, what the truth is.

A fault is a multiplier on one nominal joint parameter of the rig's own MJCF (``kp``, ``kv``
and ``force_limit``, the symmetric torque limit, of the position actuator; ``damping``,
``frictionloss``, ``armature`` of its joint) plus a command transport delay [s].
``ISSUE_RANGES`` are issue 12's ranges (the force limit is planted only where a caller names
it, so the random draws of earlier benches are unchanged); multipliers are drawn
log-uniformly inside them, per joint, and the delay uniformly, once per arm.

``faults`` forms accepted by ``resolve_faults`` (and ``make_so101_bench``):

- ``None``: the healthy case, every multiplier 1 and no delay;
- ``"random"``: every parameter drawn from ``ISSUE_RANGES`` (delay from ``DELAY_RANGE_S``)
  with the bench's seed;
- a dict of explicit values, the form a caller uses to draw arms from a known distribution of
  its own (``draw_faults(seed, ranges=...)`` returns one): keys ``kp kv damping frictionloss
  armature force_limit`` (multipliers) and ``delay_s`` [s]; each value a number (every joint) or a
  ``{joint: value}`` dict (joints left out stay nominal). Keys left out stay nominal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.errors import InputError, NameNotFoundError

PARAMS: tuple[str, ...] = ("kp", "kv", "damping", "frictionloss", "armature", "force_limit")
ISSUE_RANGES: Mapping[str, tuple[float, float]] = {
    "kp": (0.4, 1.5),
    "kv": (0.5, 3.0),
    "damping": (0.5, 3.0),
    "frictionloss": (0.5, 4.0),
    "armature": (0.5, 2.0),
}
DELAY_RANGE_S: tuple[float, float] = (0.0, 0.080)
FAULT_KEYS: tuple[str, ...] = PARAMS + ("delay_s",)


@dataclass(frozen=True)
class JointTruth:
    """The true parameters of one joint on a bench.

    Attributes:
        name: MJCF joint (and actuator) name.
        nominal: ``(parameter, value)`` of the rig's MJCF, for every name in ``PARAMS``
            [kp N m/rad, kv N m s/rad, damping N m s/rad, frictionloss N m, armature kg m^2,
            force_limit N m].
        multiplier: ``(parameter, factor)``: true value = nominal x factor (1 = no fault).
        delay_s: command transport delay of this joint [s] (0 = none).
    """

    name: str
    nominal: tuple[tuple[str, float], ...]
    multiplier: tuple[tuple[str, float], ...]
    delay_s: float

    def value(self, param: str) -> float:
        """The true value of ``param`` (nominal x multiplier), in the MJCF's units."""
        return dict(self.nominal)[param] * self.factor(param)

    def factor(self, param: str) -> float:
        """The planted multiplier of ``param``; a miss lists the parameters."""
        mult = dict(self.multiplier)
        if param not in mult:
            raise NameNotFoundError("joint parameter", param, PARAMS)
        return mult[param]

    @property
    def faulty(self) -> bool:
        """True when any multiplier differs from 1 or the delay is not zero."""
        return self.delay_s != 0.0 or any(f != 1.0 for _, f in self.multiplier)

    def to_dict(self) -> dict[str, Any]:
        """JSON form: nominal, multiplier, value per parameter (None where the model has
        no such limit: an actuator without a force range), and the delay."""

        def finite(v: float) -> float | None:
            return v if np.isfinite(v) else None

        return {
            "nominal": {p: finite(v) for p, v in self.nominal},
            "multiplier": dict(self.multiplier),
            "value": {p: finite(self.value(p)) for p in PARAMS},
            "delay_s": self.delay_s,
        }


def draw_faults(
    seed: int | Sequence[int],
    joints: Sequence[str],
    *,
    ranges: Mapping[str, tuple[float, float]] = ISSUE_RANGES,
    delay_range_s: tuple[float, float] | None = DELAY_RANGE_S,
    per_joint_delay: bool = False,
) -> dict[str, Any]:
    """Draw explicit faults: per-joint multipliers log-uniform in ``ranges``, one delay.

    Args:
        seed: seed of the draw (``numpy.random.default_rng`` accepts a sequence too).
        joints: joint names, in model order.
        ranges: parameter -> (low, high) multiplier; parameters left out stay nominal.
        delay_range_s: (low, high) delay [s] drawn uniformly; None for no delay.
        per_joint_delay: draw one delay per joint instead of one per arm.

    Returns:
        The dict form of ``resolve_faults``: ``{param: {joint: factor}, "delay_s": ...}``.
    """
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for p in PARAMS:
        if p not in ranges:
            continue
        lo, hi = ranges[p]
        if not 0 < lo <= hi:
            raise InputError(field=f"ranges.{p}", expected="0 < low <= high", got=(lo, hi))
        out[p] = {j: float(np.exp(rng.uniform(np.log(lo), np.log(hi)))) for j in joints}
    if delay_range_s is not None:
        lo, hi = delay_range_s
        if not 0 <= lo <= hi:
            raise InputError(field="delay_range_s", expected="0 <= low <= high", got=(lo, hi))
        if per_joint_delay:
            out["delay_s"] = {j: float(rng.uniform(lo, hi)) for j in joints}
        else:
            out["delay_s"] = float(rng.uniform(lo, hi))
    return out


def _per_joint(key: str, value: Any, joints: Sequence[str], default: float) -> dict[str, float]:
    if isinstance(value, Mapping):
        for j in value:
            if j not in joints:
                raise NameNotFoundError("joint", str(j), joints, field=f"faults.{key}")
        vals = {j: float(value.get(j, default)) for j in joints}
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        vals = {j: float(value) for j in joints}
    else:
        raise InputError(
            field=f"faults.{key}", expected="a number or a {joint: number} dict", got=value
        )
    for j, v in vals.items():
        ok = v >= 0 if key == "delay_s" else v > 0
        if not (np.isfinite(v) and ok):
            raise InputError(
                field=f"faults.{key}.{j}",
                expected="a finite delay >= 0 s" if key == "delay_s" else "a finite multiplier > 0",
                got=v,
            )
    return vals


def resolve_faults(
    faults: None | str | Mapping[str, Any], seed: int, nominal: Mapping[str, Mapping[str, float]]
) -> tuple[JointTruth, ...]:
    """The per-joint truth of a bench from any accepted ``faults`` form (module docstring).

    Args:
        faults: None, ``"random"`` or an explicit dict.
        seed: the bench's seed (used by ``"random"`` only).
        nominal: joint -> {parameter: nominal value} read from the rig's MJCF, model order.
    """
    joints = list(nominal)
    if faults is None:
        spec: Mapping[str, Any] = {}
    elif isinstance(faults, str):
        if faults != "random":
            raise InputError(field="faults", expected="None, 'random' or a dict", got=faults)
        spec = draw_faults([seed, 12], joints)
    elif isinstance(faults, Mapping):
        spec = faults
    else:
        raise InputError(field="faults", expected="None, 'random' or a dict", got=faults)
    for key in spec:
        if key not in FAULT_KEYS:
            raise NameNotFoundError("fault", str(key), FAULT_KEYS, field="faults")
    mult = {
        p: _per_joint(p, spec[p], joints, 1.0) if p in spec else dict.fromkeys(joints, 1.0)
        for p in PARAMS
    }
    delay = (
        _per_joint("delay_s", spec["delay_s"], joints, 0.0)
        if "delay_s" in spec
        else dict.fromkeys(joints, 0.0)
    )
    return tuple(
        JointTruth(
            name=j,
            nominal=tuple((p, float(nominal[j][p])) for p in PARAMS),
            multiplier=tuple((p, mult[p][j]) for p in PARAMS),
            delay_s=delay[j],
        )
        for j in joints
    )
