"""Report plots of the actuator branch: each joint's ladder (train and held-out MAE of every
rung against the noise floor), and the held-out error of the selected rung per log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from simgap.report import svg


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets (inline SVG) for one actuator finding (its ``to_dict`` form)."""
    details = finding.get("details") or {}
    joints = details.get("joints") or {}
    floor = details.get("noise_floor_rad")
    out: list[str] = []
    for name, j in joints.items():
        rungs = j.get("rungs") or []
        if not rungs:
            continue
        labels = [str(r["model"]) for r in rungs]
        series: dict[str, Sequence[float]] = {"train": [float(r["train_mae_rad"]) for r in rungs],
                  "held-out": [float(r["validation_mae_rad"]) for r in rungs]}
        hline = (float(floor), f"noise floor {float(floor):.2g} rad") if floor else None
        out.append(svg.bars(labels, series, ylabel="MAE [rad]", hline=hline,
                            title=f"{name}: actuator ladder (selected {j.get('selected')})"))
        sel = next((r for r in rungs if r["model"] == j.get("selected")), None)
        per = (sel or {}).get("validation_per_log_rad") or []
        if len(per) > 1:
            out.append(svg.bars([str(i) for i in range(len(per))],
                                _one(str(j.get("selected")), [float(v) for v in per]),
                                ylabel="held-out MAE [rad]",
                                title=f"{name}: held-out error per trajectory"))
    return out


def _one(name: str, values: Sequence[float]) -> dict[str, Sequence[float]]:
    return {name: values}
