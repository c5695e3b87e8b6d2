"""The terminal summary of a diagnosis (``simgap diagnose`` and ``simgap demo``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from simgap.cli._app import console, key_text

if TYPE_CHECKING:
    from simgap.finding import Diagnosis

_COLORS = {
    "implicated": "red",
    "eliminated": "green",
    "inconclusive": "yellow",
    "not_measured": "dim",
}


def print_summary(diagnosis: Diagnosis) -> None:
    """The terminal summary: one row per finding (verdict, branch, finding, key number with
    its unit and threshold: the report's headline figure; for a branch not measured, the
    evidence to add), then what to fix first and the next steps of the others. No column
    holds a sentence, so it stays readable at 80 columns and when piped."""
    from rich.table import Table

    from simgap.report.headline import headline

    table = Table(
        title=escape(f"simgap diagnosis: {diagnosis.rig}"),
        box=None,
        pad_edge=False,
        show_lines=False,
    )
    table.add_column("verdict", no_wrap=True)
    table.add_column("branch", no_wrap=True)
    table.add_column("finding", overflow="fold", ratio=1)
    table.add_column("key figure", overflow="fold", ratio=2)
    dicts = [f.to_dict() for f in diagnosis.findings]
    for d in dicts:
        color = _COLORS[d["verdict"]]
        table.add_row(
            f"[{color}]{d['verdict']}[/{color}]",
            escape(d["branch"]),
            escape(d["title"]),
            escape(key_text(d)),
        )
    console.print(table)
    first, then = headline(dicts, diagnosis.stop)
    if first is not None:
        console.print(
            escape(f"\nfix first: {first['branch']}: {first['title']}. {first['next_step']}"),
            highlight=False,
        )
        for i, f in enumerate(then, 1):
            console.print(
                escape(f"then {i}. {f['branch']}: {f['title']}. {f['next_step']}"), highlight=False
            )
    stop = diagnosis.stop
    console.print(
        escape(
            f"stop: {stop.get('verdict')}"
            + (f" at {stop.get('branch')}" if stop.get("branch") else "")
            + f". {stop.get('reason', '')}"
        ),
        highlight=False,
    )
