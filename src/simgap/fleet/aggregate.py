"""Aggregate a fleet: per identified parameter and joint, the unit-to-unit spread and the
arms that lie off it; per branch, the verdict of every arm.

Positive parameters (gains, delays, damping) are aggregated on a log scale, so the spread
``tau`` is relative (0.1 is about 10 % from one unit to the next) and "40 % below the fleet"
means the same thing for a gain of 2 and one of 200. A parameter that any arm fitted at or
below zero is aggregated on its own scale.

Outliers: each arm is compared with the fleet of the *other* arms (leave one out, so a
faulty arm cannot widen the band it is tested against). It is flagged when it lies outside
their spread by more than its own uncertainty allows: ``|y - mu| > z sqrt(tau^2 + se(mu)^2
+ s^2)`` (``s`` its own fit's standard error), with ``z`` the Bonferroni quantile over every
(arm, parameter) test in the fleet and ``tau`` the upper end of the interval of the spread
pooled over joints (the same servo model on every joint: 8 arms x 5 joints determine one
spread far better than 8 arms one joint's). The fleet's spread is then refit on the arms
not flagged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from simgap.fleet.spread import (
    Z95,
    Spread,
    pooled_q_profile,
    pooled_tau2,
    spread,
    variances,
)
from simgap.fleet.values import UNITS, ArmValue, Key, arm_values, verdicts

MIN_ARMS = 3
"""Fewest identified arms a spread is estimated from (k - 2 >= 1 degrees of freedom)."""


@dataclass(frozen=True)
class Outlier:
    """An arm whose value lies outside the rest of the fleet by more than its own interval.

    Attributes:
        arm: the arm.
        branch, param, joint: what is off.
        value: the arm's value (the parameter's unit).
        fleet_centre: the other arms' centre (same unit).
        deviation: (value - centre) / centre, e.g. -0.4 for 40 % below (log-scale params);
            for linear-scale params, (value - centre) in the unit.
        sentence: e.g. "arm_7's elbow_flex kp is 40% below the fleet ...: check that servo".
    """

    arm: str
    branch: str
    param: str
    joint: str
    value: float
    fleet_centre: float
    deviation: float
    sentence: str


@dataclass(frozen=True)
class ParamSpread:
    """One (branch, parameter, joint) across the fleet.

    Attributes:
        branch, param, joint: what was identified; ``unit`` is its unit.
        scale: ``log`` (tau and band relative) or ``linear``.
        arms: every arm's value, in fleet order.
        n: arms the spread was fitted on (identified and not flagged).
        median: median over every identified arm [unit].
        centre: the random-effects mean of the unflagged arms [unit] (geometric on log).
        centre_interval: its 95 % interval [unit].
        tau: unit-to-unit standard deviation on ``scale`` (log: relative).
        tau_interval: 95 % Q-profile interval of ``tau``.
        i2: share of the variation between arms that is unit-to-unit, in [0, 1].
        tau_pooled: the one spread of this parameter pooled over every joint (unflagged
            arms; stratified DerSimonian-Laird), far better determined than one joint's.
        tau_pooled_interval: its 95 % Q-profile interval (the groups' Q summed).
        band_tau: the spread ``band`` uses: ``tau_pooled``, unless this joint's own 95 %
            interval of ``tau`` lies wholly above it (then ``tau``). Never narrower than
            the pooled spread: a joint whose few units happen to agree is not evidence
            that the next unit will, and a range too narrow is the costly mistake.
        band: 95 % prediction interval for a new unit [unit]:
            ``mu +- t(k - 2) sqrt(band_tau^2 + se(mu)^2)``.
        cover: the range that holds 95 % of units with about 95 % confidence (a tolerance
            range: ``mu +- 1.96 (tau_upper + se(mu))``, ``tau_upper`` the upper end of the
            interval of ``band_tau``): what a randomisation range must span [unit].
        flag_band: the threshold an arm of negligible own uncertainty is flagged beyond
            [unit] (an arm's own standard error widens it for that arm).
        outliers: the arms flagged on this parameter.
        note: why no spread was estimated, when ``n`` < ``MIN_ARMS``.
    """

    branch: str
    param: str
    joint: str
    unit: str
    scale: str
    arms: tuple[ArmValue, ...]
    n: int
    median: float | None
    centre: float | None = None
    centre_interval: tuple[float, float] | None = None
    tau: float | None = None
    tau_interval: tuple[float, float] | None = None
    i2: float | None = None
    tau_pooled: float | None = None
    tau_pooled_interval: tuple[float, float] | None = None
    band_tau: float | None = None
    band: tuple[float, float] | None = None
    cover: tuple[float, float] | None = None
    flag_band: tuple[float, float] | None = None
    outliers: tuple[Outlier, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class FleetSummary:
    """What a fleet of arms showed.

    Attributes:
        arms: arm names in fleet order.
        branches: every branch any arm reported, in first-seen order.
        verdicts: arm -> branch -> verdict (``not_run`` where an arm has no such finding).
        params: one spread per (branch, parameter, joint).
        outliers: every flagged (arm, parameter), all parameters together.
        z_flag: the Bonferroni quantile used for flags.
    """

    arms: tuple[str, ...]
    branches: tuple[str, ...]
    verdicts: Mapping[str, Mapping[str, str]]
    params: tuple[ParamSpread, ...]
    outliers: tuple[Outlier, ...] = field(default=())
    z_flag: float = Z95

    def param(self, branch: str, param: str, joint: str) -> ParamSpread:
        """One parameter's spread; a miss lists the valid keys."""
        for p in self.params:
            if (p.branch, p.param, p.joint) == (branch, param, joint):
                return p
        from simgap.errors import NameNotFoundError

        raise NameNotFoundError(
            "fleet parameter",
            f"{branch}.{param}.{joint}",
            [f"{p.branch}.{p.param}.{p.joint}" for p in self.params],
        )

    def flagged_arms(self) -> list[str]:
        """Arms flagged on any parameter, in fleet order."""
        bad = {o.arm for o in self.outliers}
        return [a for a in self.arms if a in bad]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (infinite ends become None)."""
        return _clean(asdict(self))


def _clean(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, Mapping):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    return v


def _transform(scale: str, v: float) -> float:
    return math.log(v) if scale == "log" else v


def _back(scale: str, v: float) -> float:
    if scale != "log":
        return v
    return math.exp(v) if v < 700 else float("inf")


def _scaled(a: ArmValue, scale: str) -> tuple[float, float]:
    """(y, se) of an arm on ``scale``; a log interval with lo <= 0 uses its upper half."""
    assert a.value is not None and a.lo is not None and a.hi is not None
    y = _transform(scale, a.value)
    if scale == "log" and a.lo <= 0:
        return y, (math.log(a.hi) - y) / Z95
    return y, (_transform(scale, a.hi) - _transform(scale, a.lo)) / (2 * Z95)


def _band(s: Spread, z: float, tau: float | None = None) -> tuple[float, float]:
    t = s.tau if tau is None else tau
    half = z * math.sqrt(t**2 + s.mu_se**2)
    return s.mu - half, s.mu + half


def _scale_of(ok: Sequence[ArmValue]) -> str:
    return (
        "log"
        if ok and all(a.value is not None and a.value > 0 and (a.hi or 0) > 0 for a in ok)
        else "linear"
    )


def _deleted_tau(i: int, joint: str, rows: Mapping[str, np.ndarray], own: Spread) -> float:
    """The spread arm ``i`` is tested against: the upper end of the 95 % interval of the one
    tau of this parameter pooled over every joint (arm i left out at ``joint``), or this
    joint's own tau without arm i where that is larger beyond doubt. The upper end, because
    a spread underestimated by chance would flag healthy arms."""
    groups = []
    for j, ys in rows.items():
        if j == joint:
            ys = np.delete(ys, i, axis=0)
        groups.append((ys[:, 0], variances(ys[:, 0], ys[:, 1])))
    pooled = math.sqrt(pooled_tau2(groups))
    upper = math.sqrt(pooled_q_profile(groups, lower=False)[1])
    return max(own.tau, upper) if own.tau_interval[0] > pooled else upper


def _sentence(
    a: ArmValue,
    branch: str,
    param: str,
    joint: str,
    unit: str,
    centre: float,
    dev: float,
    scale: str,
) -> str:
    assert a.value is not None
    who = a.arm if a.arm.lower().startswith("arm") else f"arm {a.arm}"
    what = f"{who}'s {joint} {param}"
    if scale == "log":
        how = f"{abs(dev) * 100:.0f}% {'below' if dev < 0 else 'above'} the fleet"
    else:
        how = f"{abs(dev):.3g} {unit} {'below' if dev < 0 else 'above'} the fleet"
    check = "check that servo" if branch == "actuator" else "check that arm's controller gains"
    return (
        f"{what} is {how} ({a.value:.4g} {unit}, 95% [{a.lo:.4g}, {a.hi:.4g}]; fleet "
        f"{centre:.4g} {unit}): {check}"
    )


def _usable(row: Sequence[ArmValue]) -> list[ArmValue]:
    return [a for a in row if a.status == "ok"]


def _flags(
    branch: str,
    param: str,
    joints: Mapping[str, list[ArmValue]],
    z_flag: float,
) -> dict[str, list[Outlier]]:
    """joint -> the arms flagged there (each against the rest of the fleet)."""
    unit = UNITS.get(param, "")
    usable = {j: _usable(row) for j, row in joints.items()}
    rows = {
        j: np.array([_scaled(a, _scale_of(ok)) for a in ok])
        for j, ok in usable.items()
        if len(ok) > MIN_ARMS
    }
    out: dict[str, list[Outlier]] = {}
    for joint, ys in rows.items():
        ok = usable[joint]
        scale = _scale_of(ok)
        for i, a in enumerate(ok):
            rest = np.delete(ys, i, axis=0)
            s = spread(rest[:, 0], rest[:, 1])
            tau = _deleted_tau(i, joint, rows, s)
            score = (ys[i, 0] - s.mu) / math.sqrt(tau**2 + s.mu_se**2 + ys[i, 1] ** 2)
            if abs(score) > z_flag:
                assert a.value is not None
                centre = _back(scale, s.mu)
                dev = (a.value / centre - 1.0) if scale == "log" else (a.value - centre)
                out.setdefault(joint, []).append(
                    Outlier(
                        a.arm,
                        branch,
                        param,
                        joint,
                        float(a.value),
                        centre,
                        float(dev),
                        _sentence(a, branch, param, joint, unit, centre, dev, scale),
                    )
                )
    return out


def _kept(row: Sequence[ArmValue], outliers: Sequence[Outlier]) -> np.ndarray:
    """(y, se) of the usable, unflagged arms of one row, shape (n, 2)."""
    ok = _usable(row)
    flagged = {o.arm for o in outliers}
    scale = _scale_of(ok)
    return np.array([_scaled(a, scale) for a in ok if a.arm not in flagged]).reshape(-1, 2)


def _one(
    key: Key,
    arms: list[ArmValue],
    outliers: list[Outlier],
    z_flag: float,
    pooled: tuple[float, tuple[float, float]],
) -> ParamSpread:
    branch, param, joint = key
    unit = UNITS.get(param, "")
    ok = _usable(arms)
    scale = _scale_of(ok)
    median = float(np.median([a.value for a in ok])) if ok else None
    if len(ok) < MIN_ARMS:
        return ParamSpread(
            branch,
            param,
            joint,
            unit,
            scale,
            tuple(arms),
            len(ok),
            median,
            note=f"{len(ok)} arm(s) identified it; a spread needs at least {MIN_ARMS}",
        )
    tau_pooled = pooled[0]
    ys = _kept(arms, outliers)
    s = spread(ys[:, 0], ys[:, 1])
    ci = (s.mu - Z95 * s.mu_se, s.mu + Z95 * s.mu_se)
    own = s.tau_interval[0] > tau_pooled
    band_tau = s.tau if own else tau_pooled
    tau_up = s.tau_interval[1] if own else pooled[1][1]
    half = Z95 * tau_up + Z95 * s.mu_se
    cover = (s.mu - half, s.mu + half)
    flag = _band(s, z_flag, max(s.tau, pooled[1][1]) if own else pooled[1][1])
    t = float(stats.t.ppf(0.975, len(ys) - 2)) if len(ys) > 2 else math.inf
    band = _band(s, t, band_tau)
    return ParamSpread(
        branch,
        param,
        joint,
        unit,
        scale,
        tuple(arms),
        len(ys),
        median,
        centre=_back(scale, s.mu),
        centre_interval=(_back(scale, ci[0]), _back(scale, ci[1])),
        tau=s.tau,
        tau_interval=s.tau_interval,
        i2=s.i2,
        tau_pooled=tau_pooled,
        tau_pooled_interval=pooled[1],
        band_tau=band_tau,
        band=(_back(scale, band[0]), _back(scale, band[1])),
        cover=(_back(scale, cover[0]), _back(scale, cover[1])),
        flag_band=(_back(scale, flag[0]), _back(scale, flag[1])),
        outliers=tuple(outliers),
    )


def aggregate(arms: Sequence[tuple[str, Mapping[str, Any]]]) -> FleetSummary:
    """The fleet summary of (arm name, parsed findings.json) pairs."""
    names = tuple(n for n, _ in arms)
    if len(set(names)) != len(names):
        raise ValueError(f"arm names must be unique; got {names}")
    values = arm_values(arms)
    n_tests = max(1, sum(sum(a.status == "ok" for a in row) for row in values.values()))
    z_flag = float(stats.norm.ppf(1.0 - 0.025 / n_tests))
    groups: dict[tuple[str, str], dict[str, list[ArmValue]]] = {}
    for (branch, param, joint), row in values.items():
        groups.setdefault((branch, param), {})[joint] = row
    flags = {bp: _flags(bp[0], bp[1], joints, z_flag) for bp, joints in groups.items()}
    pooled = {}
    for (branch, param), joints in groups.items():
        parts = [_kept(row, flags[(branch, param)].get(j, [])) for j, row in joints.items()]
        g = [(y[:, 0], variances(y[:, 0], y[:, 1])) for y in parts if len(y) >= 2]
        lo2, hi2 = pooled_q_profile(g)
        pooled[(branch, param)] = (math.sqrt(pooled_tau2(g)), (math.sqrt(lo2), math.sqrt(hi2)))
    params = tuple(
        _one(k, row, flags[(k[0], k[1])].get(k[2], []), z_flag, pooled[(k[0], k[1])])
        for k, row in values.items()
    )
    per_arm = {n: verdicts(f) for n, f in arms}
    branches: list[str] = []
    for v in per_arm.values():
        branches.extend(b for b in v if b not in branches)
    matrix = {n: {b: per_arm[n].get(b, "not_run") for b in branches} for n in names}
    outs = tuple(o for p in params for o in p.outliers)
    return FleetSummary(
        arms=names,
        branches=tuple(branches),
        verdicts=matrix,
        params=params,
        outliers=outs,
        z_flag=z_flag,
    )
