"""What a ladder rung states of its parameters: the one ``Estimate`` of each rung
(``rung_estimate``: each numeric parameter with its unit, ``RUNG_UNITS``, the held-out MAE
as its residual, the reason no interval is computed) and whether a value ended at a bound of
its search (``at_bound``, ``delay_bounds``, ``servo_bound_reasons``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from simgap.actuator.family_fit import PHYS_UNITS
from simgap.actuator.servo import (
    BOUNDS,
    PARAM_NAMES,
    ParamSpace,
)
from simgap.errors import NameNotFoundError
from simgap.fit.estimate import Estimate, ParamEstimate

if TYPE_CHECKING:
    from simgap.actuator.rungs import LadderConfig


RUNG_UNITS: Mapping[str, str] = {
    **{
        k: PHYS_UNITS[k]
        for k in ("delay_s", "kt", "R", "armature", "friction_base", "friction_viscous")
    },
    "lag_s": "s",
    "stiffness_nm_per_rad": "N m/rad",
}
"""The unit of each numeric parameter the ideal, delay-lag, generic servo and network rungs
state: BAM's names from ``family_fit.PHYS_UNITS``, plus the lag's time constant and the
stiffness of a servo of unknown firmware (``servo.named_params``)."""

AT_BOUND_REL = 1e-3
"""A fitted value within this fraction of a bound of its search range ended at that bound
[-]: the golden-section lag search stops 6e-8 short of its 5 s bound, LM clips to it."""

AT_BOUND = "ended at its bound"
"""How the reason of a parameter that ended at a bound of its search range begins (the CLI
marks such a parameter "(at bound)")."""


def rung_estimate(
    model: str,
    values: Mapping[str, float],
    held_out_mae_rad: float,
    *,
    noise_floor_rad: float | None = None,
    reasons: Mapping[str, str] | None = None,
    evaluations: int = 0,
) -> Estimate:
    """The ``Estimate`` of a rung the ladder judges by its held-out error alone.

    Each parameter gets its unit (``RUNG_UNITS``) and, having no interval, the reason: the
    ladder selects the rung by its held-out MAE and computes no interval for its
    parameters, unless ``reasons`` gives another (a value at a bound of its search range).
    The residual is the held-out MAE [rad], the floor the joint's (None when not given).

    Args:
        model: the rung's name (named in the reason).
        values: name -> fitted value [its ``RUNG_UNITS`` unit].
        held_out_mae_rad: the rung's held-out MAE [rad].
        noise_floor_rad, reasons, evaluations: as ``scored``'s.

    Raises:
        NameNotFoundError: a name without a unit in ``RUNG_UNITS`` (the valid ones listed).
    """
    why = dict(reasons or {})
    default = (
        f"the ladder judges the {model} rung by its held-out MAE "
        f"({held_out_mae_rad * 1e3:.3g} mrad); no interval is computed for its parameters"
    )
    params = []
    for name, v in values.items():
        if name not in RUNG_UNITS:
            raise NameNotFoundError(
                "rung parameter", name, RUNG_UNITS, field=f"{model} params", where="RUNG_UNITS"
            )
        params.append(ParamEstimate.of(name, RUNG_UNITS[name], v, None, why.get(name) or default))
    return Estimate(
        tuple(params),
        float(held_out_mae_rad),
        "rad",
        "MAE",
        None if noise_floor_rad is None else float(noise_floor_rad),
        int(evaluations),
    )


def at_bound(value: float, bounds: tuple[float | None, float | None], unit: str) -> str:
    """The reason of a value that ended at a bound of its search range (within
    ``AT_BOUND_REL`` of it): "ended at its bound (5 s): the data do not bound it"; "" when
    it did not. A bound given as None is none the data could have pushed against (a delay
    of 0 s is a delay, not the end of a search)."""
    for b in bounds:
        if b is not None and abs(value - b) <= AT_BOUND_REL * abs(b):
            return f"{AT_BOUND} ({b:.3g} {unit}): the data do not bound it"
    return ""


def delay_bounds(top_s: float, config: LadderConfig | None) -> tuple[None, float | None]:
    """The bounds a rung's delay can end at: its profile spans 0 to ``top_s`` [s], the
    cross-correlation delay capped at ``config.max_delay_s``. Only the cap is a bound the
    data do not set (0 is a delay, and the cross-correlation delay is the data's own)."""
    capped = config is not None and top_s >= config.max_delay_s * (1.0 - 1e-9)
    return (None, top_s if capped else None)


def servo_bound_reasons(p: np.ndarray, space: ParamSpace) -> dict[str, str]:
    """The servo rung's reasons by readable name (``servo.named_params``) for the values
    that ended at a bound of ``servo.BOUNDS`` or were not fitted at all.

    ``kt`` and ``R`` come from km = kt / R [N m/V] and dm = kt^2 / R [N m s/rad], so they
    carry the reason of either at its bound; on a servo of unknown firmware km is the
    stiffness [N m/rad], and the armature is not fitted (the model's inertia carries it).

    Args:
        p: the six internal parameters (``servo.PARAM_NAMES``), shape (6,).
        space: which of them were fitted.
    """
    known = "dm" in space.free
    unit = {**RUNG_UNITS, "km": "N m/V" if known else "N m/rad", "dm": "N m s/rad"}
    internal = {n: at_bound(float(p[PARAM_NAMES.index(n)]), BOUNDS[n], unit[n]) for n in space.free}
    out: dict[str, str] = {}
    if known:
        ends = "; ".join(f"{n} {internal[n]}" for n in ("km", "dm") if internal[n])
        for n in ("kt", "R"):
            out[n] = f"{ends} (kt and R come from km = kt/R and dm = kt^2/R)" if ends else ""
    else:
        out["stiffness_nm_per_rad"] = internal["km"]
    for n in ("armature", "friction_base", "friction_viscous", "lag_s"):
        if n in space.free:
            out[n] = internal[n]
    if "armature" not in space.free:
        out["armature"] = (
            f"not fitted: held at {p[PARAM_NAMES.index('armature')]:.3g} kg m^2 on a servo "
            "of unknown firmware (the model's inertia carries it)"
        )
    return {k: v for k, v in out.items() if v}
