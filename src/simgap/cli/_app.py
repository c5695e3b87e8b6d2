"""The typer application and the one wrapper every command runs through."""

from __future__ import annotations

import functools
import importlib
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from simgap.errors import SimgapError
from simgap.outputs import atomic_write_json, guard_inputs, json_safe

WORKFLOW = ("demo", "init", "diagnose",
            # the branches, cheapest first (LADDER's cost order; plumbing is 'audit')
            "audit", "phases", "envelope", "latency", "contact", "actuator", "controller",
            "body", "appearance",
            # the tools: many rigs, the export, making evidence, evaluation
            "fleet", "randomize", "excite", "fake-arm", "render", "compare", "trials", "rank")
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
    param = next((p for p in root.command.params if opt in (*p.opts, *p.secondary_opts)),
                 None) if ctx is not root else None
    if param is None:
        return error
    name = root.info_name or "simgap"
    if getattr(param, "is_eager", False):
        return _CLICK_ERRORS.UsageError(f"{opt} is an option of {name} itself: {name} {opt}",
                                        ctx)
    sub = ctx.command_path.removeprefix(root.command_path).split()
    rest = list(args)
    if opt in rest:
        rest.remove(opt)
    return _CLICK_ERRORS.UsageError(f"{opt} is an option of {name} itself, given before the "
                                    f"command: {name} {opt} {shlex.join([*sub, *rest])}", ctx)


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

    def command(self, name: str | None = None, *, cls: type[TyperCommand] | None = None,
                **kwargs: Any) -> Callable[[Any], Any]:
        return super().command(name, cls=cls or Command, **kwargs)


app = App(
    name="simgap",
    cls=WorkflowGroup,
    help="Find out why a robot policy that works in simulation fails on hardware.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: units in brackets ("[s]") stay visible
)
PIPE_WIDTH = 1000
"""Columns that output to a pipe or a file is laid out in (``COLUMNS`` decides when set)."""


class _Console(Console):
    """A Console that wraps at the terminal's width on a terminal only: written to a pipe
    or a file (``| less``, ``> log``, CI), it takes ``COLUMNS`` if set, else
    ``PIPE_WIDTH``, where rich took 80 (or the width of whatever other stream was a
    terminal), so that a table row or a listed item stays one line for grep and less."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if (self._width is None and not self.is_terminal
                and not (os.environ.get("COLUMNS") or "").isdigit()):
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


console = _Console()
err_console = _Console(stderr=True)

F = TypeVar("F", bound=Callable[..., Any])


BUG_EXIT = 3
"""Exit status of an exception simgap did not raise on purpose (a bug, never bad input)."""


def _crash_site(e: BaseException) -> str:
    """``file:line`` of the innermost frame of ``e`` (for the bug report)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return "unknown"
    return f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"


def handles_errors(fn: F) -> F:
    """Turn simgap's own errors into a one-paragraph message and exit status 2, and any
    other exception into a short bug message and exit status 3 (never a traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        prev = _on_terminate()
        try:
            with guard_inputs():
                return fn(*args, **kwargs)
        except SimgapError as e:
            err_console.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False,
                              soft_wrap=True)
            raise typer.Exit(code=2) from None
        except OSError as e:  # the user's files: missing, unreadable, a loop, a full disk
            msg = escape(f"{e.filename}: {e.strerror}" if e.filename else str(e))
            err_console.print(f"[bold red]error:[/bold red] {msg}",
                              highlight=False, soft_wrap=True)
            raise typer.Exit(code=2) from None
        except KeyboardInterrupt:
            _interrupted("Ctrl-C")
            raise typer.Exit(code=130) from None
        except SystemExit as e:
            if e.code == 128 + signal.SIGTERM:
                _interrupted("SIGTERM")
            raise
        except (typer.Exit, typer.Abort):
            raise
        except Exception as e:  # the last line of defence: a short message, never a traceback
            where = _crash_site(e)
            err_console.print(
                f"[bold red]internal error:[/bold red] {escape(type(e).__name__)}: "
                f"{escape(str(e)[:300])} (at {escape(where)}). This is a bug in simgap; "
                "please report it with this file (the command and the input that caused it).",
                highlight=False, soft_wrap=True)
            raise typer.Exit(code=BUG_EXIT) from None
        finally:
            if prev is not _NOT_SET:
                signal.signal(signal.SIGTERM, prev)

    return wrapper  # type: ignore[return-value]


def _interrupted(how: str) -> None:
    err_console.print(f"interrupted ({how}): stopped before finishing; what was not finished "
                      "is not written (a half-built output folder is removed)",
                      highlight=False, soft_wrap=True)


def _terminated(signum: int, frame: Any) -> None:
    del frame
    raise SystemExit(128 + signum)


def _on_terminate() -> Any:
    """SIGTERM (a job scheduler's stop, ``kill``) exits like Ctrl-C does: through the
    command's cleanup (the half-written output folder is removed), status 143. Returns the
    previous handler (``_NOT_SET`` off the main thread, where Python allows none)."""
    if threading.current_thread() is not threading.main_thread():
        return _NOT_SET
    prev = signal.signal(signal.SIGTERM, _terminated)
    return signal.SIG_DFL if prev is None else prev


_NOT_SET = object()


def shown_path(path: str | Path) -> str:
    """A path as simgap prints it: relative to the current folder when it lies inside it,
    else absolute; never a relative path that climbs out (``../../../root/.cache/...``
    names the same file, but only after counting folders)."""
    p = Path(os.path.abspath(path))  # ".." collapsed, symbolic links kept as named
    try:
        return str(p.relative_to(os.getcwd()))
    except ValueError:
        return str(p)


def json_target(path: Path | None) -> Path | None:
    """``--json`` checked before any work (a typer callback): a file path, not a folder,
    and not below a file, so that a long fit does not end in an error about its output
    (missing folders above it are created when it is written)."""
    if path is None:
        return None
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a folder; expected a file to write the JSON to. "
                                 f"Fix: name a file, e.g. {path / 'result.json'}")
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise typer.BadParameter(f"{path}: {above} is a file, so no folder can hold this "
                                 "JSON. Fix: name a file in a folder")
    return path


def write_json(path: Path | None, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically when a path was given (NaN and Inf as
    null; never over an input)."""
    if path is not None:
        atomic_write_json(path, json_safe(obj))
        err_console.print(f"wrote {path}", highlight=False)


def print_json(obj: Any) -> None:
    """Print JSON to standard output."""
    sys.stdout.write(json.dumps(json_safe(obj), indent=2, allow_nan=False) + "\n")


def key_text(finding: Mapping[str, Any]) -> str:
    """A finding's key figure as the terminal prints it (its JSON form): the report's
    headline figure (``report.headline.key_line``), so the two never disagree; a
    not-measured finding, which has none, names the first evidence it needs instead."""
    from simgap.report.headline import key_line

    text = key_line(finding).text
    needs = finding.get("needs") or ()
    if text or finding.get("verdict") != "not_measured" or not needs:
        return text
    more = len(needs) - 1
    return f"add {needs[0]}" + (f" (and {more} more: see findings.json)" if more else "")


def print_findings(title: str, findings: list[Any]) -> None:
    """Findings as short blocks (verdict, title, key number; summary; next step), which stay
    readable at 80 columns and when piped, where a four-column table wraps word by word."""
    console.print(escape(title), style="bold", highlight=False)
    for f in findings:
        key = key_text(f.to_dict())
        console.print(escape(f"[{f.verdict.value}] {f.title}" + (f": {key}" if key else "")),
                      highlight=False)
        if f.summary:
            console.print(escape(f"  {f.summary}"), highlight=False)
        if f.next_step:
            console.print(escape(f"  next: {f.next_step}"), highlight=False)


def findings_json(rig: Any, findings: list[Any]) -> dict[str, Any]:
    """The JSON of a one-branch command: ``{"rig", "seed", "findings"}``."""
    return {"rig": rig.name, "seed": rig.seed, "findings": [f.to_dict() for f in findings]}
