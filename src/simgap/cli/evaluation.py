"""``simgap compare``, ``simgap trials`` and ``simgap rank``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from simgap.cli._app import app, console, err_console, handles_errors, json_target, write_json


def _f(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_f(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_f(x)}" for k, x in v.items()) + "}"
    return str(v)


@app.command()
@handles_errors
def compare(
    a: Path = typer.Argument(..., help="Manifest of run A (TOML or JSON)."),
    b: Path = typer.Argument(..., help="Manifest of run B (TOML or JSON)."),
    allow_mismatch: bool = typer.Option(
        False, "--allow-mismatch", help="Exit 0 even when the runs measure different tasks."
    ),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Check that two evaluation runs are comparable, then compare their success rates."""
    from simgap.evaluation.protocol import compare as compare_runs
    from simgap.evidence.manifest import read_manifest

    result = compare_runs(read_manifest(a), read_manifest(b))
    if result["mismatches"]:
        t = Table(title="differences between the manifests")
        for col in ("item", "A", "B", "must match"):
            t.add_column(col, overflow="fold")
        for m in result["mismatches"]:
            t.add_row(
                escape(m["item"]),
                escape(_f(m["a"])),
                escape(_f(m["b"])),
                "[red]yes[/red]" if m["must_match"] else "no",
            )
        console.print(t)
    console.print(escape(result["message"]), highlight=False)
    t = Table(title="success rates")
    for col in ("run", "successes / trials", "rate", "Wilson 95%", "Clopper-Pearson 95%"):
        t.add_column(col)
    for name, r in result["rates"].items():
        t.add_row(
            name,
            f"{r['successes']} / {r['trials']}",
            _f(r["rate"]),
            _f(r["wilson"]),
            _f(r["clopper_pearson"]),
        )
    console.print(t)
    console.print(
        "  ".join(
            f"{k} = {_f(v)}"
            for k, v in result["tests"].items()
            if k not in ("mcnemar", "sequential")
        ),
        highlight=False,
    )
    if result["paired"]["reason"]:
        console.print(escape("unpaired: " + result["paired"]["reason"]), highlight=False)
    seq = result["tests"].get("sequential")
    if seq:
        console.print(
            f"sequential (anytime-valid, alpha {seq['alpha']:g}): {seq['decision']}"
            + (
                f" at round {seq['stopped_at']}"
                if seq["stopped_at"]
                else f" after {seq['rounds']} rounds"
            ),
            highlight=False,
        )
    write_json(json_path, result)
    if not result["comparable"] and not allow_mismatch:
        err_console.print(
            "different task, not a gap: exiting 1 (pass --allow-mismatch to accept)",
            highlight=False,
        )
        raise typer.Exit(code=1)


def _print_for_n(f: dict[str, Any]) -> None:
    """What n trials per arm buy: power per test, the smallest detectable difference each
    way, and the 95% half-widths, one line each."""

    def _g(v: Any) -> str:
        return f"{v:.3g}" if isinstance(v, (int, float)) else "-"

    power = ", ".join(f"{k} {_g(v)}" for k, v in (f.get("power") or {}).items())
    mdd = ", ".join(
        f"{k} +{_g(v.get('up'))} / -{_g(v.get('down'))}"
        for k, v in (f.get("min_detectable") or {}).items()
        if isinstance(v, dict)
    )
    hw = ", ".join(f"{k} {_g(v)}" for k, v in (f.get("half_width") or {}).items())
    console.print(
        f"with n = {f['n']} per arm:\n  power: {power}\n  minimum detectable "
        f"difference (above / below p1): {mdd}\n  95% half-widths: {hw}",
        highlight=False,
        markup=False,
    )


@app.command()
@handles_errors
def trials(
    p1: float = typer.Option(..., "--p1", help="Success rate of arm 1 (fraction in [0, 1])."),
    p2: float = typer.Option(..., "--p2", help="Success rate of arm 2 (fraction in [0, 1])."),
    alpha: float = typer.Option(0.05, "--alpha", help="Two-sided significance level."),
    power: float = typer.Option(0.8, "--power", help="Target power."),
    n: int | None = typer.Option(
        None,
        "--n",
        help="Also report, for this many trials per "
        "arm: minimum detectable difference, half-widths, power.",
    ),
    n_max: int | None = typer.Option(
        None,
        "--n-max",
        help="Exact sizes must keep the power up to this n (default: 2 x Fleiss with cc).",
    ),
    sequential: bool = typer.Option(
        False, "--sequential", help="Also simulate the anytime-valid sequential comparison."
    ),
    seq_max: int = typer.Option(200, "--seq-max", help="Sequential: most rounds per arm."),
    sims: int = typer.Option(2000, "--sims", help="Sequential: Monte Carlo runs."),
    seed: int = typer.Option(0, "--seed", help="Sequential: seed of the simulation."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Trials per arm to tell p1 from p2: normal, arcsine and exact (Fisher, Barnard)."""
    from simgap.evaluation.sequential import plan_sequential
    from simgap.evaluation.sizing import plan

    result = plan(p1, p2, alpha, power, n=n, n_max=n_max)
    if sequential:
        result["sequential"] = plan_sequential(p1, p2, alpha, seq_max, sims, seed)
    t = Table(title=f"trials per arm: {p1:g} vs {p2:g}, alpha {alpha:g}, power {power:g}")
    t.add_column("method")
    t.add_column("n per arm")
    for k, v in result["n_per_arm"].items():
        t.add_row(k, "none up to n_max" if v is None else str(v))
    console.print(t)
    if "for_n" in result:
        _print_for_n(result["for_n"])
    if sequential:
        s = result["sequential"]
        alt, null = s["alternative"], s["null"]
        console.print(
            f"sequential (max {s['n_max']} rounds): decides in "
            f"{alt['decide_rate']:.1%} of runs, mean {alt['mean_rounds']:.1f} / "
            f"median {alt['median_rounds']:.0f} / p90 {alt['p90_rounds']:.0f} rounds; "
            f"false decisions at p1 = p2: {null['decide_rate']:.2%}",
            highlight=False,
        )
    write_json(json_path, result)


@app.command()
@handles_errors
def rank(
    table: Path = typer.Argument(
        ...,
        help="CSV: checkpoint,sim_success,real_success[,sim_trials,real_trials,offline_metric].",
    ),
    n_boot: int = typer.Option(2000, "--n-boot", help="Bootstrap draws for the intervals."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    json_path: Path | None = typer.Option(
        None, "--json", callback=json_target, help="Write the result as JSON."
    ),
) -> None:
    """Rank fidelity of the simulated screen: MMRV, Pearson, Kendall, Spearman."""
    from simgap.evaluation.rank import rank_report
    from simgap.evidence.checkpoints import read_checkpoint_table

    result = rank_report(read_checkpoint_table(table), n_boot=n_boot, seed=seed)
    t = Table(title=f"rank fidelity over {result['n_checkpoints']} checkpoints")
    for col in ("metric", "sim screen", "95% interval", "offline baseline"):
        t.add_column(col)
    base = result["offline_baseline"] or {}
    for k in ("mmrv", "pearson", "kendall", "spearman"):
        iv = result["intervals"].get(k)
        t.add_row(k, _f(result[k]), _f(iv) if iv else "", _f(base[k]) if k in base else "")
    console.print(t)
    noise = result["noise_only"]
    if noise:
        console.print(
            f"real-side noise alone gives MMRV {noise['mmrv_median']:.3g} (median), "
            f"up to {noise['mmrv_upper']:.3g}; p = {noise['p_value']:.3g}",
            highlight=False,
        )
    console.print("MMRV: gap on the real side, strict '>' (SIMPLER)", style="dim")
    write_json(json_path, result)
