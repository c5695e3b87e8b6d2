"""Report plots of the latency branch: the per-tick total against the control period, the
per-stage p50/p95, and the async client's action queue over time when it was logged."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simgap.report import svg


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and math.isfinite(v)


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets (inline SVG) for one latency finding (its JSON form)."""
    fig = finding.get("figures") or {}
    det = finding.get("details") or {}
    out: list[str] = []
    dt = _ms(fig.get("control_dt_s")) / 1e3
    qs = det.get("total_quantiles_s") or []
    if qs and math.isfinite(dt):
        # Every total (sorted) up to 2000 ticks; beyond, quantiles at equal probability steps,
        # whose histogram has the shape of the density.
        n_ticks = fig.get("ticks")
        ylabel_note = "" if not isinstance(n_ticks, int) or n_ticks <= len(qs) else (
            f" (shape from {len(qs)} quantiles of {n_ticks} ticks)")
        vlines = [(dt * 1e3, f"control period {dt * 1e3:.1f} ms")]
        if _finite(fig.get("total_p95_s")):
            vlines.append((float(fig["total_p95_s"]) * 1e3,
                           f"p95 {float(fig['total_p95_s']) * 1e3:.1f} ms"))
        out.append(svg.histogram([float(v) * 1e3 for v in qs if _finite(v)], bins=40,
                                 xlabel=f"per-tick total [ms]{ylabel_note}", vlines=vlines,
                                 title="Per-tick total against the control period"))
    stages = fig.get("stages") or {}
    if stages:
        names = list(stages)
        out.append(svg.bars(
            names, {"p50": [_ms(stages[n].get("p50_s")) for n in names],
                    "p95": [_ms(stages[n].get("p95_s")) for n in names]},
            ylabel="ms", title="Per-stage p50 and p95",
            hline=(dt * 1e3, "control period") if math.isfinite(dt) else None))
    q = det.get("queue_size") or []
    if q:
        out.append(svg.lines(list(range(len(q))), {"queue size": [float(v) for v in q]},
                             xlabel="observation send", ylabel="actions in queue",
                             title="Action queue at each observation send"))
    return out


def _ms(v: Any) -> float:
    return float(v) * 1e3 if _finite(v) else float("nan")
