"""Report plots of the body branch: joint zero offsets with their 95% intervals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report import svg


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one body finding."""
    details = finding.get("details") or {}
    offsets = details.get("offsets_deg")
    if not offsets:
        return []
    ci = details.get("ci95_deg") or {}
    names = list(offsets)
    bounds: list[tuple[float, float] | None] = []
    for n in names:
        h = ci.get(n)
        bounds.append((float(offsets[n]) - float(h), float(offsets[n]) + float(h))
                      if isinstance(h, (int, float)) else None)
    return [svg.intervals(names, [float(offsets[n]) for n in names], bounds, xlabel="joint",
                          ylabel="zero offset [deg]",
                          title="Joint zero offsets (95% interval)", hline=(0.0, "no offset"))]
