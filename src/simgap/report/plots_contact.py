"""Report plots of the contact branch: each 1-D sweep curve (RMS object error vs value)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report.svg import lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """One line plot per sweep in ``details.sweeps``."""
    out = []
    sweeps = (finding.get("details") or {}).get("sweeps") or {}
    for name, c in sweeps.items():
        if not c or "values" not in c or "loss" not in c or not c["values"]:
            continue
        if c["values"] and isinstance(c["values"][0], list):
            continue  # a forced 2-D grid is not drawn: it cannot be read
        out.append(lines(c["values"], {"RMS object error [m]": c["loss"]},
                         xlabel=f"{c.get('name', name)} (nominal {c.get('nominal', 0):.3g})",
                         ylabel="m", title=f"Sweep of {name}"))
    return out
