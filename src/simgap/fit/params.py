"""Parameters searched by the fits, in normalised coordinates.

Raw SI magnitudes differ by five orders on the SO-101 (kp ~ 1e3 N m/rad against armature
~ 3e-2 kg m^2) and stall Levenberg-Marquardt, whose regulariser is isotropic (reference
mujoco.md 5.2). Every fit here therefore searches normalised coordinates ``x``:

- ``multiplier``: value = nominal * x; x = 1 at the nominal, bounds = [lo, hi] / nominal.
- ``box``: value = lo + (hi - lo) * x over a stated range; x in [0, 1] (SIMPLER's choice).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from simgap.errors import InputError

Scale = Literal["multiplier", "box"]

UNITS: Mapping[str, str] = {
    "kp": "N m/rad",
    "kv": "N m s/rad",
    "force_limit": "N m",
    "damping": "N m s/rad",
    "armature": "kg m^2",
    "frictionloss": "N m",
    "pair_friction": "1",
    "geom_friction": "1",
    "mass": "kg",
}


@dataclass(frozen=True)
class Param:
    """One physical parameter to search.

    Attributes:
        kind: what it is (``kp``, ``kv``, ``damping``, ``armature``, ``frictionloss``,
            ``pair_friction``, ``geom_friction``, ``mass``).
        target: the joint/actuator/pair/geom/body it belongs to.
        nominal: the model's value [SI].
        lo: lower bound [SI].
        hi: upper bound [SI].
        scale: ``multiplier`` (of nominal) or ``box`` ([0, 1] over [lo, hi]).
    """

    kind: str
    target: str
    nominal: float
    lo: float
    hi: float
    scale: Scale = "multiplier"

    def __post_init__(self) -> None:
        if self.kind not in UNITS:
            raise InputError(field="kind", expected=f"one of {', '.join(UNITS)}", got=self.kind)
        if not self.lo < self.hi:
            raise InputError(
                field=f"{self.name} bounds", expected="lo < hi", got=[self.lo, self.hi]
            )
        if self.scale == "multiplier" and self.nominal <= 0:
            raise InputError(
                field=f"{self.name} nominal",
                expected="a positive nominal for a multiplier parameter",
                got=self.nominal,
                fix="use scale='box' with a stated range",
            )

    @property
    def name(self) -> str:
        """``target.kind``, e.g. ``elbow_flex.kp``."""
        return f"{self.target}.{self.kind}"

    @property
    def unit(self) -> str:
        """The SI unit of the value."""
        return UNITS[self.kind]

    def to_value(self, x: float | np.ndarray) -> float | np.ndarray:
        """Normalised coordinate -> SI value."""
        if self.scale == "multiplier":
            return self.nominal * x
        return self.lo + (self.hi - self.lo) * x

    def to_x(self, value: float) -> float:
        """SI value -> normalised coordinate."""
        if self.scale == "multiplier":
            return value / self.nominal
        return (value - self.lo) / (self.hi - self.lo)

    @property
    def x_bounds(self) -> tuple[float, float]:
        """Bounds in normalised coordinates."""
        return float(self.to_x(self.lo)), float(self.to_x(self.hi))

    @property
    def value_per_x(self) -> float:
        """d value / d x (to carry intervals from x to SI)."""
        return self.nominal if self.scale == "multiplier" else self.hi - self.lo


@dataclass(frozen=True)
class ParamSet:
    """An ordered set of parameters; vectors are in this order."""

    params: tuple[Param, ...]

    def __post_init__(self) -> None:
        seen = [p.name for p in self.params]
        dup = {n for n in seen if seen.count(n) > 1}
        if dup:
            raise InputError(field="params", expected="each parameter once", got=sorted(dup))
        object.__setattr__(self, "params", tuple(self.params))

    def __len__(self) -> int:
        return len(self.params)

    @property
    def names(self) -> list[str]:
        """Parameter names in vector order."""
        return [p.name for p in self.params]

    @property
    def x_nominal(self) -> np.ndarray:
        """Normalised coordinates of the nominal values, shape (n,)."""
        return np.array([p.to_x(p.nominal) for p in self.params])

    @property
    def x_lower(self) -> np.ndarray:
        """Lower bounds in normalised coordinates, shape (n,)."""
        return np.array([p.x_bounds[0] for p in self.params])

    @property
    def x_upper(self) -> np.ndarray:
        """Upper bounds in normalised coordinates, shape (n,)."""
        return np.array([p.x_bounds[1] for p in self.params])

    def values(self, x: Sequence[float] | np.ndarray) -> np.ndarray:
        """SI values of a normalised vector, shape (n,)."""
        return np.array([float(p.to_value(float(v))) for p, v in zip(self.params, x, strict=True)])

    def to_x(self, values: Sequence[float] | np.ndarray) -> np.ndarray:
        """Normalised coordinates of SI values, shape (n,)."""
        return np.array([p.to_x(float(v)) for p, v in zip(self.params, values, strict=True)])

    def writes(self, x: Sequence[float] | np.ndarray) -> dict[tuple[str, str], float]:
        """``{(kind, target): SI value}`` for ``simgap.sim.model.with_params``."""
        return {
            (p.kind, p.target): float(v) for p, v in zip(self.params, self.values(x), strict=True)
        }

    def at_bounds(self, x: np.ndarray, tol: float = 1e-3) -> list[str]:
        """Names of parameters within ``tol`` of the range of a bound (in x)."""
        lo, hi = self.x_lower, self.x_upper
        span = hi - lo
        return [
            p.name
            for p, v, a, b, s in zip(self.params, x, lo, hi, span, strict=True)
            if v <= a + tol * s or v >= b - tol * s
        ]


def multipliers(
    kinds_targets: Iterable[tuple[str, str]],
    nominal: Mapping[tuple[str, str], float],
    lo: float = 0.25,
    hi: float = 4.0,
) -> ParamSet:
    """Parameters as multipliers of their nominal in [lo, hi] x nominal."""
    out = []
    for kind, target in kinds_targets:
        nom = float(nominal[(kind, target)])
        out.append(Param(kind, target, nom, lo * nom, hi * nom, "multiplier"))
    return ParamSet(tuple(out))


def box(
    kinds_targets: Iterable[tuple[str, str]],
    nominal: Mapping[tuple[str, str], float],
    ranges: Mapping[tuple[str, str], tuple[float, float]],
) -> ParamSet:
    """Parameters as [0, 1] coordinates over stated SI ranges (SIMPLER's normalisation)."""
    out = []
    for key in kinds_targets:
        lo, hi = ranges[key]
        out.append(Param(key[0], key[1], float(nominal[key]), float(lo), float(hi), "box"))
    return ParamSet(tuple(out))
