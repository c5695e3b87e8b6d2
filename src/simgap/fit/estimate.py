"""The one result every fit returns: values with intervals or reasons, residual, floor.

An ``Estimate`` holds, per parameter, its name, unit and value, and either its 95 %
interval or the reason the data do not pin it down: never both, and never an interval
the fit did not compute. Beside the parameters it carries the fit's residual (its value,
unit and statistic: RMS or MAE), the noise floor the residual is judged against (None
when the caller gave none: then nothing says whether the fit reached the instrument) and
the evaluations the fit spent.

Where a fit computed an interval and then turned it down (wider than its identifiability
rule allows, a bound reached, a saturated actuator), the parameter carries the reason,
and the turned-down interval travels as ``rejected``: evidence beside the reason, never
the parameter's interval.

Estimates are built through ``Estimate.from_intervals`` (a least-squares fit: the one
interval rule, ``simgap.fit.intervals``, gives the Student-t half-widths and the null
directions' reasons) or ``ParamEstimate.of`` + ``Estimate`` (a fit whose intervals come
from another statistic: a profile, a bootstrap whose band uses ``t_quantile``).

JSON form (``Estimate.to_json``; ``Estimate.from_json`` reads it back)::

    {"params": {NAME: {"unit": str, "value": float,
                       "interval": [lo, hi]            # when identified
                       | "reason": str,                 # when not
                       "rejected_interval": [lo, hi]}}, # optional, only with a reason
     "residual": {"value": float | null, "unit": str, "statistic": "RMS" | "MAE"},
     "noise_floor": float | null,                       # in the residual's unit
     "evaluations": int}

Non-finite numbers are written as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

from simgap.errors import InputError, NameNotFoundError
from simgap.fit.intervals import Intervals

Statistic = Literal["RMS", "MAE"]
STATISTICS: tuple[Statistic, ...] = ("RMS", "MAE")

CONTAIN_REL = 1e-9
"""Relative slack with which an interval must contain its value (floating-point rounding)."""

NOT_FINITE_REASON = "no finite interval: the residual or its Jacobian is not finite (NaN)"
"""Why a parameter has no interval where the rule's half-width is NaN (no null direction)."""


def _pair(v: Sequence[float] | np.ndarray | None) -> tuple[float, float] | None:
    return None if v is None else (float(v[0]), float(v[1]))


def _num(v: float | None) -> float | None:
    return float(v) if v is not None and math.isfinite(float(v)) else None


@dataclass(frozen=True)
class ParamEstimate:
    """One fitted parameter.

    Attributes:
        name: the parameter's name (unique within its estimate).
        unit: the unit of value and interval.
        value: the fitted value [unit].
        interval: 95 % interval (lo, hi) [unit] when the data pin the parameter down;
            None otherwise.
        reason: why it is not identifiable, in numbers ("" when it has an interval).
        rejected: the interval the fit computed and its identifiability rule turned
            down (lo, hi) [unit], kept as evidence beside ``reason``; None when the
            parameter is identified or the fit gave no finite interval.
    """

    name: str
    unit: str
    value: float
    interval: tuple[float, float] | None = None
    reason: str = ""
    rejected: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if (self.interval is None) == (not self.reason):
            raise InputError(
                field=f"{self.name} interval/reason",
                expected="either a 95 % interval or the reason there is none, not both",
                got={"interval": self.interval, "reason": self.reason},
            )
        if self.interval is not None:
            lo, hi = self.interval
            slack = CONTAIN_REL * max(abs(lo), abs(hi), abs(self.value), 1e-300)
            if not (
                math.isfinite(lo) and math.isfinite(hi) and lo - slack <= self.value <= hi + slack
            ):
                raise InputError(
                    field=f"{self.name} interval",
                    expected=f"a finite interval holding the value {self.value!r}",
                    got=self.interval,
                )
        if self.rejected is not None and not self.reason:
            raise InputError(
                field=f"{self.name} rejected",
                expected="a turned-down interval only beside a reason",
                got=self.rejected,
            )

    @classmethod
    def of(
        cls,
        name: str,
        unit: str,
        value: float,
        interval: Sequence[float] | np.ndarray | None,
        reason: str = "",
    ) -> ParamEstimate:
        """A parameter from a fit's value, its computed interval (None or non-finite: none)
        and the reason the fit turned it down ("" when it did not).

        A reason moves a finite interval to ``rejected``; a missing or non-finite interval
        without a reason is an error of the caller (it must say why there is none).
        """
        iv = _pair(interval)
        finite = iv is not None and math.isfinite(iv[0]) and math.isfinite(iv[1])
        if reason:
            return cls(name, unit, float(value), None, reason, iv if finite else None)
        return cls(name, unit, float(value), iv if finite else None)

    @property
    def identified(self) -> bool:
        """Whether the data pin it down (it has an interval)."""
        return self.interval is not None

    def to_json(self) -> dict[str, Any]:
        """``{"unit", "value", "interval"}`` or ``{"unit", "value", "reason"}`` (plus
        ``rejected_interval`` when the fit turned one down)."""
        out: dict[str, Any] = {"unit": self.unit, "value": _num(self.value)}
        if self.interval is not None:
            out["interval"] = [float(self.interval[0]), float(self.interval[1])]
        else:
            out["reason"] = self.reason
            if self.rejected is not None:
                out["rejected_interval"] = [float(self.rejected[0]), float(self.rejected[1])]
        return out


@dataclass(frozen=True)
class Estimate:
    """What a fit found: each parameter with its interval or reason, and how well it fit.

    Attributes:
        params: the parameters, in the fit's order (names unique).
        residual: the fit's residual at its values [residual_unit] (``statistic`` of it).
        residual_unit: the residual's unit (e.g. ``rad``, ``m``, ``px``).
        statistic: what ``residual`` is: ``RMS`` (root mean square) or ``MAE`` (mean
            absolute error).
        noise_floor: the floor the residual is judged against [residual_unit], None when
            the caller gave none (the estimate then cannot say whether the fit reached
            the instrument).
        evaluations: candidate evaluations the fit spent (rollouts per log, renders...).
    """

    params: tuple[ParamEstimate, ...]
    residual: float
    residual_unit: str
    statistic: Statistic = "RMS"
    noise_floor: float | None = None
    evaluations: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        names = [p.name for p in self.params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InputError(field="params", expected="each parameter name once", got=dup)
        if self.statistic not in STATISTICS:
            raise InputError(
                field="statistic", expected=f"one of {', '.join(STATISTICS)}", got=self.statistic
            )

    @classmethod
    def from_intervals(
        cls,
        names: Sequence[str],
        units: Sequence[str],
        values: Sequence[float] | np.ndarray,
        iv: Intervals,
        *,
        scale: Sequence[float] | np.ndarray | None = None,
        reasons: Sequence[str] | None = None,
        index: Sequence[int] | None = None,
        residual: float,
        residual_unit: str,
        statistic: Statistic = "RMS",
        noise_floor: float | None = None,
        evaluations: int = 0,
    ) -> Estimate:
        """The estimate of a least-squares fit from the one interval rule's result.

        Args:
            names, units, values: per parameter, shape (n,).
            iv: ``simgap.fit.intervals`` at the fit (its coordinates).
            scale: d value / d coordinate per parameter, shape (n,) (default 1): carries
                the half-widths into the values' units.
            reasons: the caller's own reasons per parameter ("" where none: the rule's
                null-direction reason, if any, applies); a reason turns the interval down.
            index: which of the rule's parameters ``names`` are, shape (n,) (default: all,
                in order): a fit whose other parameters are nuisances (an object's
                position) states only these.
            residual, residual_unit, statistic, noise_floor, evaluations: as the fields.
        """
        v = np.asarray(values, dtype=float)
        at = np.arange(v.size) if index is None else np.asarray(index, dtype=int)
        hw = iv.half_width[at] * (1.0 if scale is None else np.abs(np.asarray(scale)))
        withheld = [iv.withheld[i] for i in at]
        why = list(reasons) if reasons is not None else [""] * v.size
        params = tuple(
            ParamEstimate.of(
                n,
                u,
                float(v[k]),
                (v[k] - hw[k], v[k] + hw[k]),
                why[k] or withheld[k] or ("" if np.isfinite(hw[k]) else NOT_FINITE_REASON),
            )
            for k, (n, u) in enumerate(zip(names, units, strict=True))
        )
        return cls(params, float(residual), residual_unit, statistic, noise_floor, evaluations)

    # lookups -------------------------------------------------------------------------

    def __iter__(self) -> Iterator[ParamEstimate]:
        return iter(self.params)

    def __len__(self) -> int:
        return len(self.params)

    def __getitem__(self, name: str) -> ParamEstimate:
        """The parameter called ``name`` (``NameNotFoundError`` listing the valid names)."""
        for p in self.params:
            if p.name == name:
                return p
        raise NameNotFoundError("fitted parameter", name, self.names, where="this fit")

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names in the fit's order."""
        return tuple(p.name for p in self.params)

    @property
    def values(self) -> np.ndarray:
        """Fitted values in the fit's order, shape (n,)."""
        return np.array([p.value for p in self.params], dtype=float)

    @property
    def identified(self) -> tuple[str, ...]:
        """Names of the parameters with an interval."""
        return tuple(p.name for p in self.params if p.interval is not None)

    @property
    def reasons(self) -> dict[str, str]:
        """name -> why it is not identifiable, for each parameter without an interval."""
        return {p.name: p.reason for p in self.params if p.reason}

    def value(self, name: str) -> float:
        """The fitted value of ``name``."""
        return self[name].value

    def interval(self, name: str) -> tuple[float, float] | None:
        """The 95 % interval of ``name``, None when it is not identifiable."""
        return self[name].interval

    # JSON ----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The JSON form of the module docstring."""
        return {
            "params": {p.name: p.to_json() for p in self.params},
            "residual": {
                "value": _num(self.residual),
                "unit": self.residual_unit,
                "statistic": self.statistic,
            },
            "noise_floor": _num(self.noise_floor),
            "evaluations": int(self.evaluations),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Estimate:
        """An estimate from its JSON form (``to_json``)."""
        try:
            params = tuple(
                ParamEstimate(
                    name,
                    str(p["unit"]),
                    float("nan") if p["value"] is None else float(p["value"]),
                    _pair(p.get("interval")),
                    str(p.get("reason", "")),
                    _pair(p.get("rejected_interval")),
                )
                for name, p in data["params"].items()
            )
            res = data["residual"]
            floor = data.get("noise_floor")
            return cls(
                params,
                float("nan") if res["value"] is None else float(res["value"]),
                str(res["unit"]),
                cast(Statistic, res["statistic"]),
                None if floor is None else float(floor),
                int(data.get("evaluations", 0)),
            )
        except (KeyError, TypeError, AttributeError) as e:
            raise InputError(
                field="estimate",
                expected="the JSON form of simgap.fit.estimate.Estimate (params, residual, "
                "noise_floor, evaluations)",
                got=repr(e),
            ) from e
