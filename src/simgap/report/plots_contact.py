"""Report plots of the contact branch: each 1-D sweep curve (RMS object error vs value)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.report.svg import lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """One line plot per sweep in ``details.sweeps``."""
    out = []
    sweeps = (finding.get("details") or {}).get("sweeps") or {}
    noise = (finding.get("figures") or {}).get("object_noise_m")
    for name, c in sweeps.items():
        if not c or "values" not in c or "loss" not in c or not c["values"]:
            continue
        if isinstance(c["values"][0], list):
            continue  # a forced 2-D grid is not drawn: it cannot be read
        label = str(c.get("name", name))
        series = {"RMS object error": c["loss"]}
        if isinstance(noise, (int, float)) and noise > 0:
            series["object-tracking noise"] = [float(noise)] * len(c["loss"])
        out.append(lines(c["values"], series,
                         xlabel=f"{label} (nominal {c.get('nominal', 0):.3g})",
                         ylabel="RMS object error [m]", title=f"Sweep of {label}"))
    return out
