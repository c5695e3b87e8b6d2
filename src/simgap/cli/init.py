"""``simgap init``: a first rig.toml from a LeRobot dataset and a MuJoCo model."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import typer

from simgap.cli._app import app, console, handles_errors, shown_path


@app.command()
@handles_errors
def init(
    dataset: Path = typer.Argument(
        ..., help="The LeRobot dataset folder (holding meta/info.json)."
    ),
    model: Path | None = typer.Option(
        None,
        "--model",
        # not typer-required: without it, init's own error names the model to get
        help="The MuJoCo model (MJCF) of the arm; "
        "for an SO-101, MuJoCo Menagerie's robotstudio_so101/"
        "so101.xml.  [required]",
    ),
    out: Path = typer.Option(Path("rig.toml"), "--out", help="The rig file to write."),
    calibration: Path | None = typer.Option(
        None,
        "--calibration",
        help="LeRobot's calibration "
        "JSON of the follower: each joint's unit, sign and "
        "offset (or range_rad) are written from it instead "
        "of guessed (docs/calibration.md).",
    ),
    name: str | None = typer.Option(
        None, "--name", help="The rig's name (default: the dataset folder's)."
    ),
    joint_map: list[str] = typer.Option(
        [],
        "--map",
        help="FEATURE=MODEL_JOINT where a recorded name differs from the model's (repeat).",
    ),
    maniskill_config: Path | None = typer.Option(
        None,
        "--maniskill-config",
        help="The JSON 'python -m simgap.maniskill.export_config "
        "ENV_ID --out FILE' wrote where you train: [training] (rates, controller, per-step "
        "limit, friction, object, origin) and the camera, marked '# from ManiSkill' "
        "(docs/maniskill.md).",
    ),
    maniskill: str | None = typer.Option(
        None,
        "--maniskill",
        metavar="ENV_ID",
        help="Read [training] from ManiSkill's ENV_ID here "
        "(needs mani_skill installed in this Python).",
    ),
    agent: str | None = typer.Option(
        None,
        "--agent",
        metavar="UID",
        help="With --maniskill: the robot_uids training passed "
        "to gym.make (default: the env's own).",
    ),
    env_kwargs: str | None = typer.Option(
        None,
        "--env-kwargs",
        metavar="JSON",
        help="With --maniskill: the other gym.make keyword "
        "arguments training passed, as a JSON object.",
    ),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing rig file."),
) -> None:
    """Write a rig.toml for DATASET and a model; print what was guessed and what to fill."""
    from simgap.errors import InputError
    from simgap.outputs import atomic_write_text
    from simgap.rig.init.draft import draft_rig, parse_map

    if out.exists() and not force:
        raise InputError(
            file=out,
            expected="a new file",
            got="it exists",
            fix="pass --force to overwrite it, or --out another path",
        )
    if maniskill is None and (agent is not None or env_kwargs is not None):
        raise InputError(
            field="--agent" if agent is not None else "--env-kwargs",
            expected="--maniskill ENV_ID beside it (they shape that export)",
            got="no --maniskill",
            fix="add --maniskill ENV_ID, or drop the option",
        )
    if maniskill is not None:
        from simgap.maniskill.config import export_here

        maniskill_config = export_here(
            maniskill, out.with_suffix(".maniskill.json"), agent=agent, env_kwargs=env_kwargs
        )
    draft = draft_rig(
        dataset,
        model,
        out,
        calibration=calibration,
        name=name,
        joint_map=parse_map(joint_map),
        maniskill_config=maniskill_config,
    )
    atomic_write_text(out, draft.text)
    shown = shown_path(out)
    _say(f"wrote {shown}")
    _say("guessed (check these):")
    for g in draft.guessed:
        _item(g)
    _say("still to fill in (each adds a branch):")
    for t in draft.to_fill:
        _item(t)
    _say(f"next: simgap diagnose {shlex.quote(shown)} --out simgap-out")


def _say(text: str) -> None:
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _item(text: str) -> None:
    """One listed item: ``  - `` then the text, its wrapped lines indented under the text,
    at the console's width (a pipe's is wide: an item stays one line for grep). Words are
    not broken, so a path longer than a line stays whole (the terminal folds it)."""
    lines = textwrap.wrap(
        text,
        width=max(console.width, 2 * len(BULLET)),
        initial_indent=BULLET,
        subsequent_indent=" " * len(BULLET),
        break_long_words=False,
        break_on_hyphens=False,
    )
    _say("\n".join(lines or [BULLET.rstrip()]))


BULLET = "  - "
