"""The latency branch: does the loop's end-to-end time fit in the simulated control period?

A simulator never notices how long an action took to arrive; on hardware that delay sits
inside the loop. The branch sums the logged stage durations per tick, holds the total's p95
against the control period the policy was simulated with, reads the action queue of
LeRobot's async client for starvation, and fits the added delay as the distribution to train
with (control period + exponential delay, rate fixed per episode, Peng et al. 2018).

Verdicts: ``implicated`` when the total's p95 exceeds the period (its whole bootstrap
interval above it) or the async client's queue runs dry; ``eliminated`` when the p95's
interval lies below the period over at least the recipe's episodes; ``inconclusive`` with too
few ticks or episodes, saying how many more are needed. "The period" is one control period
for a synchronous loop; for LeRobot's async serving (server logs) it is the queue's budget
``chunk_size_threshold x actions_per_chunk x dt`` (``latency_budget.async_budget``), the time
the queue lasts once the client sends an observation.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from simgap.branches.branch import Branch
from simgap.branches.context import Context, not_measured
from simgap.branches.latency_budget import BUDGET_RULE, Budget, async_budget
from simgap.branches.latency_verdict import judge
from simgap.evidence.lerobot import dataset_fps
from simgap.evidence.lerobot_logs import LeRobotLog, load_client_logs, load_server_logs
from simgap.evidence.timing import TimingLog, concat_stage_times, load_timing_logs
from simgap.figures.latency import LatencyDetails, LatencyFigures
from simgap.finding import Finding, Verdict
from simgap.latency.queue import ADVICE, QueueStats, queue_figures, queue_stats
from simgap.latency.stats import (
    N_BOOT,
    fit_added_delay,
    fraction_with_ci,
    make_bootstrap,
    percentiles,
)
from simgap.randomize import latency_entries
from simgap.report import plots_latency
from simgap.series import StageTimes
from simgap.validate import period_warnings

LEVEL = 0.95
PLOT_POINTS = 2000
"""The report's histogram: every total up to this many ticks, else this many quantiles."""
SECURITY_NOTE = (
    "LeRobot's async policy server speaks gRPC with no TLS and no authentication "
    "and unpickles every payload it receives, so anyone who reaches the port can "
    "run code next to a moving arm; segment the link"
)


def _is_loopback(address: str | None) -> bool:
    """Whether ``host[:port]`` names this host (localhost, 127.0.0.0/8, ::1)."""
    if not address:
        return True
    host = address.strip()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    if host.lower() in ("localhost", "ip6-localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _primary_times(
    timing: TimingLog | None,
    logs: Sequence[LeRobotLog],
) -> tuple[StageTimes | None, str]:
    if timing is not None:
        return timing.times, "timing log"
    server = [lg.server_stages for lg in logs if lg.server_stages is not None]
    if server:
        return concat_stage_times(server), "policy-server log"
    loops = [t for lg in logs if (t := lg.control_loop_times()) is not None]
    if loops:
        return concat_stage_times(loops), "robot-client log"
    return None, ""


def whole_second_stamps(t: np.ndarray) -> bool:
    """Whether tick times are stamps of one-second resolution (every finite one a whole
    number of seconds, as LeRobot's ``asctime`` log stamps are): intervals between them are
    0 or 1 s whatever the loop's rate, so none may be taken as a tick interval."""
    a = np.asarray(t, dtype=float)
    a = a[np.isfinite(a)]
    return a.size >= 2 and bool(np.all(a == np.floor(a)))


def _intervals(times: StageTimes) -> np.ndarray:
    """Tick-start intervals within episodes [s], NaN where steps are not consecutive."""
    n = times.n_ticks
    out = np.full(n, np.nan)
    if n < 2:
        return out
    dt = np.diff(times.t)
    ok = (np.diff(times.episode) == 0) & (np.diff(times.step) == 1) & (dt > 0)
    out[:-1][ok] = dt[ok]
    return out


def _stage_figures(times: StageTimes, total_sum: float, boot: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, arr in times.stages.items():
        p = percentiles(arr, boot, level=LEVEL)
        out[name] = {
            "p50_s": p.p50,
            "p95_s": p.p95,
            "p99_s": p.p99,
            "max_s": p.max,
            "p95_ci_s": list(p.ci["p95"]),
            "mean_s": p.mean,
            "share_fraction": float(np.nansum(arr) / total_sum) if total_sum else 0.0,
            "missing_ticks": int(np.count_nonzero(np.isnan(arr))),
        }
    return out


def _delay_figures(
    times: StageTimes, total: np.ndarray, control_dt_s: float, measured_intervals: bool
) -> tuple[dict[str, Any], np.ndarray]:
    """The added-delay fit: from tick intervals when the loop runs at the control period,
    else from the stage totals' excess over it."""
    source = "stage totals"
    delay = np.maximum(total - control_dt_s, 0.0)
    if measured_intervals:
        iv = _intervals(times)
        ivf = iv[np.isfinite(iv)]
        # A loop paced faster than the simulated period has no delay "over" it to measure.
        if ivf.size >= 2 and float(np.median(ivf)) >= 0.9 * control_dt_s:
            delay, source = iv - control_dt_s, "tick intervals"
    fit = fit_added_delay(delay, times.episode)
    finite = fit.rates_per_s[np.isfinite(fit.rates_per_s)]
    nan = float("nan")
    fig = {
        "model": "dt = control_dt_s + Exp(rate); rate fixed per episode, delay drawn per step",
        "base_s": control_dt_s,
        "rate_per_s_median": float(np.median(finite)) if finite.size else nan,
        "rate_per_s_min": float(finite.min()) if finite.size else nan,
        "rate_per_s_max": float(finite.max()) if finite.size else nan,
        "pooled_rate_per_s": fit.pooled_rate_per_s,
        "mean_delay_s_median": float(np.median(fit.mean_delay_s)) if fit.mean_delay_s.size else nan,
        "cv_median": float(np.nanmedian(fit.cv)) if np.isfinite(fit.cv).any() else nan,
        "episodes": int(fit.rates_per_s.size),
        "episodes_without_delay": int(np.count_nonzero(~np.isfinite(fit.rates_per_s))),
        "source": source,
    }
    return fig, fit.rates_per_s


def analyse(
    timing: TimingLog | None,
    logs: Sequence[LeRobotLog],
    control_dt_s: float,
    *,
    dataset_fps: float | None = None,
    policy_server: str | None = None,
    seed: int = 0,
) -> Finding:
    """The latency Finding from a timing log and/or LeRobot async logs.

    Args:
        timing: per-tick stage times from a timing log (preferred over the LeRobot logs).
        logs: LeRobot server and client logs (server stages are used without a timing log;
            client queue sizes always feed the starvation check).
        control_dt_s: the simulated control period [s].
        policy_server: the deployment's policy-server address (``host:port``).
        seed: seed of the bootstrap.
    """
    times, source = _primary_times(timing, logs)
    queue_logs = [lg for lg in logs if lg.queue_size.size]
    qs: QueueStats | None = None
    if queue_logs:
        server_mg = [lg.must_go for lg in logs if lg.must_go.size]
        qs = queue_stats(
            np.concatenate([lg.queue_size for lg in queue_logs]),
            np.concatenate([lg.queue_must_go for lg in queue_logs]),
            np.concatenate(server_mg) if server_mg else None,
        )
    if times is None and qs is None:
        return not_measured(SPEC, "Not measured: the logs given hold no per-tick timing.")
    warns = list(timing.warnings if timing else ()) + [w for lg in logs for w in lg.warnings]
    coarse = times is not None and whole_second_stamps(times.t)
    if coarse:  # LeRobot stamps its log lines to the second: no tick interval from them
        warns.append(
            f"tick_interval_not_measured: the {source}'s time stamps have one-second "
            "resolution (LeRobot writes asctime to the second), so no tick interval "
            "is computed from them and the control period is not checked against "
            "one; a timing log (simgap.LoopTimer) measures it"
        )
    elif times is not None:  # a control period in the wrong unit shows against the ticks
        warns += period_warnings(control_dt_s, tick_times_s=times.t, episodes=times.episode)
    if dataset_fps is not None:
        warns += period_warnings(control_dt_s, dataset_fps=dataset_fps)
    remote = not _is_loopback(policy_server)
    figures: dict[str, Any] = {
        "control_dt_s": control_dt_s,
        "source": source or "client queue",
        "tick_stamp_resolution_s": 1.0 if coarse else None,
    }
    details: dict[str, Any] = {"warnings": warns}
    if qs is not None:
        figures["queue"] = queue_figures(qs)
        sizes = np.concatenate([lg.queue_size for lg in queue_logs])
        step = max(1, sizes.size // 2000)
        details["queue_size"] = sizes[::step].tolist()
    verdict, summary, next_step = Verdict.INCONCLUSIVE, "", ""
    timing_verdict: Verdict | None = None
    if times is not None:
        budget = (
            async_budget(logs, control_dt_s)
            if source == "policy-server log"
            else Budget(mode="sync", budget_s=control_dt_s, dt_s=control_dt_s)
        )
        figures["budget"] = budget.figures()
        verdict, summary, next_step = _timing_part(
            times, source, control_dt_s, seed, figures, details, budget
        )
        summary += f" Rule: {BUDGET_RULE}."
        timing_verdict = verdict
        server_logs = [lg for lg in logs if lg.server_stages is not None]
        if server_logs:
            figures["filtered_observations"] = sum(lg.filtered for lg in server_logs)
            figures["sessions"] = sum(max(1, len(lg.sessions)) for lg in server_logs)
    one_way = np.concatenate([lg.one_way_latency_s for lg in logs]) if logs else np.array([])
    if one_way.size:
        net = figures.setdefault("network", {})
        net["one_way_p50_s"] = float(np.median(one_way))
        net["one_way_p95_s"] = float(np.quantile(one_way, 0.95))
    if qs is not None and qs.starved:
        extra = (
            f"The async client's action queue was empty at {qs.empty_fraction:.0%} of "
            f"{qs.sends} observation sends ({qs.must_go_count} must-go sends"
            + (", trending toward empty" if qs.trend_to_empty else "")
            + ")."
        )
        if timing_verdict is not None and timing_verdict is not Verdict.IMPLICATED:
            # the verdict follows from what was measured: the queue, not the timing
            summary = (
                f"{extra} Implicated by the action queue alone; the loop timing "
                f"gives no verdict of its own ({timing_verdict.value}): {summary}"
            )
        else:
            summary = (summary + " " + extra).strip()
        if verdict is not Verdict.IMPLICATED:
            verdict = Verdict.IMPLICATED
            next_step = ""
        next_step = (next_step + " " if next_step else "") + ADVICE[0].upper() + ADVICE[1:] + "."
    elif times is None:
        summary = (
            f"The async client's action queue stayed fed: empty at "
            f"{qs.empty_fraction:.0%} of {qs.sends} sends."
            if qs
            else ""
        )
        next_step = (
            "Log per-stage timings (simgap.LoopTimer, or the server's DEBUG lines) to "
            "hold the total against the control period."
        )
    figures["policy_server"] = policy_server
    figures["policy_server_remote"] = remote
    if remote:
        has_hop = "network" in figures.get("stages", {})
        summary += f" The policy server {policy_server} is not on this host; " + (
            "the logged network hop is part of the total."
            if has_hop
            else "no network stage was logged."
        )
        next_step += (
            f" {SECURITY_NOTE}, and re-measure latency with the hop to {policy_server} in the loop."
        )
    return Finding(
        branch="latency",
        verdict=verdict,
        title="Latency",
        figures=LatencyFigures.from_mapping(figures),
        summary=summary.strip(),
        next_step=next_step.strip(),
        key_figure="total_p95_s" if times is not None else None,
        details=LatencyDetails.from_mapping(details),
    )


def _timing_part(
    times: StageTimes,
    source: str,
    control_dt_s: float,
    seed: int,
    figures: dict[str, Any],
    details: dict[str, Any],
    budget: Budget,
) -> tuple[Verdict, str, str]:
    """Fill the per-tick figures and details; return the verdict, summary and next step.
    The total is held against ``budget`` (one period, or the async queue's budget)."""
    limit = budget.budget_s
    total = times.total()
    has_any = np.zeros(times.n_ticks, dtype=bool)
    for arr in times.stages.values():
        has_any |= np.isfinite(arr)
    total = np.where(has_any, total, np.nan)
    boot = make_bootstrap(times.episode, seed=seed)
    tp = percentiles(
        total, boot, level=LEVEL, grid=min(PLOT_POINTS, int(np.count_nonzero(np.isfinite(total))))
    )
    ok = np.isfinite(total)
    over, over_ci = fraction_with_ci(total[ok] > limit, replace(boot, cluster=boot.cluster[ok]))
    n = tp.n
    episodes = int(np.unique(times.episode[ok]).size)
    measured_iv = source == "timing log" and not whole_second_stamps(times.t)
    iv = _intervals(times) if measured_iv else np.full(times.n_ticks, np.nan)
    ivf = iv[np.isfinite(iv)]
    figures.update(
        {
            "total_p50_s": tp.p50,
            "total_p95_s": tp.p95,
            "total_p99_s": tp.p99,
            "total_max_s": tp.max,
            "total_mean_s": tp.mean,
            "total_p50_ci_s": list(tp.ci["p50"]),
            "total_p95_ci_s": list(tp.ci["p95"]),
            "total_p99_ci_s": list(tp.ci["p99"]),
            "margin_s": tp.p95 - limit,
            "margin_fraction": (tp.p95 - limit) / limit if limit > 0 else math.inf,
            "overrun_fraction": over,
            "overrun_ci_fraction": list(over_ci),
            "jitter_s": tp.std,
            "interval_p50_s": float(np.median(ivf)) if ivf.size else None,
            "interval_p95_s": float(np.quantile(ivf, 0.95)) if ivf.size else None,
            "interval_std_s": float(ivf.std()) if ivf.size > 1 else None,
            "ticks": n,
            "episodes": episodes,
            "stages": _stage_figures(times, float(np.nansum(total)), boot),
        }
    )
    figures["added_delay"], rates = _delay_figures(times, total, control_dt_s, measured_iv)
    details["rates_per_s"] = [float(r) for r in rates[:1000]]
    details["total_quantiles_s"] = list(tp.grid)
    if "network" in times.stages:
        net = times.stages["network"]
        figures["network"] = {
            "share_fraction": figures["stages"]["network"]["share_fraction"],
            "p50_s": figures["stages"]["network"]["p50_s"],
            "p95_s": figures["stages"]["network"]["p95_s"],
            "ticks": int(np.count_nonzero(np.isfinite(net))),
        }
    figures["bootstrap"] = {
        "replicates": N_BOOT,
        "unit": boot.unit,
        "clusters": boot.n_clusters,
        "seed": seed,
        "level": LEVEL,
    }
    return judge(figures, tp.ci["p95"], n, episodes, source, budget)


def assess(ctx: Context) -> list[Finding]:
    """The latency Finding for the rig: timing logs, else LeRobot logs; not_measured
    naming the evidence when the rig has none."""
    rig = ctx.rig
    ev = rig.evidence
    from simgap.branches import ros2_transport

    transport = ros2_transport.assess(ctx)  # ROS 2 bags: header stamps against log times
    if not (ev.timing_logs or ev.server_logs or ev.client_logs):
        return transport or [
            not_measured(
                SPEC,
                "Not measured: the rig names no timing log "
                "(evidence.timing_logs) and no LeRobot async log "
                "(evidence.server_logs / evidence.client_logs).",
            )
        ]
    timing = ctx.evidence.get("timing_logs", load_timing_logs)
    logs = ctx.evidence.get("server_logs", load_server_logs) + ctx.evidence.get(
        "client_logs", load_client_logs
    )
    dt = float(ctx.options.get("control_dt_s") or rig.control_dt_s)
    return [
        analyse(
            timing,
            logs,
            dt,
            policy_server=rig.deploy.policy_server,
            seed=ctx.seed,
            dataset_fps=dataset_fps(ev.dataset),
        )
    ] + transport


SPEC = Branch(
    name="latency",
    cost=1.0,
    needs=("evidence.timing_logs or evidence.client_logs/server_logs",),
    assess=assess,
    plots=lambda f: plots_latency.plots(f),  # looked up when drawn: a test may replace it
    randomization=latency_entries,
)
"""The latency branch's contract: its plots and its randomisation entries (the added
delay's rate, the control period)."""
