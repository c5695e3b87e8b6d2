"""``simgap view DIR --rerun FILE.rrd``: a finished diagnosis as a Rerun recording."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from simgap.cli._app import app, console, handles_errors


def _diagnosis(out: Path) -> dict[str, Any]:
    from simgap.errors import InputError
    from simgap.validate import read_json

    path = out / "findings.json"
    if not path.is_file():
        raise InputError(
            file=path,
            expected="a finished diagnosis's findings.json",
            got="no such file",
            fix="pass the --out folder of 'simgap diagnose' (or 'simgap demo')",
        )
    data = read_json(path, "simgap's findings.json")
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise InputError(
            file=path, field="findings", expected="simgap's findings.json", got=type(data).__name__
        )
    from simgap.figures.registry import kind_of
    from simgap.outputs import resolve_paths

    doc = dict(resolve_paths(data, out))  # its paths are relative to its folder
    doc["findings"] = [  # an older file names no kind: the layers pick findings by kind
        {**f, "kind": kind_of(f)} if isinstance(f, dict) else f for f in doc["findings"]
    ]
    return doc


def write_view(
    out: Path, rig_path: Path, rrd: Path | None = None, mcap: Path | None = None
) -> None:
    """Write ``rrd`` (Rerun) and/or ``mcap`` (MCAP for Foxglove) from the diagnosis in ``out``
    of the rig at ``rig_path``."""
    from simgap.errors import InputError
    from simgap.evidence.ros2_bag import rig_recording
    from simgap.sim.rig_names import load_checked_rig

    if rrd is None and mcap is None:
        raise InputError(
            field="--rerun / --mcap",
            expected="a file to write",
            got="neither",
            fix="pass --rerun FILE.rrd or --mcap FILE.mcap",
        )
    check_view_targets(rrd, mcap)  # a folder or the other format, before reading anything
    diagnosis = _diagnosis(out)
    rig = load_checked_rig(rig_path)
    if diagnosis.get("rig") not in (None, rig.name):
        raise InputError(
            file=out / "findings.json",
            field="rig",
            expected=f"the diagnosis of rig '{rig.name}' ({rig_path})",
            got=f"rig '{diagnosis.get('rig')}'",
            fix="pass the rig.toml that diagnosis was run on (--rig)",
        )
    if rig.evidence.recording is None:
        raise InputError(
            file=rig_path,
            field="evidence.dataset",
            expected="a recording to show (evidence.dataset or ros2_bags)",
            got="neither",
            fix="name the recording the diagnosis read",
        )
    check_view_targets(rrd, mcap)  # again, now that the inputs it must not overwrite are known
    if rrd is not None:
        from simgap.report.rerun import write_rrd

        done = write_rrd(rrd, rig, rig_recording(rig), diagnosis)
        _say(
            f"rerun: {done.path}, {len(done.episodes)} episode(s), opening on the worst "
            f"joint's gap: {done.worst_joint} ({done.gap_ratio:.3g} x its noise floor) (open "
            f"it with 'rerun {done.path}')",
            done.skipped,
        )
    if mcap is not None:
        from simgap.report.mcap_out import write_mcap

        mc = write_mcap(mcap, rig, rig_recording(rig), diagnosis)
        _say(
            f"mcap: {mc.path}, {len(mc.episodes)} episode(s) end to end on one clock (open "
            "it in Foxglove)",
            mc.skipped,
        )


def check_view_targets(rrd: Path | None, mcap: Path | None) -> None:
    """``--rerun`` and ``--mcap`` checked before any work: a file of that format to write,
    not a folder and not an input (``simgap.outputs.check_output_file``)."""
    from simgap.outputs import check_output_file

    if rrd is not None:
        check_output_file(rrd, option="--rerun", suffix=".rrd")
    if mcap is not None:
        check_output_file(mcap, option="--mcap", suffix=".mcap")


def _say(line: str, skipped: tuple[str, ...]) -> None:
    console.print(line, highlight=False, markup=False)
    for why in skipped:
        console.print(f"  left out {why}", highlight=False, markup=False)


MCAP_HELP = (
    "Also write the diagnosis as an MCAP file for Foxglove (the mcap extra): the "
    "same layers on Foxglove's schemas, JSON-encoded; docs/rerun.md."
)


@app.command()
@handles_errors
def view(
    out: Path = typer.Argument(..., help="A finished 'simgap diagnose' --out folder."),
    rerun: Path | None = typer.Option(
        None,
        "--rerun",
        metavar="FILE.rrd",
        help="Write the diagnosis as a Rerun recording: each "
        "episode on LeRobot's timelines and names, with the "
        "simulated replays, the gap, the rendered camera, "
        "the arm in 3D and the findings (the rerun extra).",
    ),
    mcap: Path | None = typer.Option(
        None,
        "--mcap",
        metavar="FILE.mcap",
        help="Write the same layers as an MCAP file for Foxglove (the mcap extra).",
    ),
    rig: Path = typer.Option(
        ..., "--rig", help="The rig.toml the diagnosis was run on (or the folder holding it)."
    ),
) -> None:
    """Look at a finished diagnosis frame by frame (Rerun, Foxglove)."""
    from simgap.cli.diagnose import rig_file

    write_view(out, rig_file(rig), rerun, mcap)
