"""The latency branch's figures: the loop's per-tick total against the control period."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite, sig

_Interval = tuple[float, float]


@dataclass(frozen=True)
class Stage(Record):
    """One logged stage of the loop (camera, inference, network, ...), over every tick."""

    p50_s: float = figure("s", "median duration")
    p95_s: float = figure("s", "95th percentile")
    p99_s: float = figure("s", "99th percentile")
    max_s: float = figure("s", "longest")
    p95_ci_s: _Interval = figure("s", "the p95's bootstrap interval")
    mean_s: float = figure("s", "mean duration")
    share_fraction: float = figure(UNITLESS, "the stage's share of the summed totals")
    missing_ticks: int = figure(UNITLESS, "ticks where the stage was not logged")


@dataclass(frozen=True)
class Budget(Record):
    """The time one inference may take, and where each factor came from."""

    mode: str = figure(TEXT, "'sync' (one control period) or 'async' (LeRobot's queue)")
    budget_s: float = figure("s", "the budget the total is held against")
    dt_s: float = figure("s", "the control period")
    actions_per_chunk: int | None = figure(UNITLESS, "actions per chunk (async)")
    chunk_size_threshold: float | None = figure(UNITLESS, "the client's send threshold (async)")
    sources: Mapping[str, str] = figure(TEXT, "where each factor came from")
    rule: str = figure(TEXT, "the rule the budget follows")


@dataclass(frozen=True)
class Queue(Record):
    """LeRobot's async client: its action queue at each observation send."""

    sends: int = figure(UNITLESS, "observation sends logged")
    empty_fraction: float = figure(UNITLESS, "share of sends with an empty queue")
    must_go_count: int = figure(UNITLESS, "sends flagged must-go")
    mean_size: float = figure(UNITLESS, "mean queue size at a send [actions]")
    slope_per_send: float = figure(UNITLESS, "least-squares trend [actions per send]")
    trend_p_value: float = figure(UNITLESS, "two-sided p-value of that trend")
    first_quarter_mean: float = figure(UNITLESS, "mean size over the first quarter of sends")
    last_quarter_mean: float = figure(UNITLESS, "mean size over the last quarter of sends")
    trend_to_empty: bool = figure(TEXT, "the size falls significantly toward empty")
    starved: bool = figure(TEXT, "the queue ran dry often enough to starve the arm")
    server_must_go_fraction: float = figure(
        UNITLESS, "share of server inferences on a must-go observation (NaN without its log)"
    )


@dataclass(frozen=True)
class AddedDelay(Record):
    """The delay to train with: control period + an exponential delay, rate per episode."""

    model: str = figure(TEXT, "the distribution fitted")
    base_s: float = figure("s", "the control period the delay is added to")
    rate_per_s_median: float = figure("1/s", "median of the episodes' rates")
    rate_per_s_min: float = figure("1/s", "smallest episode rate")
    rate_per_s_max: float = figure("1/s", "largest episode rate")
    pooled_rate_per_s: float = figure("1/s", "the rate fitted to every tick at once")
    mean_delay_s_median: float = figure("s", "median of the episodes' mean added delay")
    cv_median: float = figure(UNITLESS, "median coefficient of variation (1 for exponential)")
    episodes: int = figure(UNITLESS, "episodes fitted")
    episodes_without_delay: int = figure(UNITLESS, "episodes with no delay over the period")
    source: str = figure(TEXT, "'tick intervals' or 'stage totals'")


@dataclass(frozen=True)
class Network(Record):
    """The network hop, where one was logged as a stage or as one-way latency."""

    share_fraction: float | None = figure(UNITLESS, "the hop's share of the total", default=None)
    p50_s: float | None = figure("s", "median hop duration", default=None)
    p95_s: float | None = figure("s", "95th percentile hop duration", default=None)
    ticks: int | None = figure(UNITLESS, "ticks with the hop logged", default=None)
    one_way_p50_s: float | None = figure("s", "median one-way latency (LeRobot logs)", default=None)
    one_way_p95_s: float | None = figure("s", "95th percentile one-way latency", default=None)


@dataclass(frozen=True)
class Bootstrap(Record):
    """How the intervals were drawn: resampling whole episodes."""

    replicates: int = figure(UNITLESS, "bootstrap replicates")
    unit: str = figure(TEXT, "what is resampled ('episodes' or 'ticks')")
    clusters: int = figure(UNITLESS, "clusters resampled")
    seed: int = figure(UNITLESS, "the bootstrap's seed")
    level: float = figure(UNITLESS, "the intervals' confidence level")


@dataclass(frozen=True)
class LatencyFigures(Record):
    """The loop's end-to-end time per tick, held against the control period (or the queue's
    budget), with the added delay to train with."""

    branch = "latency"

    control_dt_s: float = figure("s", "the simulated control period")
    source: str = figure(TEXT, "what was timed: timing log, policy-server log, client queue")
    tick_stamp_resolution_s: float | None = figure(
        "s", "the log's stamp resolution when too coarse to time ticks", default=None
    )
    policy_server: str | None = figure(TEXT, "the policy server's host:port", default=None)
    policy_server_remote: bool = figure(
        TEXT, "the policy server is not on this host", default=False
    )
    queue: Queue | None = figure(TEXT, "the async client's queue, when logged", default=None)
    budget: Budget | None = figure(TEXT, "the budget the total is held against", default=None)
    total_p50_s: float | None = figure("s", "median per-tick total", default=None)
    total_p95_s: float | None = figure("s", "95th percentile per-tick total", default=None)
    total_p99_s: float | None = figure("s", "99th percentile per-tick total", default=None)
    total_max_s: float | None = figure("s", "longest per-tick total", default=None)
    total_mean_s: float | None = figure("s", "mean per-tick total", default=None)
    total_p50_ci_s: _Interval | None = figure("s", "the median's interval", default=None)
    total_p95_ci_s: _Interval | None = figure("s", "the p95's interval", default=None)
    total_p99_ci_s: _Interval | None = figure("s", "the p99's interval", default=None)
    margin_s: float | None = figure("s", "p95 minus the budget (positive: over)", default=None)
    margin_fraction: float | None = figure(UNITLESS, "margin over the budget", default=None)
    overrun_fraction: float | None = figure(
        UNITLESS, "share of ticks over the budget", default=None
    )
    overrun_ci_fraction: _Interval | None = figure(UNITLESS, "that share's interval", default=None)
    jitter_s: float | None = figure("s", "standard deviation of the total", default=None)
    interval_p50_s: float | None = figure("s", "median tick interval", default=None)
    interval_p95_s: float | None = figure("s", "95th percentile tick interval", default=None)
    interval_std_s: float | None = figure(
        "s", "standard deviation of the tick interval", default=None
    )
    ticks: int | None = figure(UNITLESS, "ticks timed", default=None)
    episodes: int | None = figure(UNITLESS, "episodes timed", default=None)
    stages: Mapping[str, Stage] = figure(TEXT, "each logged stage", default_factory=dict)
    added_delay: AddedDelay | None = figure(TEXT, "the delay to train with", default=None)
    network: Network | None = figure(TEXT, "the network hop", default=None)
    bootstrap: Bootstrap | None = figure(TEXT, "how the intervals were drawn", default=None)
    filtered_observations: int | None = figure(
        UNITLESS, "observations the policy server filtered out", default=None
    )
    sessions: int | None = figure(UNITLESS, "policy-server sessions logged", default=None)

    def headline(self) -> Headline | None:
        """The loop's p95 against the control period, and the share of ticks over it."""
        p95, dt = finite(self.total_p95_s), finite(self.control_dt_s)
        if p95 is None or dt is None:
            return None
        over = finite(self.overrun_fraction)
        tail = f"; {sig(100 * over)}% of ticks overrun" if over is not None else ""
        return Headline(
            f"loop p95 {sig(p95 * 1e3)} ms against the control period {sig(dt * 1e3)} ms{tail}",
            p95 * 1e3,
            dt * 1e3,
        )


@dataclass(frozen=True)
class LatencyDetails(Record):
    """What the latency report plots."""

    branch = "latency"

    warnings: tuple[str, ...] = figure(TEXT, "warnings about the logs", default=())
    rates_per_s: tuple[float, ...] = figure("1/s", "each episode's added-delay rate", default=())
    total_quantiles_s: tuple[float, ...] = figure(
        "s", "the per-tick total (every tick, or evenly spaced quantiles)", default=()
    )
    queue_size: tuple[float, ...] = figure(UNITLESS, "the queue size at each send", default=())


@dataclass(frozen=True)
class TopicLatency(Record):
    """One bag topic's transport latency: log time minus header stamp."""

    bag: str = figure(TEXT, "the bag")
    topic: str = figure(TEXT, "the topic")
    messages: int = figure(UNITLESS, "messages with a header stamp")
    p50_s: float = figure("s", "median latency")
    p95_s: float = figure("s", "95th percentile latency")
    min_s: float = figure("s", "smallest latency (negative: the clocks disagree)")
    max_s: float = figure("s", "largest latency")
    clocks_disagree: bool = figure(TEXT, "a message was logged before its stamp")


@dataclass(frozen=True)
class TransportFigures(Record):
    """ROS 2 transport: how old a state is when the recorder (and the policy) gets it."""

    branch = "latency"
    kind = "transport"

    transport_p95_s: float = figure("s", "the worst topic's 95th percentile latency")
    transport_p50_s: float = figure("s", "the worst topic's median latency")
    topic: str = figure(TEXT, "the worst topic")
    bag: str = figure(TEXT, "the bag it was recorded in")
    control_dt_s: float = figure("s", "the control period")
    per_bag: tuple[TopicLatency, ...] = figure(TEXT, "every bag's topics")
