"""When SIMPLER's controller fit may state an interval: at a minimum, of a model that fits.

The pose fit's 95 % intervals are local: s^2 (J^T J)^-1 at the best gains, with every other
part of the model taken as true and the gains at a minimum of the squared residual. Two things
break that, and each withdraws every gain's interval, with the reason:

- **The model misses the data.** The replay has no command delay, no servo lag and no joint
  offsets, so on a rig that has them kp and kv absorb what the replay lacks: on the demo (a
  40 ms servo lag, a 67 ms loop) the fit settled at shoulder_pan kp 900 +- 8 N m/rad against a
  planted 499. Such an interval is tight around a wrong value; its width says how curved the
  misspecified loss is, not how far the true gain can be. A fit is trusted only with its pose
  loss within ``MISFIT_FLOORS`` noise floors, the band in which ``pose_fit.verdict_for`` calls
  the nominal gains a match.
- **The fit stopped on a slope.** Where a 5 % step of some gain lowers the squared residual by
  more than t^2 s^2 (``simgap.fit.search.assess``'s profile check), the search ended short of a
  minimum (the ladder's budget is small), and the intervals around that point, correlated with
  the gain still moving, describe no estimate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from simgap.fit.search import IDENTIFIED_REL_HALF_WIDTH, FitResult

MISFIT_FLOORS = 3.0
"""A fit explains the data when its pose loss is at most 3 noise floors (``verdict_for``'s
band for a match)."""


def misfit_ratio(loss: float, floor: float) -> float:
    """The pose loss in noise floors (inf when the floor is zero or not finite)."""
    return loss / floor if 0 < floor < float("inf") else float("inf")


def misfit_reason(loss: float, floor: float) -> str | None:
    """Why no gain of a fit with pose ``loss`` against its noise ``floor`` is identified, or
    None when the loss is within ``MISFIT_FLOORS`` floors."""
    ratio = misfit_ratio(loss, floor)
    if ratio <= MISFIT_FLOORS:
        return None
    return (
        f"the model misses the data by {ratio:.3g} x its noise floor (pose loss {loss:.3g} "
        f"against {floor:.3g}; a gain is identified only within {MISFIT_FLOORS:g} x): kp and "
        "kv absorb dynamics the replay lacks (command delay, servo lag, joint offsets)"
    )


def slope_reason(res: FitResult) -> str | None:
    """Why no gain of ``res`` is identified because the search ended on a slope, or None.

    The slope is read from the profile check of ``simgap.fit.search.assess``
    (``extra["profile_rise"]`` against ``extra["profile_threshold"]``).
    """
    rise = np.asarray(res.extra.get("profile_rise", ()), dtype=float)
    thr = float(res.extra.get("profile_threshold", np.nan))
    if rise.size == 0 or not np.isfinite(thr):
        return None
    k = int(np.argmin(rise))
    if -rise[k] <= thr:
        return None
    return (
        f"the fit stopped short of a minimum: a 5% step of {res.estimate.names[k]} lowers "
        f"the squared residual by {-rise[k]:.3g} > t^2 s^2 = {thr:.3g}, so the local "
        "intervals describe no estimate (refit with a larger budget: simgap controller)"
    )


def withdraw_table(
    table: Mapping[str, Mapping[str, Any]], reason: str
) -> dict[str, dict[str, Any]]:
    """A method's per-parameter rows with every interval withdrawn: not identified, NaN
    half-width (not stated), ``reason`` plus the withdrawn local half-width as the why."""
    return {
        p: {
            **row,
            "half_width": float("nan"),
            "identified": False,
            "why": reason + _local(row["half_width"]),
        }
        for p, row in table.items()
    }


def withdraw(fit: Mapping[str, Any], reason: str) -> dict[str, Any]:
    """``fit`` (``pose_fit.fit_controller``'s result) with every gain of the better method
    declared not identifiable for ``reason``: ``identified`` False, ``intervals`` None, and
    ``why`` naming the reason and the withdrawn local half-width."""
    out = dict(fit)
    identified: dict[str, dict[str, bool]] = {}
    intervals: dict[str, dict[str, float | None]] = {}
    why: dict[str, str] = {}
    for j, kinds in fit["intervals"].items():
        for k, h in kinds.items():
            identified.setdefault(j, {})[k] = False
            intervals.setdefault(j, {})[k] = None
            why[f"{j}.{k}"] = reason + _local(h)
    out.update(identified=identified, intervals=intervals, why=why)
    return out


def gate(fit: Mapping[str, Any], floor: float) -> dict[str, Any]:
    """``fit`` with the misfit gate applied: each method whose pose loss exceeds
    ``MISFIT_FLOORS`` x ``floor`` has its table withdrawn (``withdraw_table``), and the better
    method's gains too (``withdraw``) when its does. A fit within the band comes back as it
    was (a copy)."""
    out = dict(fit)
    methods = {}
    for name, m in fit["methods"].items():
        reason = misfit_reason(m["loss_after"], floor)
        methods[name] = m if reason is None else {**m, "table": withdraw_table(m["table"], reason)}
    out["methods"] = methods
    reason = misfit_reason(fit["loss_after"], floor)
    return out if reason is None else withdraw(out, reason)


def reach_nominal(
    fit: Mapping[str, Any], nominal: Mapping[str, Mapping[str, float]]
) -> dict[str, Any]:
    """``fit`` with each stated half-width made at least the distance from the value to the
    model's ``nominal`` {joint: {kind: value}}, for a fit whose NOMINAL gains already replay
    within ``MISFIT_FLOORS`` floors: the nominal is then as consistent with the data as the
    fit, and the replay's own mismatch (a fraction of the band) moves the gains further than
    their local intervals say (a healthy 100 fps bench, 8 s: shoulder_lift kp 988.8 +- 0.12
    against the true 998.2). A gain whose widened half-width exceeds
    ``IDENTIFIED_REL_HALF_WIDTH`` of its value is declared not identified. Each method's
    table gets the same (its rows carry their nominal)."""
    out = dict(fit)
    intervals = {j: dict(d) for j, d in fit["intervals"].items()}
    identified = {j: dict(d) for j, d in fit["identified"].items()}
    why = dict(fit["why"])
    for j, kinds in fit["params"].items():
        for k, v in kinds.items():
            h = intervals[j][k]
            if h is None or not identified[j][k]:
                continue
            h = max(float(h), abs(v - nominal[j][k]))
            intervals[j][k] = h
            if h > IDENTIFIED_REL_HALF_WIDTH * abs(v):
                identified[j][k] = False
                why[f"{j}.{k}"] = _nominal_why(nominal[j][k], h, v)
    methods = {}
    for name, m in fit["methods"].items():
        table = {}
        for pname, row in m["table"].items():
            h = _finite(row["half_width"])
            if h is not None and row["identified"]:
                h = max(h, abs(row["value"] - row["nominal"]))
                row = {**row, "half_width": h}
                if h > IDENTIFIED_REL_HALF_WIDTH * abs(row["value"]):
                    row["identified"] = False
                    row["why"] = _nominal_why(row["nominal"], h, row["value"])
            table[pname] = row
        methods[name] = {**m, "table": table}
    out.update(intervals=intervals, identified=identified, why=why, methods=methods)
    return out


def _nominal_why(nominal: float, h: float, value: float) -> str:
    return (
        f"the nominal {nominal:.4g} replays within {MISFIT_FLOORS:g} noise floors too, "
        f"{100 * h / abs(value):.0f}% of the value away"
    )


def _finite(v: Any) -> float | None:
    x = None if v is None else float(v)
    return x if x is not None and np.isfinite(x) else None


def _local(half_width: Any) -> str:
    h = _finite(half_width)
    if h is None:
        return ""
    return f"; its local 95 % half-width {h:.3g} is withdrawn"
