"""The typer application and the one wrapper every command runs through."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape

from simgap.cli._stop import NOT_SET, interrupted, on_terminate
from simgap.cli._typer import App, WorkflowGroup
from simgap.errors import SimgapError
from simgap.outputs import (
    atomic_write_json,
    guard_inputs,
    json_safe,
    protected_inputs,
    relative_paths,
)

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
        if (
            self._width is None
            and not self.is_terminal
            and not (os.environ.get("COLUMNS") or "").isdigit()
        ):
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


_PACKAGE = Path(__file__).resolve().parents[1]
"""The simgap package folder: a crash is placed at the innermost frame inside it."""


def _crash_site(e: BaseException) -> str:
    """``file:line`` of the innermost simgap frame of ``e`` (``simgap/cli/excite.py:127``, not the
    standard library's ``encoder.py`` it called), for the bug report; the innermost frame of
    any file where no simgap frame is on the traceback."""
    ours = last = None
    tb = e.__traceback__
    while tb is not None:
        file = Path(tb.tb_frame.f_code.co_filename)
        last = f"{file.name}:{tb.tb_lineno}"
        with contextlib.suppress(ValueError, OSError):
            ours = f"simgap/{file.resolve().relative_to(_PACKAGE).as_posix()}:{tb.tb_lineno}"
        tb = tb.tb_next
    return ours or last or "unknown"


def handles_errors(fn: F) -> F:
    """Turn simgap's own errors into a one-paragraph message and exit status 2, and any
    other exception into a short bug message and exit status 3 (never a traceback)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        prev = on_terminate()
        read: list[Path] = []  # the inputs the command read, for a bug report
        try:
            with guard_inputs():
                try:
                    return fn(*args, **kwargs)
                finally:
                    read.extend(protected_inputs())
        except SimgapError as e:
            err_console.print(
                f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False, soft_wrap=True
            )
            raise typer.Exit(code=2) from None
        except OSError as e:  # the user's files: missing, unreadable, a loop, a full disk
            msg = escape(f"{e.filename}: {e.strerror}" if e.filename else str(e))
            err_console.print(f"[bold red]error:[/bold red] {msg}", highlight=False, soft_wrap=True)
            raise typer.Exit(code=2) from None
        except KeyboardInterrupt:
            interrupted(err_console, "Ctrl-C", fn.__name__)
            raise typer.Exit(code=130) from None
        except SystemExit as e:
            if e.code == 128 + signal.SIGTERM:
                interrupted(err_console, "SIGTERM", fn.__name__)
            raise
        except (typer.Exit, typer.Abort):
            raise
        except Exception as e:  # the last line of defence: a short message, never a traceback
            where = _crash_site(e)
            err_console.print(
                f"[bold red]internal error:[/bold red] {escape(type(e).__name__)}: "
                f"{escape(str(e)[:300])} (at {escape(where)}). This is a bug in "
                f"simgap; please report it with this message, the command you ran and "
                f"{escape(_inputs_phrase(read))}.",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(code=BUG_EXIT) from None
        finally:
            if prev is not NOT_SET:
                signal.signal(signal.SIGTERM, prev)

    return wrapper  # type: ignore[return-value]


def _inputs_phrase(read: list[Path], most: int = 4) -> str:
    """The input files a bug report should carry, as a phrase ("the files it read: a, b")."""
    names = list(dict.fromkeys(str(p) for p in read))
    if not names:
        return "the files it read"
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return "the files it read: " + ", ".join(names[:most]) + more


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
        raise typer.BadParameter(
            f"{path} is a folder; expected a file to write the JSON to. "
            f"Fix: name a file, e.g. {path / 'result.json'}"
        )
    above = next((p for p in path.absolute().parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise typer.BadParameter(
            f"{path}: {above} is a file, so no folder can hold this "
            "JSON. Fix: name a file in a folder"
        )
    return path


def write_json(path: Path | None, obj: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically when a path was given (NaN and Inf as
    null; never over an input). Paths in it are named relative to the JSON file's folder,
    as findings.json's are (``simgap.outputs.relative_paths``), so a copied folder keeps
    working."""
    if path is not None:
        atomic_write_json(path, relative_paths(json_safe(obj), path.absolute().parent))
        err_console.print(f"wrote {path}", highlight=False)


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
        console.print(
            escape(f"[{f.verdict.value}] {f.title}" + (f": {key}" if key else "")), highlight=False
        )
        if f.summary:
            console.print(escape(f"  {f.summary}"), highlight=False)
        if f.next_step:
            console.print(escape(f"  next: {f.next_step}"), highlight=False)


def findings_json(rig: Any, findings: list[Any]) -> dict[str, Any]:
    """The JSON of a one-branch command: ``{"rig", "seed", "findings"}``."""
    return {"rig": rig.name, "seed": rig.seed, "findings": [f.to_dict() for f in findings]}
