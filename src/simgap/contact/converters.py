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
from simgap.validate import number, plausible

MAX_PATCH_DIAMETER_M = 0.1
"""A contact patch wider than 10 cm is not a fingertip: the number was probably mm."""
MIN_PATCH_DIAMETER_MM = 0.5
"""A patch narrower than half a millimetre is below a caliper's reach: metres typed as mm."""
MAX_DEPTH_M = 0.01
"""A pad pressed in deeper than 1 cm: the number was probably mm."""
MIN_DEPTH_MM = 0.02
"""A deformation under 0.02 mm (a caliper's resolution) is 0 or metres typed as mm."""
MAX_SLIDING = 3.0
"""The largest sliding coefficient accepted (soft rubber on rough ground is about 1-2)."""
MAX_TILT_DEG = math.degrees(math.atan(MAX_SLIDING))
"""The steepest slip angle: tan(71.6 deg) = 3 (beyond it the object was held, not slipping)."""
MM_TYPOS = {"metres": 1000.0}
"""Unit slips a millimetre field recognises: a value typed in metres."""


def sliding_from_tilt(theta_deg: float) -> float:
    """Sliding friction from the slip angle of a flat object on a tilted plane [deg].

    Raises:
        InputError: not a finite angle in (0, ``MAX_TILT_DEG``] (a steeper angle gives a
            coefficient above ``MAX_SLIDING``: tan(89.999 deg) would be 57,296).
    """
    theta = number(
        theta_deg,
        field="tilt angle",
        unit="deg",
        lo=0.0,
        lo_open=True,
        hi=90.0,
        fix="measure the slip angle from the horizontal, in degrees",
    )
    if theta > MAX_TILT_DEG:
        raise InputError(
            field="tilt angle",
            expected=f"a slip angle in (0, {MAX_TILT_DEG:.1f}]"
            f" degrees (tan {MAX_TILT_DEG:.1f} deg = {MAX_SLIDING:g}, the largest "
            "sliding coefficient)",
            got=f"{theta:g} deg, a sliding coefficient of {math.tan(math.radians(theta)):.4g}",
            fix="measure the angle from the horizontal at which the object "
            "starts to slide; a steeper plate means it was held, not sliding",
        )
    return math.tan(math.radians(theta))


def torsional_from_patch(patch_diameter_m: float, sliding: float) -> float:
    """Torsional coefficient [m] of a uniform-pressure circular patch of diameter d [m].

    Raises:
        InputError: a non-positive value, a sliding coefficient outside (0, 3], or a
            diameter over ``MAX_PATCH_DIAMETER_M`` (millimetres typed as metres).
    """
    number(patch_diameter_m, field="patch diameter", unit="m", lo=0.0, lo_open=True)
    number(sliding, field="sliding friction", lo=0.0, lo_open=True)
    if patch_diameter_m > MAX_PATCH_DIAMETER_M:
        raise InputError(
            field="patch diameter",
            expected=f"a diameter in metres, at most "
            f"{MAX_PATCH_DIAMETER_M:g} m for a fingertip patch",
            got=f"{patch_diameter_m:g} m",
            fix=f"was it millimetres? {patch_diameter_m:g} mm is "
            f"{patch_diameter_m / 1000:g} m (the command takes "
            "--patch-diameter-mm)",
        )
    if sliding > MAX_SLIDING:
        raise InputError(
            field="sliding friction",
            expected=f"a coefficient in (0, {MAX_SLIDING:g}]",
            got=sliding,
            fix="pass the sliding coefficient, e.g. tan(tilt)",
        )
    return sliding * patch_diameter_m / 3.0


def rolling_from_depth(depth_m: float) -> float:
    """Rolling coefficient [m] from the pad's local deformation depth [m] (~ delta).

    Raises:
        InputError: a negative depth, or one over ``MAX_DEPTH_M`` (millimetres typed as
            metres).
    """
    number(depth_m, field="deformation depth", unit="m", lo=0.0)
    if depth_m > MAX_DEPTH_M:
        raise InputError(
            field="deformation depth",
            expected=f"a depth in metres, at most {MAX_DEPTH_M:g} m",
            got=f"{depth_m:g} m",
            fix=f"was it millimetres? {depth_m:g} mm is {depth_m / 1000:g} m "
            "(the command takes --depth-mm)",
        )
    return float(depth_m)


def friction_five(
    theta_deg: float, patch_diameter_m: float, depth_m: float
) -> tuple[float, float, float, float, float]:
    """The five numbers of a ``<pair friction>``: sliding, sliding, torsional, rolling,
    rolling."""
    mu = sliding_from_tilt(theta_deg)
    tor = torsional_from_patch(patch_diameter_m, mu)
    roll = rolling_from_depth(depth_m)
    return (mu, mu, tor, roll, roll)


def measure(
    tilt_deg: float | None = None,
    patch_diameter_mm: float | None = None,
    sliding: float | None = None,
    depth_mm: float | None = None,
) -> dict[str, float]:
    """What ``simgap contact measure`` computes from bench numbers in the units a bench
    gives them (degrees, millimetres): ``sliding``, ``torsional_m``, ``rolling_m`` for the
    inputs given. The sliding coefficient comes from ``sliding`` or from the tilt (one of
    them: both would be two answers to one question).

    Every number is checked at this boundary: finite, in its unit's plausible range, and a
    length in metres typed into a millimetre option is refused with the value it meant.

    Raises:
        InputError: nothing to convert, both ``tilt_deg`` and ``sliding``, or a value out
            of range (see the converters).
    """
    if tilt_deg is not None and sliding is not None:
        raise InputError(
            field="--tilt-deg and --sliding",
            expected="one source of the sliding coefficient",
            got=f"both (--tilt-deg {tilt_deg:g} gives "
            f"{_tan_or_nan(tilt_deg):.4g}, --sliding {sliding:g})",
            fix="pass --tilt-deg (the slip angle) or --sliding (a coefficient "
            "measured otherwise), not both",
        )
    out: dict[str, float] = {}
    if tilt_deg is not None:
        out["sliding"] = sliding_from_tilt(tilt_deg)
    if sliding is not None:
        mu = number(
            sliding,
            field="--sliding",
            lo=0.0,
            lo_open=True,
            hi=MAX_SLIDING,
            fix="pass the sliding coefficient, e.g. 0.35, or --tilt-deg",
        )
        out["sliding"] = mu
    if patch_diameter_mm is not None:
        d_mm = plausible(
            patch_diameter_mm,
            field="--patch-diameter-mm",
            unit="mm",
            lo=MIN_PATCH_DIAMETER_MM,
            hi=MAX_PATCH_DIAMETER_M * 1000.0,
            what="a fingertip contact patch's diameter",
            typos=MM_TYPOS,
        )
        if "sliding" not in out:
            raise InputError(
                field="--sliding",
                expected="the sliding coefficient (or --tilt-deg) for the torsional rule",
                got="nothing",
                fix="add --sliding 0.35 or --tilt-deg 19.3",
            )
        out["torsional_m"] = torsional_from_patch(d_mm / 1000.0, out["sliding"])
    if depth_mm is not None:
        depth = plausible(
            depth_mm,
            field="--depth-mm",
            unit="mm",
            lo=MIN_DEPTH_MM,
            hi=MAX_DEPTH_M * 1000.0,
            what="a pad's deformation depth",
            zero_ok=True,
            typos=MM_TYPOS,
        )
        out["rolling_m"] = rolling_from_depth(depth / 1000.0)
    if not out:
        raise InputError(
            field="measurements",
            expected="--tilt-deg, --patch-diameter-mm (with --sliding) or --depth-mm",
            got="nothing",
        )
    return out


def _tan_or_nan(theta_deg: float) -> float:
    try:
        return math.tan(math.radians(theta_deg))
    except (TypeError, ValueError, OverflowError):
        return math.nan
