"""What a selftest plants: the families the rig's evidence can see, and the trials drawn.

A trial is one synthetic recording of the rig: its own model with faults planted, driven
by its own recorded commands. Faulty trials draw, per family of ``FAMILIES``, whether it is
planted (probability one half, at least one family per trial) and on which joints (each
eligible joint with probability one half, at least one); a planted multiplier is
log-uniform in ``RANGES`` and at least ``MIN_CHANGE`` away from 1, a planted delay one per
arm, uniform in ``DELAY_RANGE_S``. Joints left out keep their nominal value: they are the
controls that tell a parameter mapped to the wrong joint. The null trial plants nothing
(the nominal model's own recording). Deterministic from the seed.

Families that the rig's evidence could show but that a selftest does not synthesise yet
(contact pair coefficients from push logs, camera gain and pose from frames, joint zero
offsets from static object poses) are stated with the reason (``not_planted``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.selftest.sizes import DEFAULT_TRIALS, THOROUGH_TRIALS  # noqa: F401 (re-exported)

FAMILIES: tuple[str, ...] = ("delay", "kp", "damping", "frictionloss", "armature", "force_limit")
"""The planted families, in table order: the command transport delay, the position
actuator's gain and torque limit (MJCF ``forcerange``), the joint's damping, frictionloss
and armature."""

RANGES: Mapping[str, tuple[float, float]] = {
    "kp": (0.4, 1.6),
    "damping": (0.5, 2.0),
    "frictionloss": (1.0, 5.0),
    "armature": (1.0, 2.5),
    "force_limit": (0.5, 0.9),
}
"""Multiplier ranges: issue 40's for kp, damping, frictionloss, armature (the ranges the
identification was measured on); a torque limit planted lower only (a higher one changes
nothing until the servo saturates)."""

DELAY_RANGE_S: tuple[float, float] = (0.015, 0.080)
"""A planted delay [s]: from about half a 30 fps frame to issue 40's 80 ms."""

MIN_CHANGE = 1.1
"""A planted multiplier differs from 1 by at least this factor (either way)."""


@dataclass(frozen=True)
class Trial:
    """One synthetic recording to diagnose.

    Attributes:
        name: the trial's name (``trial-01`` ...; ``null`` for the null trial), its folder.
        seed: the seed of its draw and of anything random in its recording.
        faults: the planted faults in ``simgap.demo.faults.resolve_faults``'s dict form:
            ``{kind: {joint: multiplier}, "delay_s": s}``; empty for the null trial.
    """

    name: str
    seed: int
    faults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def null(self) -> bool:
        """True for the trial that plants nothing."""
        return not self.faults

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "name": self.name,
            "seed": self.seed,
            "null": self.null,
            "faults": {
                k: (dict(v) if isinstance(v, Mapping) else v) for k, v in self.faults.items()
            },
        }


@dataclass(frozen=True)
class Plan:
    """Every trial of one selftest and what it plants.

    Attributes:
        trials: the null trial first, then the faulty ones.
        families: the families planted, ``FAMILIES`` order.
        eligible: family -> the joints it may be planted on.
        not_planted: family -> why the selftest does not plant it on this rig.
        seed: the selftest's seed.
    """

    trials: tuple[Trial, ...]
    families: tuple[str, ...]
    eligible: Mapping[str, tuple[str, ...]]
    not_planted: Mapping[str, str]
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "seed": self.seed,
            "families": list(self.families),
            "eligible": {k: list(v) for k, v in self.eligible.items()},
            "not_planted": dict(self.not_planted),
            "trials": [t.to_dict() for t in self.trials],
        }


def eligible_joints(nominal: Mapping[str, Mapping[str, float]]) -> dict[str, tuple[str, ...]]:
    """Family -> joints it can be planted on: every joint, except that ``force_limit``
    needs an actuator with a force range (a finite nominal limit) and a multiplier needs a
    nominal value above zero to scale."""
    out: dict[str, tuple[str, ...]] = {"delay": tuple(nominal)}
    for fam in FAMILIES[1:]:
        out[fam] = tuple(j for j, p in nominal.items() if math.isfinite(p[fam]) and p[fam] > 0)
    return out


def not_planted(evidence: Any, eligible: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Family -> why it is not planted on this rig (``evidence``: the rig's ``Evidence``)."""
    out = {
        f: "no joint of the model has a nonzero value to scale"
        if f != "force_limit"
        else "no actuator of the model has a force range (forcerange) to lower"
        for f in FAMILIES
        if not eligible.get(f)
    }
    out["joint_zero_offsets"] = (
        "seen by the body branch from static object poses or camera frames, which a "
        "selftest does not synthesise yet"
        if evidence.static_object_poses is not None
        else "the rig's evidence cannot see them (no evidence.static_object_poses)"
    )
    out["contact"] = (
        "pair coefficients: synthesising push logs is not built yet"
        if evidence.push_logs
        else "the rig has no push logs (evidence.push_logs)"
    )
    out["camera"] = (
        "gain and pose: synthesising camera frames is not built yet"
        if evidence.frames is not None
        else "the rig has no camera frames (evidence.frames)"
    )
    return out


def _multiplier(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Log-uniform in [lo, hi], at least ``MIN_CHANGE`` from 1 (redrawn until it is)."""
    while True:
        f = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
        if abs(math.log(f)) >= math.log(MIN_CHANGE):
            return f


def _subset(rng: np.random.Generator, joints: Sequence[str]) -> list[str]:
    picked = [j for j in joints if rng.random() < 0.5]
    return picked or [joints[int(rng.integers(len(joints)))]]


def draw_trial(
    seed: int, index: int, families: Sequence[str], eligible: Mapping[str, Sequence[str]]
) -> Trial:
    """Faulty trial ``index`` (1-based) of a selftest seeded ``seed`` (module docstring)."""
    rng = np.random.default_rng([seed, 34, index])
    chosen = [f for f in families if rng.random() < 0.5]
    if not chosen:
        chosen = [families[int(rng.integers(len(families)))]]
    faults: dict[str, Any] = {}
    for fam in families:  # a fixed order of draws: the same seed gives the same trial
        if fam not in chosen:
            continue
        if fam == "delay":
            faults["delay_s"] = float(rng.uniform(*DELAY_RANGE_S))
        else:
            lo, hi = RANGES[fam]
            faults[fam] = {j: _multiplier(rng, lo, hi) for j in _subset(rng, eligible[fam])}
    return Trial(name=f"trial-{index:02d}", seed=int(seed) * 1000 + index, faults=faults)


def plan_trials(
    nominal: Mapping[str, Mapping[str, float]], evidence: Any, *, trials: int, seed: int
) -> Plan:
    """The null trial and ``trials`` faulty ones for a rig.

    Args:
        nominal: joint -> {kind: nominal value} of the rig's model
            (``simgap.demo.nominal.nominal_params``), the rig's joint order.
        evidence: the rig's ``Evidence`` (what it recorded decides what is not planted).
        trials: faulty trials (0: the null trial alone).
        seed: seed of every draw.

    Raises:
        InputError: ``trials`` is negative, or no family can be planted.
    """
    if trials < 0:
        raise InputError(field="--trials", expected="0 or more faulty trials", got=trials)
    eligible = eligible_joints(nominal)
    families = tuple(f for f in FAMILIES if eligible.get(f))
    if trials and not families:
        raise InputError(
            field="model",
            expected="joints with position actuators to plant faults on",
            got="none",
            fix="check the rig's joints and model",
        )
    drawn = [draw_trial(seed, i, families, eligible) for i in range(1, trials + 1)]
    return Plan(
        trials=(Trial(name="null", seed=int(seed) * 1000), *drawn),
        families=families,
        eligible=eligible,
        not_planted=not_planted(evidence, eligible),
        seed=int(seed),
    )
