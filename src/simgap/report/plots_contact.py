"""Report plots of the contact branch: each 1-D sweep curve (RMS object error vs value)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.figures.base import finite
from simgap.figures.contact import ContactDetails, ContactFigures
from simgap.finding import details_of, figures_of
from simgap.report.svg.lines import lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """One line plot per sweep in ``details.sweeps``."""
    out = []
    sweeps = details_of(finding, ContactDetails).sweeps
    noise = finite(figures_of(finding, ContactFigures).object_noise_m)
    for name, c in sweeps.items():
        if not c.values or not c.loss:
            continue
        if isinstance(c.values[0], tuple):
            continue  # a forced 2-D grid is not drawn: it cannot be read
        label = c.name or name
        series: dict[str, Any] = {"RMS object error": list(c.loss)}
        if noise is not None and noise > 0:
            series["object-tracking noise"] = [noise] * len(c.loss)
        nominal = finite(c.nominal) or 0.0
        out.append(
            lines(
                list(c.values),
                series,
                xlabel=f"{label} (nominal {nominal:.3g})",
                ylabel="RMS object error [m]",
                title=f"Sweep of {label}",
            )
        )
    return out
