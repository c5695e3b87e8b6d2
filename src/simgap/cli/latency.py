"""``simgap latency``: the latency branch on timing logs or LeRobot async logs."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from simgap.cli._app import app, console, handles_errors, json_target, write_json
from simgap.errors import InputError
from simgap.figures.latency import LatencyDetails, LatencyFigures
from simgap.finding import details_of, figures_of

_COLORS = {
    "implicated": "red",
    "eliminated": "green",
    "inconclusive": "yellow",
    "not_measured": "dim",
}


def _ms(v: Any) -> str:
    return f"{v * 1e3:.2f}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _pct(v: Any) -> str:
    return f"{v:.0%}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _g(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _print(d: dict[str, Any]) -> None:
    fig = figures_of(d, LatencyFigures)
    if fig.stages:
        table = Table(
            title=f"latency vs control period {_ms(fig.control_dt_s)} ms "
            f"({fig.ticks} ticks, {fig.episodes} episodes)"
        )
        for col in ("stage", "p50 ms", "p95 ms", "p95 95% interval", "p99 ms", "max ms", "share"):
            table.add_column(col, justify="left" if col == "stage" else "right")
        for name, s in fig.stages.items():
            lo, hi = s.p95_ci_s
            table.add_row(
                escape(name),
                _ms(s.p50_s),
                _ms(s.p95_s),
                f"[{_ms(lo)}, {_ms(hi)}]",
                _ms(s.p99_s),
                _ms(s.max_s),
                _pct(s.share_fraction),
            )
        lo, hi = fig.total_p95_ci_s or (math.nan, math.nan)
        table.add_row(
            "[bold]total[/bold]",
            _ms(fig.total_p50_s),
            _ms(fig.total_p95_s),
            f"[{_ms(lo)}, {_ms(hi)}]",
            _ms(fig.total_p99_s),
            _ms(fig.total_max_s),
            "100%",
        )
        console.print(table)
        ad = fig.added_delay
        delay = (
            f"added delay Exp(rate): rate median {_g(ad.rate_per_s_median)} /s, "
            f"range [{_g(ad.rate_per_s_min)}, {_g(ad.rate_per_s_max)}] over "
            f"{ad.episodes - ad.episodes_without_delay} episodes"
            if ad is not None and ad.episodes > ad.episodes_without_delay
            else "no added delay over the control period"
        )
        over = fig.overrun_fraction if fig.overrun_fraction is not None else math.nan
        console.print(
            f"overrun: {over:.1%} of ticks · jitter (std of "
            f"total) {_ms(fig.jitter_s)} ms · {delay}",
            highlight=False,
        )
    if fig.queue is not None:
        q = fig.queue
        console.print(
            f"action queue: empty at {q.empty_fraction:.1%} of {q.sends} "
            f"sends, {q.must_go_count} must-go, trend {q.slope_per_send:.3g} "
            "actions/send",
            highlight=False,
        )
    color = _COLORS[d["verdict"]]
    console.print(f"verdict: [{color}]{d['verdict']}[/{color}]")
    console.print(escape(d["summary"]), highlight=False)
    console.print(escape(f"next step: {d['next_step']}"), highlight=False)
    for w in details_of(d, LatencyDetails).warnings:
        console.print(escape(f"warning: {w}"), style="yellow", highlight=False)


@app.command()
@handles_errors
def latency(
    logs: list[Path] = typer.Argument(
        None,
        help="Timing logs (.jsonl, .parquet) and/or "
        "LeRobot policy_server_*.log / robot_client_*.log "
        "files; default: the rig's evidence.",
    ),
    control_dt: float | None = typer.Option(
        None,
        "--control-dt",
        help="The simulated control period [s] (default: the rig's control.dt_s).",
    ),
    rig: Path | None = typer.Option(
        None,
        "--rig",
        help="rig.toml: control period, policy server address, and logs when none are given.",
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the finding as JSON."
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="Bootstrap seed (default: the rig's seed, else 0)."
    ),
    skip_bad_lines: bool = typer.Option(
        False,
        "--skip-bad-lines",
        help="Drop timing-log "
        "lines that are not JSON objects (counted in a "
        "warning) instead of stopping.",
    ),
) -> None:
    """Hold each stage and the total of the control loop against the control period."""
    from simgap.branches.latency import analyse
    from simgap.evidence.lerobot import dataset_fps
    from simgap.evidence.timing import TimingLogWarning, read_latency_files
    from simgap.sim.rig_names import load_checked_rig
    from simgap.validate import control_period

    r = load_checked_rig(rig) if rig is not None else None
    dt = control_dt if control_dt is not None else (r.control_dt_s if r else None)
    if dt is None or not (math.isfinite(dt) and dt > 0):
        raise InputError(
            field="--control-dt",
            expected="a positive control period [s]",
            got=dt if dt is not None else "nothing",
            fix="pass --control-dt 0.0667 (15 Hz) or --rig rig.toml",
        )
    dt = control_period(dt, field="--control-dt" if control_dt is not None else "control.dt_s")
    paths = list(logs or [])
    if not paths and r is not None:
        ev = r.evidence
        paths = [*ev.timing_logs, *ev.server_logs, *ev.client_logs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingLogWarning)  # shown from the finding
        timing, lerobot = read_latency_files(paths, skip_bad_lines=skip_bad_lines)
    used_seed = seed if seed is not None else (r.seed if r else 0)
    finding = analyse(
        timing,
        lerobot,
        float(dt),
        policy_server=r.deploy.policy_server if r else None,
        seed=used_seed,
        dataset_fps=dataset_fps(r.evidence.dataset) if r else None,
    )
    d = {**finding.to_dict(), "seed": used_seed}
    _print(d)
    write_json(json_path, d)
