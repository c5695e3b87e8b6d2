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
    return [svg.bars(names, {"|offset| [deg]": [abs(float(offsets[n])) for n in names],
                             "95% half-width [deg]": [float(ci.get(n, 0.0)) for n in names]},
                     ylabel="deg", title="Joint zero offsets")]
