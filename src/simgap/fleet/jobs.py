"""The fleet's plan: one job per rig (``RigJob``), what became of it (``RigResult``),
the digest of its inputs, and the names of the files a fleet writes."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from simgap.errors import InputError
from simgap.fleet.closure import inputs_digest, rig_inputs
from simgap.rig import load_rig

DIGEST_FILE = "inputs.sha256"


WRITTEN_FILE = ".simgap-fleet-written.json"
"""In each arm's folder: every file the fleet wrote there (so that replacing the folder
later removes nothing else)."""


FLEET_FILE = "fleet.json"


FLEET_HTML = "fleet.html"


@dataclass(frozen=True)
class RigJob:
    """One rig to diagnose (picklable: it travels to a process or a Ray task).

    Attributes:
        name: the arm's name in the fleet (the rig's name, made unique).
        rig: the rig.toml.
        out: its folder under the fleet's ``DIR``.
        digest: the digest of its inputs (``rig_digest``).
        ray_inner: run the rig's fits on the Ray cluster the task runs in.
        inputs: every input of every rig of the run (resolved): the worker refuses to
            write over, into or around any of them.
        allow_rig_compute: the rig's ``[compute]`` section may choose a Ray cluster.
    """

    name: str
    rig: Path
    out: Path
    digest: str
    ray_inner: bool = False
    inputs: tuple[Path, ...] = ()
    allow_rig_compute: bool = False


@dataclass(frozen=True)
class RigResult:
    """What became of one rig.

    Attributes:
        name: the arm.
        rig: its rig.toml (as a string).
        folder: its folder, relative to the fleet's ``DIR``.
        status: ``done``, ``cached`` (inputs unchanged, not rerun), ``failed``,
            ``pending`` (not finished yet: ``fleet.json`` during a run) or ``stopped``
            (the run was stopped first; its folder is as it was).
        wall_s: seconds the diagnosis took (0 when cached) [s].
        error: the error's message when failed.
        digest: the digest of its inputs.
    """

    name: str
    rig: str
    folder: str
    status: str
    wall_s: float
    error: str = ""
    digest: str = ""


def rig_digest(rig_path: str | Path) -> str:
    """The digest of a rig's inputs: simgap's version, the rig.toml, its model's whole
    closure (includes, meshes, textures) and every evidence path, names and contents framed
    (``simgap.fleet.closure``)."""
    return inputs_digest(rig_inputs(rig_path))


def _slug(name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "arm"
    return f"{slug}-arm" if slug in (FLEET_FILE, FLEET_HTML) else slug  # not the fleet's files


def plan(
    rigs: Sequence[str | Path],
    out_dir: Path,
    *,
    ray_inner: bool = False,
    allow_rig_compute: bool = False,
) -> list[RigJob]:
    """One job per rig, with unique arm names and folders (``name``, ``name-2``, ...), each
    carrying every input of every rig.

    Raises:
        InputError: no rigs, or a rig does not load (every rig is checked before any runs).
    """
    if not rigs:
        raise InputError(
            field="RIG",
            expected="one or more rig.toml files",
            got="none",
            fix="pass each arm's rig.toml: simgap fleet a/rig.toml b/rig.toml",
        )
    named, seen = [], set()
    every: dict[Path, None] = {}
    for r in rigs:
        path = Path(os.path.realpath(r))
        name = _slug(load_rig(path).name)
        base, k = name, 2
        while name in seen:
            name, k = f"{base}-{k}", k + 1
        seen.add(name)
        inputs = rig_inputs(path)
        every.update((p, None) for _, p in inputs)
        named.append((name, path, inputs_digest(inputs)))
    out_abs = Path(os.path.abspath(out_dir))
    return [
        RigJob(name, path, out_abs / name, digest, ray_inner, tuple(every), allow_rig_compute)
        for name, path, digest in named
    ]
