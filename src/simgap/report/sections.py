"""Each branch's report plots, by branch name: the report's one list of them.

A branch's plots take its finding's JSON form and return HTML snippets (inline SVG or PNG),
most telling first; an empty string is dropped. A branch without an entry has no plots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from simgap.report import (
    plots_actuator,
    plots_appearance,
    plots_body,
    plots_contact,
    plots_controller,
    plots_envelope,
    plots_latency,
    plots_phases,
    plots_plumbing,
)

Plots = Callable[[Mapping[str, Any]], list[str]]

PLOTS: Mapping[str, Plots] = {
    "actuator": lambda f: plots_actuator.plots(f),
    "appearance": lambda f: plots_appearance.plots(f),
    "body": lambda f: plots_body.plots(f),
    "contact": lambda f: plots_contact.plots(f),
    "controller": lambda f: plots_controller.plots(f),
    "envelope": lambda f: plots_envelope.plots(f),
    "latency": lambda f: plots_latency.plots(f),
    "phases": lambda f: plots_phases.plots(f),
    "plumbing": lambda f: plots_plumbing.plots(f),
}
"""Branch name -> its plots (looked up at call time, so a test may replace a module's)."""


def branch_plots(finding: Mapping[str, Any]) -> list[str]:
    """The plots of one finding (its JSON form): its branch's, or none."""
    plots = PLOTS.get(str(finding.get("branch", "")))
    return [] if plots is None else [p for p in plots(finding) if p]
