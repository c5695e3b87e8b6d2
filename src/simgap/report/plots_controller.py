"""Report plots of the controller branch: fitted vs nominal gains, and the end-effector
translation error over the first episode before and after the fit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report.svg import bars, lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """Bars of kp and kv (fitted / nominal) per joint; the error trace."""
    d = finding.get("details") or {}
    out = []
    methods = d.get("methods") or {}
    best = methods.get(d.get("best", ""), {})
    table = best.get("table") or {}
    for kind in ("kp", "kv"):
        rows = {n.rsplit(".", 1)[0]: r for n, r in table.items() if n.endswith("." + kind)}
        if rows:
            out.append(bars(list(rows), {"nominal": [r["nominal"] for r in rows.values()],
                                         "fitted": [r["value"] for r in rows.values()]},
                            ylabel=kind, title=f"Position-actuator {kind} per joint"))
    tr = d.get("traces") or {}
    if tr.get("t"):
        out.append(lines(tr["t"], {"nominal gains": tr["before_m"],
                                   "fitted gains": tr["after_m"]}, xlabel="t [s]",
                         ylabel="m", title="End-effector translation error, episode 1"))
    return out
