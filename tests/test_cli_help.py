"""The help pages: every option and argument says what it is, usage lines name the
positionals as words to replace, and the command list reads in workflow order."""

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from simgap.branches.ladder_list import LADDER
from simgap.cli import app
from simgap.cli._typer import WORKFLOW

runner = CliRunner()


def _commands(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(cmd, "commands", None)
    if subs is None:
        yield path, cmd
        return
    for name, sub in subs.items():
        yield from _commands(sub, (*path, name))


ALL = list(_commands(typer.main.get_command(app), ()))


def test_the_walk_finds_the_commands_and_subcommands() -> None:
    names = {" ".join(p) for p, _ in ALL}
    assert {"diagnose", "init", "contact pair", "contact sweep"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize(("path", "cmd"), ALL, ids=[" ".join(p) for p, _ in ALL])
def test_every_option_and_argument_has_help(path: tuple[str, ...], cmd: Any) -> None:
    missing = [
        p.name
        for p in cmd.params
        if p.name != "help" and not (getattr(p, "help", None) or "").strip()
    ]
    assert not missing, f"simgap {' '.join(path)}: no help text for {missing}"
    assert (cmd.help or "").strip(), f"simgap {' '.join(path)} has no description"


def test_contact_pair_help_describes_condim_solref_solimp_json() -> None:
    r = runner.invoke(app, ["contact", "pair", "--help"])
    assert r.exit_code == 0
    for line in r.stdout.splitlines():
        if line.strip().startswith(("--condim", "--solref", "--solimp", "--json")):
            assert not line.strip().split(maxsplit=2)[-1].startswith("[default"), line


@pytest.mark.parametrize(
    ("argv", "usage"),
    [
        (["diagnose"], "simgap diagnose [OPTIONS] RIG"),
        (["contact", "pair"], "simgap contact pair [OPTIONS] MODEL"),
        (["actuator"], "simgap actuator [OPTIONS] LOGS..."),
        (["latency"], "simgap latency [OPTIONS] [LOGS]..."),
        (["compare"], "simgap compare [OPTIONS] A B"),
    ],
)
def test_usage_names_positionals_in_capitals(argv: list[str], usage: str) -> None:
    r = runner.invoke(app, [*argv, "--help"])
    assert r.exit_code == 0
    assert f"Usage: {usage}" in " ".join(r.stdout.split())
    assert "{" not in r.stdout.splitlines()[0]


def _listed() -> list[str]:
    r = runner.invoke(app, ["--help"])
    assert r.exit_code == 0
    lines = r.stdout.split("Commands:", 1)[1].splitlines()
    return [ln.split()[0] for ln in lines if ln.startswith("  ") and ln.strip()]


def test_top_level_commands_in_workflow_order() -> None:
    listed = _listed()
    assert listed[:3] == ["demo", "init", "diagnose"]
    assert listed == [n for n in WORKFLOW if n in listed]
    assert set(listed) == set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_branch_commands_follow_the_ladder_cost_order() -> None:
    command = {"plumbing": "audit"}
    branches = [command.get(s.name, s.name) for s in sorted(LADDER, key=lambda s: s.cost)]
    listed = _listed()
    assert [n for n in listed if n in branches] == branches
    tools_start = max(listed.index(b) for b in branches)
    assert listed.index("diagnose") < min(listed.index(b) for b in branches)
    assert listed.index("fleet") > tools_start
