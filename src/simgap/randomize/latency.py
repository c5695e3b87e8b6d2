"""The latency branch's randomisation entries: the added delay's rate and the control period."""

from __future__ import annotations

from simgap.figures.base import finite
from simgap.figures.latency import LatencyFigures
from simgap.randomize.draft import PENG_TABLE, Draft, measured_finding
from simgap.values.randomization import Entry


def latency_entries(draft: Draft) -> list[Entry]:
    """The latency branch's entries: the added delay's rate range (measured, or Peng et al.'s
    default) and the control period it is added to (pinned, where measured)."""
    found = measured_finding(draft.diagnosis, "latency")
    fig = found.typed(LatencyFigures) if found is not None else None
    dt = finite(fig.control_dt_s) if fig else None
    out: list[Entry] = []
    delay = fig.added_delay if fig else None
    lo = finite(delay.rate_per_s_min) if delay else None
    hi = finite(delay.rate_per_s_max) if delay else None
    if lo is not None and hi is not None and 0 < lo <= hi:
        out.append(
            Entry(
                "action_delay_rate_per_s",
                "range",
                "measured",
                low=lo,
                high=hi,
                resample="episode",
                note="rate of the exponential added delay, fixed per episode; the "
                "delay itself is redrawn every step. Range = the fitted range "
                "of the latency finding (figures.added_delay).",
            )
        )
    else:
        lo, hi = PENG_TABLE["action_delay_rate_per_s"]
        out.append(
            Entry(
                "action_delay_rate_per_s",
                "range",
                "defaulted",
                low=lo,
                high=hi,
                note="no latency fit: Peng et al. 2018 Table I default (mean added "
                "delay 1 to 8 ms); measure the loop and replace it.",
            )
        )
    if dt is not None:
        out.append(
            Entry(
                "control_dt_s",
                "pinned",
                "measured",
                value=dt,
                note="the control period the delay is added to",
            )
        )
    return out
