"""A fleet's record: the aggregate of its arms' findings, ``fleet.json`` and ``fleet.html``,
and a fleet folder read back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from simgap.errors import InputError
from simgap.finding import Diagnosis, load_diagnosis
from simgap.fleet.aggregate import FleetSummary, aggregate
from simgap.fleet.jobs import FLEET_FILE, FLEET_HTML, RigResult
from simgap.outputs import atomic_write_json, resolve_paths


def summarise(out: Path, results: Sequence[RigResult]) -> FleetSummary:
    """The aggregate of every rig with findings (failed rigs are left out)."""
    arms = []
    for r in results:
        if r.status in ("done", "cached"):
            doc = json.loads((out / r.folder / "findings.json").read_text(encoding="utf-8"))
            arms.append((r.name, resolve_paths(doc, out / r.folder)))
    return aggregate(arms)


def summarise_folder(out: Path) -> tuple[FleetSummary, Diagnosis, str | None]:
    """Re-aggregate a fleet folder from its ``fleet.json`` and each arm's findings: the
    summary, the first arm's diagnosis and its rig path.

    Raises:
        InputError: ``fleet.json`` is not a fleet's, or no arm has findings.
    """
    path = out / FLEET_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows = [
            RigResult(
                **{k: r[k] for k in ("name", "rig", "folder", "status")},
                wall_s=float(r.get("wall_s", 0.0)),
            )
            for r in doc["arms"]
        ]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(
            file=path, field="arms", expected="a fleet.json written by 'simgap fleet'", got=repr(e)
        ) from None
    usable = [
        r
        for r in rows
        if r.status in ("done", "cached") and (out / r.folder / "findings.json").is_file()
    ]
    if not usable:
        raise InputError(
            file=path,
            field="arms",
            expected="at least one arm with findings",
            got=f"{len(rows)} arm(s), none diagnosed",
            fix="rerun 'simgap fleet' on the rigs",
        )
    first = load_diagnosis(out / usable[0].folder / "findings.json")
    return summarise(out, usable), first, usable[0].rig


def write_fleet(
    out: Path,
    results: Sequence[RigResult],
    summary: FleetSummary,
    *,
    backend: str,
    wall_s: float,
    complete: bool = True,
) -> None:
    """``fleet.json`` (rigs and aggregate; ``complete`` false while the run goes on or
    after it was stopped) and ``fleet.html``."""
    from simgap.report.fleet import write_fleet_report

    doc = {
        "arms": [asdict(r) for r in results],
        "backend": backend,
        "wall_s": wall_s,
        "complete": complete,
        "summary": summary.to_dict(),
    }
    atomic_write_json(out / FLEET_FILE, doc)
    write_fleet_report(doc, out / FLEET_HTML)
