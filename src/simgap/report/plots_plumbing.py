"""Plots of the plumbing audit's findings for the HTML report (inline SVG)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.figures.plumbing import TemperatureDriftFigures, TorqueJumpFigures
from simgap.finding import figures_of
from simgap.report.svg.bars import bars


def plots(finding: Mapping[str, Any]) -> list[str]:
    """Bars for the torque-on jump (per joint, degrees) and the temperature drift (per motor),
    when any is nonzero; nothing for the other checks, whose figures are a few numbers."""
    kind = finding.get("kind")
    out: list[str] = []
    if kind == TorqueJumpFigures.kind:
        d = figures_of(finding, TorqueJumpFigures).distance_deg
        out.append(
            bars(
                list(d),
                {"goal - present": [float(v) for v in d.values()]},
                xlabel="joint",
                ylabel="distance to goal [deg]",
                title="Distance to the goal when torque came on",
            )
        )
    if kind == TemperatureDriftFigures.kind:
        d = figures_of(finding, TemperatureDriftFigures).drift_c
        out.append(
            bars(
                list(d),
                {"last - first episode": [float(v) for v in d.values()]},
                xlabel="motor",
                ylabel="temperature drift [C]",
                title="Temperature drift across episodes",
            )
        )
    return [p for p in out if p]  # an empty plot is never drawn
