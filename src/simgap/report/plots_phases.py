"""Report plots of the failure-phase branch: failure phases, simulated against real."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simgap.report import svg


def phase_bars(comparison: Mapping[str, Any], phases: list[str]) -> str:
    """Grouped bars: the fraction of episodes that broke in each phase, sim vs real (empty
    when no episode broke)."""
    series: dict[str, Sequence[float]] = {}
    for name in ("sim", "real"):
        c = comparison.get(name)
        if c and c.get("n"):
            series[f"{name} (n={c['n']})"] = [c["by_phase"].get(ph, 0) / c["n"] for ph in phases]
    return svg.bars(phases, series, xlabel="phase the episode broke in",
                    ylabel="fraction of episodes",
                    title="Where episodes break: failure phase, sim vs real")


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one phases Finding (empty when it carries no comparison)."""
    figs = finding.get("figures") or {}
    cmp = figs.get("comparison")
    phases = (finding.get("details") or {}).get("phases")
    if not cmp or not phases:
        return []
    return [phase_bars(cmp, list(phases))]
