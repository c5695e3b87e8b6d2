"""Progress for long commands, on standard error so that standard output stays the result.

On a terminal a step shows as a bar (``steps``) or a spinner (``working``); otherwise, in a
log or a pipe, as plain timestamped lines: one per step, a heartbeat every ``HEARTBEAT_S``
while a step without hooks runs, and the time it took. ``simgap --quiet`` (or
``SIMGAP_QUIET=1``) silences all of it; results and errors still print.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from simgap.cli._app import app, console, err_console

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

HEARTBEAT_S = 15.0
_state = {"quiet": os.environ.get("SIMGAP_QUIET", "") not in ("", "0")}


def _version(value: bool) -> None:
    """``simgap --version``: the version on standard output, then exit (before any command)."""
    if value:
        from simgap._version import __version__

        console.print(f"simgap {__version__}", highlight=False, markup=False)
        raise typer.Exit()


@app.callback()
def _root(
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress output (results and errors still print)."
    ),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print simgap's version and exit.",
    ),
) -> None:
    """Find out why a robot policy that works in simulation fails on hardware.

    The root options (``--quiet``, ``--version``) go before the command; given after it,
    the command's error says so (``cli._typer.Command``)."""
    del version  # handled by its eager callback
    _state["quiet"] = quiet or _state["quiet"]


def quiet() -> bool:
    """Whether progress output is off."""
    return _state["quiet"]


def _line(text: str) -> None:
    err_console.print(
        f"{time.strftime('%H:%M:%S')} {text}", highlight=False, markup=False, soft_wrap=True
    )


def say(text: str) -> None:
    """One line of what the command is about to do (silenced by --quiet)."""
    if not quiet():
        err_console.print(text, highlight=False, markup=False, soft_wrap=True)


def about(seconds: float) -> str:
    """A duration as a person says it: "about 40 s", "about 6 min"."""
    if seconds < 90:
        return f"about {max(5, round(seconds / 5) * 5):.0f} s"
    return f"about {seconds / 60:.0f} min"


def progress_bar(console: Console) -> Progress:
    """The terminal bar of ``steps``: the description takes what the terminal has left and
    is cut with an ellipsis, so the bar, its percentage and the time stay whole on an
    80-column terminal (with a long step name they were cut off at the right edge)."""
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.table import Column

    return Progress(
        TextColumn(
            "{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis")
        ),
        BarColumn(bar_width=20),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        expand=True,
    )


@contextmanager
def steps(name: str) -> Iterator[Callable[[str, float], None]]:
    """A ``report(message, fraction)`` callback for a command made of named steps."""
    t0 = time.monotonic()
    if quiet():
        yield lambda msg, frac: None
        return
    done = [0.0]  # a branch's own message comes with fraction 0: the bar never goes back

    def fraction(frac: float) -> float:
        done[0] = max(done[0], min(1.0, frac))
        return done[0]

    if err_console.is_terminal:
        with progress_bar(err_console) as progress:
            task = progress.add_task(name, total=1.0)

            def bar(msg: str, frac: float) -> None:
                progress.update(task, description=f"{name}: {msg}", completed=fraction(frac))

            yield bar
    else:
        last = [""]
        stop = threading.Event()

        def plain(msg: str, frac: float) -> None:
            if frac >= 1.0:  # the end ("done"): said once, by the closing line below; until
                last[0] = "finishing"  # then (outputs written) the heartbeat says so
            elif msg != last[0]:
                last[0] = msg
                _line(f"{name}: {msg} ({fraction(frac):.0%}, {time.monotonic() - t0:.0f} s)")

        def beat() -> None:  # a long step still says it is alive
            while not stop.wait(HEARTBEAT_S):
                if last[0]:
                    _line(f"{name}: {last[0]}, still working, {time.monotonic() - t0:.0f} s")

        th = threading.Thread(target=beat, daemon=True)
        th.start()
        try:
            yield plain
        finally:
            stop.set()
            th.join(timeout=1.0)
    _line(f"{name}: done in {time.monotonic() - t0:.0f} s")


@contextmanager
def working(name: str, what: str, expected_s: float | None = None) -> Iterator[None]:
    """A long step with no progress hooks: says up front what it does and about how long,
    then a spinner (terminal) or a heartbeat line every ``HEARTBEAT_S`` (log), then the time
    it took."""
    t0 = time.monotonic()
    if quiet():
        yield
        return
    say(f"{name}: {what}" + (f" ({about(expected_s)})" if expected_s else "") + ".")
    if err_console.is_terminal:
        with err_console.status(f"{name}: {what}"):
            yield
    else:
        stop = threading.Event()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                _line(f"{name}: still working, {time.monotonic() - t0:.0f} s")

        th = threading.Thread(target=beat, daemon=True)
        th.start()
        try:
            yield
        finally:
            stop.set()
            th.join(timeout=1.0)
    _line(f"{name}: done in {time.monotonic() - t0:.0f} s")
