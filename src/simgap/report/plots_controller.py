"""Report plots of the controller branch: the end-effector translation error over the first
episode before and after the fit, and fitted against nominal gains per joint (identified
gains only: a gain the data cannot pin is not drawn as a number)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report.svg import bars, lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """The error trace; bars of kp and kv (fitted / nominal) per identified joint."""
    d = finding.get("details") or {}
    out = []
    tr = d.get("traces") or {}
    if tr.get("t"):
        out.append(lines(tr["t"], {"nominal gains": tr["before_m"],
                                   "fitted gains": tr["after_m"]}, xlabel="time [s]",
                         ylabel="EE translation error [m]",
                         title="End-effector translation error, episode 1"))
    methods = d.get("methods") or {}
    best = methods.get(d.get("best", ""), {})
    table = best.get("table") or {}
    identified = d.get("identified") or {}
    for kind in ("kp", "kv"):
        rows = {n.rsplit(".", 1)[0]: r for n, r in table.items() if n.endswith("." + kind)
                and (identified.get(n.rsplit(".", 1)[0]) or {}).get(kind, True)}
        if rows:
            out.append(bars(list(rows), {"nominal": [r["nominal"] for r in rows.values()],
                                         "fitted": [r["value"] for r in rows.values()]},
                            xlabel="joint (identified gains only)", ylabel=f"{kind} [model units]",
                            title=f"Position-actuator {kind} per joint"))
    return out
