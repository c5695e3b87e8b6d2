"""Bench measurements -> MuJoCo contact coefficients (SI; MuJoCo length unit = metre).

- Sliding: tilt a plane until a flat object on it starts to slip; at the slip angle
  theta, tan(theta) = mu (Coulomb: m g sin(theta) = mu m g cos(theta)).
- Torsional: MuJoCo's torsional coefficient is a length: the largest spin torque is
  ``torsional * normal force``. For a flat circular patch of diameter d under uniform
  pressure with sliding coefficient mu, the spin torque at slip is (2/3) mu (d/2) N, so
  torsional = mu d / 3.
- Rolling: also a length: the rolling-resistance torque is ``rolling * normal force``,
  i.e. the lever arm by which the pressure centre shifts ahead of the contact point. For a
  soft pad pressed in by depth delta (measured with a caliper), that shift is of the
  order of the indentation: rolling ~ delta (an order-of-magnitude rule, stated as such).
"""

from __future__ import annotations

import math

from simgap.errors import InputError

MAX_PATCH_DIAMETER_M = 0.1
"""A contact patch wider than 10 cm is not a fingertip: the number was probably mm."""
MAX_DEPTH_M = 0.01
"""A pad pressed in deeper than 1 cm: the number was probably mm."""


def sliding_from_tilt(theta_deg: float) -> float:
    """Sliding friction from the slip angle of a flat object on a tilted plane [deg]."""
    if not 0.0 < theta_deg < 90.0:
        raise InputError(field="tilt angle", expected="an angle in (0, 90) degrees",
                         got=theta_deg, fix="measure the angle from the horizontal")
    return math.tan(math.radians(theta_deg))


def torsional_from_patch(patch_diameter_m: float, sliding: float) -> float:
    """Torsional coefficient [m] of a uniform-pressure circular patch of diameter d [m].

    Raises:
        InputError: a non-positive value, a sliding coefficient outside (0, 3], or a
            diameter over ``MAX_PATCH_DIAMETER_M`` (millimetres typed as metres).
    """
    if patch_diameter_m <= 0 or sliding <= 0:
        raise InputError(field="patch diameter / sliding friction",
                         expected="positive values", got=(patch_diameter_m, sliding))
    if patch_diameter_m > MAX_PATCH_DIAMETER_M:
        raise InputError(field="patch diameter", expected=f"a diameter in metres, at most "
                         f"{MAX_PATCH_DIAMETER_M:g} m for a fingertip patch",
                         got=f"{patch_diameter_m:g} m",
                         fix=f"was it millimetres? {patch_diameter_m:g} mm is "
                             f"{patch_diameter_m / 1000:g} m (the command takes "
                             "--patch-diameter-mm)")
    if sliding > 3.0:
        raise InputError(field="sliding friction", expected="a coefficient in (0, 3]",
                         got=sliding, fix="pass the sliding coefficient, e.g. tan(tilt)")
    return sliding * patch_diameter_m / 3.0


def rolling_from_depth(depth_m: float) -> float:
    """Rolling coefficient [m] from the pad's local deformation depth [m] (~ delta).

    Raises:
        InputError: a negative depth, or one over ``MAX_DEPTH_M`` (millimetres typed as
            metres).
    """
    if depth_m < 0:
        raise InputError(field="deformation depth", expected="a depth >= 0 m", got=depth_m)
    if depth_m > MAX_DEPTH_M:
        raise InputError(field="deformation depth", expected=f"a depth in metres, at most "
                         f"{MAX_DEPTH_M:g} m", got=f"{depth_m:g} m",
                         fix=f"was it millimetres? {depth_m:g} mm is {depth_m / 1000:g} m "
                             "(the command takes --depth-mm)")
    return float(depth_m)


def friction_five(theta_deg: float, patch_diameter_m: float, depth_m: float
                  ) -> tuple[float, float, float, float, float]:
    """The five numbers of a ``<pair friction>``: sliding, sliding, torsional, rolling,
    rolling."""
    mu = sliding_from_tilt(theta_deg)
    tor = torsional_from_patch(patch_diameter_m, mu)
    roll = rolling_from_depth(depth_m)
    return (mu, mu, tor, roll, roll)


def measure(tilt_deg: float | None = None, patch_diameter_mm: float | None = None,
            sliding: float | None = None, depth_mm: float | None = None) -> dict[str, float]:
    """What ``simgap contact measure`` computes from bench numbers in the units a bench
    gives them (degrees, millimetres): ``sliding``, ``torsional_m``, ``rolling_m`` for the
    inputs given. The sliding coefficient for the torsional rule comes from ``sliding``,
    else from the tilt.

    Raises:
        InputError: nothing to convert, or a value out of range (see the converters).
    """
    out: dict[str, float] = {}
    if tilt_deg is not None:
        out["sliding"] = sliding_from_tilt(tilt_deg)
    mu = sliding if sliding is not None else out.get("sliding")
    if patch_diameter_mm is not None:
        if mu is None:
            raise InputError(field="--sliding", expected="the sliding coefficient (or "
                             "--tilt-deg) for the torsional rule", got="nothing",
                             fix="add --sliding 0.35 or --tilt-deg 19.3")
        out["torsional_m"] = torsional_from_patch(patch_diameter_mm / 1000.0, mu)
    if depth_mm is not None:
        out["rolling_m"] = rolling_from_depth(depth_mm / 1000.0)
    if not out:
        raise InputError(field="measurements", expected="--tilt-deg, --patch-diameter-mm "
                         "(with --sliding) or --depth-mm", got="nothing")
    return out
