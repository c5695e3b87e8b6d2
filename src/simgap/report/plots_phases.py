"""Report plots of the failure-phase branch: failure phases, simulated against real."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simgap.figures.phases import PhaseComparison, PhasesDetails, PhasesFigures
from simgap.finding import details_of, figures_of
from simgap.report.svg.bars import bars


def phase_bars(comparison: PhaseComparison, phases: list[str]) -> str:
    """Grouped bars: the fraction of episodes that broke in each phase, sim vs real (empty
    when no episode broke)."""
    series: dict[str, Sequence[float]] = {}
    for name, c in (("sim", comparison.sim), ("real", comparison.real)):
        if c is not None and c.n:
            series[f"{name} (n={c.n})"] = [c.by_phase.get(ph, 0) / c.n for ph in phases]
    return bars(
        phases,
        series,
        xlabel="phase the episode broke in",
        ylabel="fraction of episodes",
        title="Where episodes break: failure phase, sim vs real",
    )


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one phases Finding (empty when it carries no comparison)."""
    if not finding.get("figures") or not finding.get("details"):
        return []
    phases = details_of(finding, PhasesDetails).phases
    if not phases:
        return []
    return [phase_bars(figures_of(finding, PhasesFigures).comparison, list(phases))]
