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


def sliding_from_tilt(theta_deg: float) -> float:
    """Sliding friction from the slip angle of a flat object on a tilted plane [deg]."""
    if not 0.0 < theta_deg < 90.0:
        raise InputError(field="tilt angle", expected="an angle in (0, 90) degrees",
                         got=theta_deg, fix="measure the angle from the horizontal")
    return math.tan(math.radians(theta_deg))


def torsional_from_patch(patch_diameter_m: float, sliding: float) -> float:
    """Torsional coefficient [m] of a uniform-pressure circular patch of diameter d [m]."""
    if patch_diameter_m <= 0 or sliding <= 0:
        raise InputError(field="patch diameter / sliding friction",
                         expected="positive values", got=(patch_diameter_m, sliding))
    return sliding * patch_diameter_m / 3.0


def rolling_from_depth(depth_m: float) -> float:
    """Rolling coefficient [m] from the pad's local deformation depth [m] (~ delta)."""
    if depth_m < 0:
        raise InputError(field="deformation depth", expected="a depth >= 0 m", got=depth_m)
    return float(depth_m)


def friction_five(theta_deg: float, patch_diameter_m: float, depth_m: float
                  ) -> tuple[float, float, float, float, float]:
    """The five numbers of a ``<pair friction>``: sliding, sliding, torsional, rolling,
    rolling."""
    mu = sliding_from_tilt(theta_deg)
    tor = torsional_from_patch(patch_diameter_m, mu)
    roll = rolling_from_depth(depth_m)
    return (mu, mu, tor, roll, roll)
