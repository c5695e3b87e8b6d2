"""The fleet's output folders, checked before any work: no arm folder on or around an
input, none holding files no fleet run wrote; and whether an arm's findings are current."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from simgap.errors import InputError
from simgap.fleet.jobs import DIGEST_FILE, FLEET_FILE, FLEET_HTML, WRITTEN_FILE, RigJob
from simgap.outputs import input_clash


def _listed_folders(out: Path) -> set[str]:
    """The arm folders an earlier run's ``fleet.json`` names."""
    try:
        doc = json.loads((out / FLEET_FILE).read_text(encoding="utf-8"))
        return {str(a["folder"]) for a in doc["arms"] if isinstance(a, dict)}
    except (OSError, ValueError, KeyError, TypeError):
        return set()


def check_outputs(out: Path, jobs: Sequence[RigJob]) -> None:
    """Refuse, before any work, a fleet whose outputs would touch a file it did not write:
    an arm folder that is, holds or lies inside any input of any rig; ``fleet.json`` or
    ``fleet.html`` on an input; the fleet folder inside an input; an arm folder that exists
    with files no fleet run wrote (it would be replaced whole). Every problem is named.

    Raises:
        InputError: naming each output, the input or file it would remove, and the fix.
    """
    inputs = jobs[0].inputs if jobs else ()
    problems: list[str] = []
    for target, folder in ((out, False), (out / FLEET_FILE, False), (out / FLEET_HTML, False)):
        clash = input_clash(target, inputs, folder=folder)
        if clash is not None:
            problems.append(f"{target} {clash[0]} {clash[1]}")
    listed = _listed_folders(out)
    for j in jobs:
        clash = input_clash(j.out, inputs, folder=True)
        if clash is not None:
            problems.append(f"arm {j.name}: its folder {j.out} {clash[0]} {clash[1]}")
        elif j.out.exists() and not j.out.is_dir():
            problems.append(f"arm {j.name}: {j.out} is a file, not a folder")
        elif j.out.is_dir():
            foreign = _foreign_files(j.out, j.out.name in listed)
            if foreign:
                shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
                problems.append(
                    f"arm {j.name}: its folder {j.out} holds {len(foreign)} "
                    f"file(s) no fleet run wrote ({shown}), which replacing it "
                    "would remove"
                )
    if problems:
        raise InputError(
            file=out,
            expected="a fleet folder whose arm folders hold none of the rigs' "
            "inputs (rig.toml, model and its includes and meshes, evidence) and no other "
            "files (each arm's folder is replaced whole)",
            got="; ".join(problems),
            fix="write the fleet to a folder apart from the rigs and from other files, e.g. "
            "--out fleet-out, or move those files out (nothing was written)",
        )


def written_files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()
    )


def _foreign_files(folder: Path, listed: bool) -> list[str]:
    """The files of an existing arm folder that no fleet run wrote: those missing from its
    ``WRITTEN_FILE``; all of them when it has none and is not an earlier fleet's (no
    ``inputs.sha256``, not listed in ``fleet.json``)."""
    files = written_files(folder)
    try:
        written = set(json.loads((folder / WRITTEN_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        legacy = listed or (folder / DIGEST_FILE).is_file()  # a run killed before the list
        return [] if legacy else files
    return [f for f in files if f not in written and f != WRITTEN_FILE]


def is_current(job: RigJob) -> bool:
    """True when the job's folder holds findings made from the same inputs."""
    d = job.out / DIGEST_FILE
    return (
        (job.out / "findings.json").is_file()
        and d.is_file()
        and d.read_text(encoding="utf-8").strip() == job.digest
    )
