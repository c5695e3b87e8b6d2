"""The loop's time per tick beside the recording, and the latency finding at each episode's
slowest overrunning tick.

The latency finding carries quantiles, not ticks; the ticks are in the rig's timing logs
(``evidence.timing_logs``), one per control step. A step is a frame of the recording only by
one rule simgap checks: the log's episode has exactly as many ticks as the recording's
episode has frames, numbered 0 to T-1 (LeRobot's record loop writes one frame a tick). An
episode that fails the rule gets no latency layer, and its latency finding stays at the first
frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from simgap.figures.latency import LatencyFigures
from simgap.finding import figures_of
from simgap.report.rerun_findings import FindingMark
from simgap.rig import Rig


def budget_s(rig: Rig, findings: Sequence[Mapping[str, Any]]) -> float:
    """The time a tick may take [s]: the latency finding's budget, else the control period."""
    for f in findings:
        if f.get("branch") != "latency" or f.get("kind"):
            continue
        budget = figures_of(f, LatencyFigures).budget
        if budget is not None and math.isfinite(budget.budget_s):
            return budget.budget_s
    return float(rig.control_dt_s)


def tick_totals(rig: Rig, frames: Mapping[int, int]) -> dict[int, np.ndarray]:
    """Per episode (of ``frames``: episode -> frame count), each row's tick total [s], where
    the timing log's episode passes the module's rule."""
    from simgap.evidence.timing import load_timing_logs

    log = load_timing_logs(rig)
    if log is None:
        return {}
    times = log.times
    total = times.total()
    out = {}
    for e, n in frames.items():
        sel = np.flatnonzero(times.episode == e)
        steps = times.step[sel]
        if sel.size != n or not np.array_equal(np.sort(steps), np.arange(n)):
            continue
        out[e] = total[sel][np.argsort(steps)]
    return out


def latency_marks(
    findings: Sequence[Mapping[str, Any]], totals: Mapping[int, np.ndarray], budget: float
) -> list[FindingMark]:
    """The latency finding at each episode's slowest tick, when that tick overran."""
    i = next((k for k, f in enumerate(findings) if f.get("branch") == "latency"), None)
    if i is None:
        return []
    out = []
    for e, tot in totals.items():
        if not np.isfinite(tot).any():
            continue
        k = int(np.nanargmax(tot))
        if tot[k] > budget:
            over = int(np.sum(tot > budget))
            out.append(
                FindingMark(
                    i,
                    e,
                    k,
                    None,
                    (
                        f"this episode's slowest tick, {tot[k] * 1e3:.1f} ms against the "
                        f"{budget * 1e3:.1f} ms budget ({over} of {tot.size} ticks overran)"
                    ),
                )
            )
    return out


def with_latency(
    rig: Rig, layers: Sequence[Any], findings: Sequence[Mapping[str, Any]]
) -> tuple[list[Any], list[FindingMark]]:
    """``layers`` (``EpisodeLayers``) with each tick's total and the budget added where the
    rule holds, and the latency finding's marks."""
    totals = tick_totals(rig, {lay.episode: lay.frame_index.size for lay in layers})
    budget = budget_s(rig, findings)
    out = [
        replace(lay, tick_total_s=totals[lay.episode], budget_s=budget)
        if lay.episode in totals
        else lay
        for lay in layers
    ]
    return out, latency_marks(findings, totals, budget)
