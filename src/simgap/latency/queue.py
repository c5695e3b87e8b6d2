"""Action-queue starvation, read from LeRobot's async client: does the queue run dry?

The client logs ``QUEUE SIZE: n (Must go: b)`` at every observation it sends. A queue that
is often empty, or trends toward empty over the run, means inference cannot keep up with the
client's fps: the robot idles at chunk boundaries (a stutter) whatever the policy's quality.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

STARVED_EMPTY_FRACTION = 0.05
"""A queue empty at this share of sends or more is starved."""
TREND_P_VALUE = 0.01
"""A falling trend counts when its slope's p-value is below this."""
ADVICE = (
    "the action queue runs dry: lower the client's fps until it stops emptying, serve "
    "with real-time chunking (LeRobot's rtc backend generates the next chunk while the "
    "current one executes), or randomise action timing in training"
)


@dataclass(frozen=True)
class QueueStats:
    """The action queue at each observation send.

    Attributes:
        sends: observation sends logged.
        empty_fraction: share of sends with an empty queue.
        must_go_count: sends flagged must-go (the queue ran dry after a chunk arrived).
        mean_size: mean queue size at a send [actions].
        slope_per_send: least-squares trend of the size [actions per send].
        trend_p_value: two-sided p-value of that slope (NaN with < 3 sends).
        first_quarter_mean: mean size over the first quarter of sends [actions].
        last_quarter_mean: mean size over the last quarter [actions].
        trend_to_empty: the size falls significantly (p < ``TREND_P_VALUE``) and its fitted
            line reaches empty before the run is a quarter longer (or the last quarter
            averages under one action).
        starved: empty at ``STARVED_EMPTY_FRACTION`` of sends or more, or trending to empty.
        server_must_go_fraction: share of server inferences run on a must-go observation
            (NaN without a server log); near 1, the server only infers once the queue is dry.
    """

    sends: int
    empty_fraction: float
    must_go_count: int
    mean_size: float
    slope_per_send: float
    trend_p_value: float
    first_quarter_mean: float
    last_quarter_mean: float
    trend_to_empty: bool
    starved: bool
    server_must_go_fraction: float = float("nan")


def queue_stats(
    sizes: np.ndarray, must_go: np.ndarray, server_must_go: np.ndarray | None = None
) -> QueueStats:
    """Starvation statistics of the queue sizes logged at each send.

    Args:
        sizes: queue size at each send [actions], shape (Q,), in log order.
        must_go: the must-go flag of each send, shape (Q,).
        server_must_go: the must-go flag of each server inference, shape (I,), optional.
    """
    q = np.asarray(sizes, dtype=float)
    mg = np.asarray(must_go, dtype=bool)
    n = int(q.size)
    smg = float("nan")
    if server_must_go is not None and np.asarray(server_must_go).size:
        smg = float(np.mean(np.asarray(server_must_go, dtype=bool)))
    if n == 0:
        nan = float("nan")
        return QueueStats(0, nan, 0, nan, nan, nan, nan, nan, False, False, smg)
    empty = float(np.mean(q == 0))
    quarter = max(1, n // 4)
    first, last = float(q[:quarter].mean()), float(q[-quarter:].mean())
    if n >= 3 and np.ptp(q) > 0:
        fit = stats.linregress(np.arange(n, dtype=float), q)
        slope, p = float(fit.slope), float(fit.pvalue)
        projected = float(fit.intercept + fit.slope * 1.25 * n)
    else:
        slope, p, projected = 0.0, float("nan"), float(q[-1])
    to_empty = bool(
        slope < 0 and np.isfinite(p) and p < TREND_P_VALUE and (projected <= 0.0 or last < 1.0)
    )
    return QueueStats(
        sends=n,
        empty_fraction=empty,
        must_go_count=int(mg.sum()),
        mean_size=float(q.mean()),
        slope_per_send=slope,
        trend_p_value=p,
        first_quarter_mean=first,
        last_quarter_mean=last,
        trend_to_empty=to_empty,
        starved=bool(empty >= STARVED_EMPTY_FRACTION or to_empty),
        server_must_go_fraction=smg,
    )


def queue_figures(qs: QueueStats) -> dict[str, object]:
    """The queue's figures for a Finding."""
    return {
        "sends": qs.sends,
        "empty_fraction": qs.empty_fraction,
        "must_go_count": qs.must_go_count,
        "mean_size": qs.mean_size,
        "slope_per_send": qs.slope_per_send,
        "trend_p_value": qs.trend_p_value,
        "first_quarter_mean": qs.first_quarter_mean,
        "last_quarter_mean": qs.last_quarter_mean,
        "trend_to_empty": qs.trend_to_empty,
        "starved": qs.starved,
        "server_must_go_fraction": qs.server_must_go_fraction,
    }
