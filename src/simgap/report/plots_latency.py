"""Report plots of the latency branch: the distribution of the per-tick total (ECDF) with the
control period drawn on it, the per-stage p50 and p95 stacked against the control period, and
the async client's action queue over time when it was logged."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from simgap.figures.latency import LatencyDetails, LatencyFigures
from simgap.finding import details_of, figures_of
from simgap.report.svg.bars import stacked_bars
from simgap.report.svg.distribution import ecdf
from simgap.report.svg.lines import lines
from simgap.report.svg.scale import fmt


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _ms(v: Any) -> float:
    return float(v) * 1e3 if _finite(v) else float("nan")


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets (inline SVG) for one latency finding (its JSON form)."""
    if finding.get("kind"):
        return []
    fig = figures_of(finding, LatencyFigures)
    det = details_of(finding, LatencyDetails)
    out: list[str] = []
    dt_ms = _ms(fig.control_dt_s)
    qs = [float(v) * 1e3 for v in det.total_quantiles_s if _finite(v)]
    if qs:
        n_ticks = fig.ticks
        note = (
            ""
            if not isinstance(n_ticks, int) or n_ticks <= len(qs)
            else (f", from {len(qs)} quantiles of {n_ticks} ticks")
        )
        vlines = [(dt_ms, f"control period {fmt(dt_ms)} ms")] if math.isfinite(dt_ms) else []
        out.append(
            ecdf(
                qs,
                xlabel=f"per-tick total [ms]{note}",
                vlines=vlines,
                title="Per-tick loop total against the control period",
            )
        )
    if fig.stages:
        names = list(fig.stages)
        out.append(
            stacked_bars(
                ["p50", "p95"],
                {n: [_ms(fig.stages[n].p50_s), _ms(fig.stages[n].p95_s)] for n in names},
                xlabel="percentile of each stage (sum in brackets)",
                ylabel="duration [ms]",
                title="Per-stage p50 and p95, stacked",
                hline=(dt_ms, f"control period {fmt(dt_ms)} ms") if math.isfinite(dt_ms) else None,
            )
        )
    if det.queue_size:
        out.append(
            lines(
                list(range(len(det.queue_size))),
                {"queue size": [float(v) for v in det.queue_size]},
                xlabel="observation send",
                ylabel="actions in queue",
                title="Action queue at each observation send",
            )
        )
    return out
