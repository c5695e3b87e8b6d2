"""Diagnose every rig of a fleet, each into its own folder, then aggregate.

Rigs run in parallel: on local processes by default (``ProcessPoolExecutor``, spawned so
MuJoCo's threads are never forked), or on a Ray cluster, one task per rig (``ray``:
``local`` starts an instance on this machine, anything else is a validated address joined
through ``simgap.fit.ray_cluster.ray_init``). Inside a Ray task the rig's fits send their
candidate batches to the same cluster through ``simgap.fit.ray_backend.RayBackend`` (actors
that reserve no CPU of their own: the task already holds one, so the tasks cannot starve
their actors). A rig's own ``[compute]`` section is ignored unless ``allow_rig_compute``.

Never over the user's files: every input of every rig (its rig.toml, its model's whole
closure, its evidence) is protected from every arm's folder, checked here before any work
and again inside each worker, which carries the inputs with it (``RigJob.inputs``: a
spawned process or a Ray task does not inherit the command's guard). An arm folder that
holds files no fleet run wrote (not in its ``WRITTEN_FILE`` list) is refused too: an arm's
folder is replaced whole.

Resumable: each rig's folder keeps ``inputs.sha256``, a digest of its inputs
(``simgap.fleet.closure.inputs_digest``); a rig whose digest is unchanged and whose
``findings.json`` is there is not diagnosed again. Progress, one line per rig, goes to
stderr; ``fleet.json`` is rewritten after each arm (and when the run is stopped): an arm
it calls done or cached holds findings of its current inputs.

Stopping: SIGINT or SIGTERM of the fleet cancels the queued rigs and terminates the
workers (Ray tasks are cancelled); a worker whose parent died (SIGKILL) notices within a
second and stops, so nothing diagnoses on after the fleet is gone.

Layout of ``DIR``: ``<arm>/`` (``findings.json``, ``report.html``, artifacts,
``inputs.sha256``) per rig, ``fleet.json`` (every rig's status and the aggregate) and
``fleet.html`` (the fleet report).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from simgap.errors import InputError
from simgap.fleet.aggregate import FleetSummary
from simgap.fleet.arm_folders import check_outputs, is_current
from simgap.fleet.jobs import RigResult, plan
from simgap.fleet.pool import run_local, run_ray
from simgap.fleet.summary import summarise, write_fleet
from simgap.fleet.worker import diagnose_one
from simgap.sim.rig_names import load_checked_rig

ProgressFn = Callable[[str], None]


def _line(i: int, n: int, r: RigResult) -> str:
    if r.status == "cached":
        return f"[{i}/{n}] {r.name}: unchanged, kept ({r.folder}/findings.json)"
    if r.status == "failed":
        return f"[{i}/{n}] {r.name}: failed after {r.wall_s:.1f} s: {r.error}"
    return f"[{i}/{n}] {r.name}: diagnosed in {r.wall_s:.1f} s"


def _stderr(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def run_fleet(
    rigs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    ray: str | None = None,
    jobs: int | None = None,
    progress: ProgressFn | None = _stderr,
    allow_rig_compute: bool = False,
) -> tuple[list[RigResult], FleetSummary]:
    """Diagnose every rig into ``out_dir/<arm>/`` (unchanged ones kept), aggregate, write
    ``fleet.json`` and ``fleet.html``.

    Args:
        rigs: each arm's rig.toml.
        out_dir: the fleet's folder (created; an earlier run's folder is resumed).
        ray: None for local processes; a Ray address (``auto``, ``host:port``,
            ``ray://host:port``), or ``local`` to start one here.
        jobs: rigs at once (local processes, or the CPUs of a local Ray instance); default
            min(number of rigs, CPU count).
        allow_rig_compute: let each rig's ``[compute]`` section choose a Ray cluster for
            its fits (ignored, and said once, otherwise; ``ray`` wins over it).

    Returns:
        every rig's result (fleet order) and the fleet summary of the rigs that have
        findings.

    Raises:
        InputError: a rig does not load, the ``ray`` address is not valid, or an output
            would touch a file the fleet did not write (nothing is written then).
    """
    from simgap.fit.backends import compute_ignored_note
    from simgap.fit.ray_cluster import check_reachable, parse_ray_address

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(
            file=out, expected="a folder for the fleet", got="a file", fix="name a folder"
        )
    if ray is not None:
        ray = parse_ray_address(ray)
    todo_all = plan(
        rigs, out, ray_inner=ray is not None, allow_rig_compute=allow_rig_compute and ray is None
    )
    check_outputs(out, todo_all)
    if ray is not None:
        check_reachable(ray)  # an unanswering cluster is an error before any work
    say = progress or (lambda m: None)
    if not allow_rig_compute or ray is not None:
        asked = [load_checked_rig(j.rig) for j in todo_all]
        asked = [r for r in asked if r.compute_backend == "ray"]
        if asked:
            say(compute_ignored_note(asked, command_line=ray))
    out.mkdir(parents=True, exist_ok=True)
    n = len(todo_all)
    results: dict[str, RigResult] = {}
    todo = []
    for j in todo_all:
        if is_current(j):
            results[j.name] = RigResult(
                j.name, str(j.rig), j.out.name, "cached", 0.0, digest=j.digest
            )
            say(_line(len(results), n, results[j.name]))
        else:
            todo.append(j)
    workers = max(1, min(jobs or (os.cpu_count() or 1), max(1, len(todo))))
    backend = f"ray:{ray}" if ray else "local"
    t0 = time.perf_counter()

    def snapshot(unfinished: str) -> list[RigResult]:
        return [
            results.get(j.name)
            or RigResult(j.name, str(j.rig), j.out.name, unfinished, 0.0, digest=j.digest)
            for j in todo_all
        ]

    def record(unfinished: str) -> tuple[list[RigResult], FleetSummary]:
        ordered = snapshot(unfinished)
        summary = summarise(out, ordered)
        write_fleet(
            out,
            ordered,
            summary,
            backend=backend,
            wall_s=time.perf_counter() - t0,
            complete=unfinished == "",
        )
        return ordered, summary

    def emit(r: RigResult) -> None:
        results[r.name] = r
        say(_line(len(results), n, r))
        record("pending")  # fleet.json follows the arms' folders, arm by arm

    if todo:
        record("pending")
        say(
            f"fleet: {len(todo)} of {n} rig(s) to diagnose on "
            + (f"Ray ({ray})" if ray else f"{workers} local process(es)")
        )
        try:
            if ray is None and workers == 1:  # one at a time: no process to spawn
                for j in todo:
                    emit(diagnose_one(j))
            elif ray is None:
                run_local(todo, workers, emit)
            else:
                run_ray(todo, ray, workers, emit)
        except BaseException:
            record("stopped")
            raise
    return record("")
