"""simgap's typer classes: usage lines that name positionals as words (``RIG``), the
top-level commands in workflow order (``WORKFLOW``), and a root option given after a
command answered with where it goes. ``cli._app`` builds the application with them.
"""

from __future__ import annotations

import importlib
import shlex
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

WORKFLOW = (
    "demo",
    "init",
    "diagnose",
    "view",
    # the branches, cheapest first (LADDER's cost order; plumbing is 'audit')
    "audit",
    "training",
    "phases",
    "envelope",
    "latency",
    "contact",
    "actuator",
    "controller",
    "body",
    "calibration",
    "appearance",
    # the tools: many rigs, known-truth recovery, the export, making evidence,
    # evaluation
    "fleet",
    "selftest",
    "randomize",
    "maniskill",
    "excite",
    "fake-arm",
    "render",
    "compare",
    "trials",
    "rank",
)
"""The top-level commands in the order ``simgap --help`` lists them: a first run, a rig,
the whole diagnosis, then each branch alone in the order the ladder runs them, then the
tools. A command missing here is listed after them."""


def _click_errors() -> Any:
    """The module of the click errors typer raises: typer 0.2x parses with its own copy of
    click (``typer._click``), whose ``NoSuchOption`` is not ``click``'s; older typer parses
    with click itself."""
    try:
        return importlib.import_module("typer._click.exceptions")
    except ImportError:
        return importlib.import_module("click.exceptions")


_CLICK_ERRORS = _click_errors()


def _global_option_hint(ctx: Any, error: Any, args: list[str]) -> Any:
    """The error for an option of the root command given after a subcommand
    (``simgap diagnose rig --quiet``): click only says the subcommand has no such option,
    and lists the subcommand's options. This one says the option is simgap's and shows the
    command line with it moved before the command (an eager option such as ``--version``
    alone); an option simgap itself lacks too keeps click's error."""
    root = ctx.find_root()
    opt = error.option_name
    param = (
        next((p for p in root.command.params if opt in (*p.opts, *p.secondary_opts)), None)
        if ctx is not root
        else None
    )
    if param is None:
        return error
    name = root.info_name or "simgap"
    if getattr(param, "is_eager", False):
        return _CLICK_ERRORS.UsageError(f"{opt} is an option of {name} itself: {name} {opt}", ctx)
    sub = ctx.command_path.removeprefix(root.command_path).split()
    rest = list(args)
    if opt in rest:
        rest.remove(opt)
    return _CLICK_ERRORS.UsageError(
        f"{opt} is an option of {name} itself, given before the "
        f"command: {name} {opt} {shlex.join([*sub, *rest])}",
        ctx,
    )


class Command(TyperCommand):
    """A command whose usage line names its arguments as click does (``RIG``, ``[LOGS]...``)
    instead of typer's ``{rig}``, which reads like a set and hides which word to replace;
    an option of ``simgap`` itself given after it says to put it before."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, list(args))
        except _CLICK_ERRORS.NoSuchOption as e:
            raise _global_option_hint(ctx, e, args) from None

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        rv = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                rv.extend(param.get_usage_pieces(ctx))
                continue
            name = (param.metavar or param.name or "").upper()
            name = name if param.required else f"[{name}]"
            rv.append(name + ("..." if param.nargs != 1 else ""))
        return rv


class Group(TyperGroup):
    """A command group (``simgap contact``) where an option of ``simgap`` itself given after
    the group's name says to put it before, as ``Command`` does."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, list(args))
        except _CLICK_ERRORS.NoSuchOption as e:
            raise _global_option_hint(ctx, e, args) from None


class WorkflowGroup(Group):
    """The root group: commands listed in ``WORKFLOW`` order, not registration order."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        rank = {n: i for i, n in enumerate(WORKFLOW)}
        return sorted(names, key=lambda n: (rank.get(n, len(WORKFLOW)), n))


class App(typer.Typer):
    """``typer.Typer`` whose commands are ``Command`` and whose groups are ``Group`` unless
    they name another class."""

    def __init__(self, *, cls: type[TyperGroup] | None = None, **kwargs: Any) -> None:
        super().__init__(cls=cls or Group, **kwargs)

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[Any], Any]:
        return super().command(name, cls=cls or Command, **kwargs)
