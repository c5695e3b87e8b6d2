"""Report plots of the body branch: joint zero offsets with their 95% intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.figures.base import finite
from simgap.figures.body import ZeroOffsetsDetails
from simgap.finding import details_of
from simgap.report.svg.intervals import intervals


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one body finding."""
    details = details_of(finding, ZeroOffsetsDetails)
    offsets = details.offsets_deg
    if not offsets:
        return []
    names = list(offsets)
    bounds: list[tuple[float, float] | None] = []
    for n in names:
        h = finite(details.ci95_deg.get(n))
        bounds.append((offsets[n] - h, offsets[n] + h) if h is not None else None)
    return [
        intervals(
            names,
            [offsets[n] for n in names],
            bounds,
            xlabel="joint",
            ylabel="zero offset [deg]",
            title="Joint zero offsets (95% interval)",
            hline=(0.0, "no offset"),
        )
    ]
