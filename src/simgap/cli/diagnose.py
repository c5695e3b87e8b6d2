"""``simgap diagnose`` and ``simgap demo``."""

from __future__ import annotations

from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, shown_path
from simgap.cli._progress import say, steps, working
from simgap.cli._ray import ALLOW_RIG_COMPUTE_HELP, RAY_HELP, ray_address
from simgap.cli._summary import print_summary
from simgap.cli.view import MCAP_HELP


def rig_file(path: Path) -> Path:
    """``path`` itself, or the ``rig.toml`` inside it when it is a folder."""
    if not path.is_dir():
        return path
    if (path / "rig.toml").is_file():
        return path / "rig.toml"
    from simgap.errors import InputError

    raise InputError(
        file=path,
        expected="a rig.toml file, or a folder holding one",
        got=f"a folder without rig.toml ({len(list(path.iterdir()))} entries)",
        fix="pass the rig file itself, or write one with 'simgap init'",
    )


RERUN_HELP = (
    "Also write the diagnosis as a Rerun recording (the rerun extra): each "
    "episode on LeRobot's timelines and names, with the simulated replays, the gap "
    "against the noise floor and the findings; docs/rerun.md."
)


def _run(
    rig: Path,
    out: Path,
    force: bool,
    control_dt: float | None,
    ray: str | None = None,
    allow_rig_compute: bool = False,
    controller_cross_check: bool = False,
    actuator_net: bool = True,
    controller_episodes: int = 1,
) -> None:
    from simgap.diagnose import diagnose_rig

    preamble = [
        "diagnose: runs every branch the evidence allows, cheapest first (a few "
        "minutes on a laptop for a full rig; each branch is named as it starts)."
    ]
    with steps("diagnose") as report:

        def progress(msg: str, frac: float) -> None:
            # said at the first branch, once the rig, its evidence and --out are checked: an
            # error in them comes alone, not after a promise of minutes of work
            if preamble:
                say(preamble.pop())
            report(msg, frac)

        diagnosis = diagnose_rig(
            rig,
            out,
            force=force,
            progress=progress,
            control_dt_s=control_dt,
            ray_address=ray,
            allow_rig_compute=allow_rig_compute,
            controller_cross_check=controller_cross_check,
            actuator_net=actuator_net,
            controller_episodes=controller_episodes,
        )
    print_summary(diagnosis)
    console.print(
        f"findings: {shown_path(out / 'findings.json')}\n"
        f"report:   {shown_path(out / 'report.html')}",
        highlight=False,
        markup=False,
    )


@app.command()
@handles_errors
def diagnose(
    rig: Path = typer.Argument(
        ..., help="The rig.toml describing the setup and its evidence (or the folder holding it)."
    ),
    out: Path = typer.Option(
        ..., "--out", help="Folder for findings.json, report.html and artifacts."
    ),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace a non-empty --out folder: "
        "everything in it is removed once the new one is written.",
    ),
    control_dt: float | None = typer.Option(
        None, "--control-dt", help="Override the simulated control period [s]."
    ),
    ray: str | None = typer.Option(
        None, "--ray", callback=ray_address, help="The fits' candidate batches on Ray. " + RAY_HELP
    ),
    allow_rig_compute: bool = typer.Option(
        False, "--allow-rig-compute", help=ALLOW_RIG_COMPUTE_HELP
    ),
    controller_cross_check: bool = typer.Option(
        False,
        "--controller-cross-check",
        help="Also fit the controller's gains by SIMPLER's "
        "pose loss, as a cross-check of the joint-dynamics fit of record (adds a fit; "
        "'simgap controller' runs it alone).",
    ),
    no_actuator_net: bool = typer.Option(
        False,
        "--no-actuator-net",
        help="Skip the actuator ladder's rung 4 (the network, "
        "its slowest rung), as 'simgap actuator --no-net' does.",
    ),
    controller_episodes: int = typer.Option(
        1,
        "--controller-episodes",
        min=1,
        metavar="N",
        help="Recorded episodes (evenly "
        "spread) the controller branch's SIMPLER pose fit replays; each adds a rollout per "
        "candidate ('simgap controller' fits on every episode).",
    ),
    rerun: Path | None = typer.Option(None, "--rerun", metavar="FILE.rrd", help=RERUN_HELP),
    mcap: Path | None = typer.Option(None, "--mcap", metavar="FILE.mcap", help=MCAP_HELP),
) -> None:
    """Run every branch the evidence allows, in cost order, and write the report."""
    _require_views(rerun, mcap)
    _run(
        rig_file(rig),
        out,
        force,
        control_dt,
        ray,
        allow_rig_compute,
        controller_cross_check,
        not no_actuator_net,
        controller_episodes,
    )
    if rerun is not None or mcap is not None:  # 'simgap view OUT --rig RIG' writes the same
        from simgap.cli.view import write_view

        write_view(out, rig_file(rig), rerun, mcap)


def _require_views(rerun: Path | None, mcap: Path | None) -> None:
    """A missing extra, or a view file that is a folder or of the other format, is said
    before minutes of diagnosis, not after."""
    from simgap.cli.view import check_view_targets

    check_view_targets(rerun, mcap)
    if rerun is not None:
        from simgap.report.rerun import require_rerun

        require_rerun()
    if mcap is not None:
        from simgap.report.mcap_out import require_mcap

        require_mcap()


BUILD_S = 10.0
"""About how long recording the demo bench takes: 6 to 12 s measured on 2 cores (the
diagnosis after it takes the better part of a minute more, and says so step by step)."""


@app.command()
@handles_errors
def demo(
    out: Path = typer.Option(Path("simgap-demo"), "--out", help="Folder for the report."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Replace a non-empty --out folder: "
        "everything in it is removed once the new one is written.",
    ),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        metavar="DIR",
        help="Folder for the "
        "demo bench: recorded into DIR/seed-<seed> on the first "
        "run, reused after (default: $SIMGAP_CACHE/demo when "
        "SIMGAP_CACHE is set, else ~/.cache/simgap/demo).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the demo bench."),
    rerun: Path | None = typer.Option(None, "--rerun", metavar="FILE.rrd", help=RERUN_HELP),
    mcap: Path | None = typer.Option(None, "--mcap", metavar="FILE.mcap", help=MCAP_HELP),
) -> None:
    """Diagnose the bundled demo rig: a synthetic bench with known, planted faults."""
    from simgap.demo import cached_demo, demo_cache_dir, prepare_demo
    from simgap.outputs import check_output_target

    _require_views(rerun, mcap)
    check_output_target(out, force=force)  # a non-empty --out refused before the bench
    recorded = cached_demo(cache, seed)
    if recorded is not None:
        say(
            f"demo: reusing the bench recorded at {shown_path(recorded.parent)} (delete it "
            "or pass --cache DIR to record it again)."
        )
        rig = prepare_demo(cache, seed=seed)
    else:
        where = shown_path(demo_cache_dir(cache, seed))
        with working(
            "demo", f"recording the demo bench into {where}, once: later runs reuse it", BUILD_S
        ):
            rig = prepare_demo(cache, seed=seed)
    console.print(f"demo rig: {shown_path(rig)}", highlight=False, markup=False)
    _run(rig, out, force, None)
    if rerun is not None or mcap is not None:
        from simgap.cli.view import write_view

        write_view(out, rig, rerun, mcap)
