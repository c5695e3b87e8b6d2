"""Plots of the plumbing audit's findings for the HTML report (inline SVG)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report.svg import bars


def plots(finding: Mapping[str, Any]) -> list[str]:
    """Bars for the torque-on jump (per joint, degrees) and the temperature drift (per motor),
    when any is nonzero; nothing for the other checks, whose figures are a few numbers."""
    figs = finding.get("figures") or {}
    title = str(finding.get("title", ""))
    out: list[str] = []
    if title.startswith("Torque on") and isinstance(figs.get("distance_deg"), Mapping):
        d = figs["distance_deg"]
        out.append(bars(list(d), {"goal - present": [float(v) for v in d.values()]},
                        xlabel="joint", ylabel="distance to goal [deg]",
                        title="Distance to the goal when torque came on"))
    if title.startswith("Motor temperature") and isinstance(figs.get("drift_c"), Mapping):
        d = figs["drift_c"]
        out.append(bars(list(d), {"last - first episode": [float(v) for v in d.values()]},
                        xlabel="motor", ylabel="temperature drift [C]",
                        title="Temperature drift across episodes"))
    return [p for p in out if p]  # an empty plot is never drawn
