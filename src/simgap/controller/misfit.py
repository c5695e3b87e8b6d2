"""The misfit gate of SIMPLER's controller fit: no interval from a model that misses its data.

The pose fit's 95 % intervals are local: s^2 (J^T J)^-1 at the best gains, with every other
part of the model taken as true. The replay has no command delay, no servo lag and no joint
offsets, so on a rig that has them kp and kv absorb what the replay lacks: on the demo (a 40 ms
servo lag, a 67 ms loop) the fit settled at shoulder_pan kp 900 +- 8 N m/rad against a planted
499. Such an interval is tight around a wrong value; its width says how curved the misspecified
loss is, not how far the true gain can be.

So a fit is trusted only where it explains the data: its pose loss within ``MISFIT_FLOORS``
noise floors, the same band in which ``pose_fit.verdict_for`` calls the nominal gains a match.
Above it every gain is declared not identifiable, with the reason and the withdrawn local
half-width, and no half-width is stated as its interval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MISFIT_FLOORS = 3.0
"""A fit explains the data when its pose loss is at most 3 noise floors (``verdict_for``'s
band for a match)."""


def misfit_ratio(loss: float, floor: float) -> float:
    """The pose loss in noise floors (inf when the floor is zero or not finite)."""
    return loss / floor if floor > 0 and floor < float("inf") else float("inf")


def misfit_reason(loss: float, floor: float, half_width: float | None) -> str:
    """Why a gain of a fit whose loss is above ``MISFIT_FLOORS`` floors is not identified.

    Args:
        loss: the fit's pose loss (SIMPLER's, m + rad of half-angle).
        floor: its noise floor (same measure).
        half_width: the withdrawn local 95 % half-width (the gain's unit), None if infinite.
    """
    local = (
        "" if half_width is None else f"; its local 95 % half-width {half_width:.3g} is withdrawn"
    )
    return (
        f"the model misses the data by {misfit_ratio(loss, floor):.3g} x its noise floor "
        f"(pose loss {loss:.3g} against {floor:.3g}; a gain is identified only within "
        f"{MISFIT_FLOORS:g} x): kp and kv absorb dynamics the replay lacks (command delay, "
        f"servo lag, joint offsets){local}"
    )


def gate(fit: Mapping[str, Any], floor: float) -> dict[str, Any]:
    """``fit`` (``pose_fit.fit_controller``'s result) with the misfit gate applied.

    Each method whose loss exceeds ``MISFIT_FLOORS`` x ``floor`` has every table row marked
    not identified with the reason and its half-width set to NaN (infinite: not stated); when
    the better method's loss does, so do ``identified``, ``intervals`` (None) and ``why``.
    A fit within the band is returned unchanged (a copy).
    """
    out = dict(fit)
    methods = {}
    for name, m in fit["methods"].items():
        m = dict(m)
        if misfit_ratio(m["loss_after"], floor) > MISFIT_FLOORS:
            m["table"] = {
                p: {
                    **row,
                    "half_width": float("nan"),
                    "identified": False,
                    "why": misfit_reason(m["loss_after"], floor, _finite(row["half_width"])),
                }
                for p, row in m["table"].items()
            }
        methods[name] = m
    out["methods"] = methods
    loss = fit["loss_after"]
    if misfit_ratio(loss, floor) <= MISFIT_FLOORS:
        return out
    why: dict[str, str] = {}
    identified: dict[str, dict[str, bool]] = {}
    intervals: dict[str, dict[str, float | None]] = {}
    for j, kinds in fit["intervals"].items():
        for k, h in kinds.items():
            identified.setdefault(j, {})[k] = False
            intervals.setdefault(j, {})[k] = None
            why[f"{j}.{k}"] = misfit_reason(loss, floor, h)
    out.update(identified=identified, intervals=intervals, why=why)
    return out


def _finite(v: Any) -> float | None:
    x = float(v)
    return x if x == x and abs(x) < float("inf") else None
