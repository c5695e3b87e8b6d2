"""Diagnose every rig of a fleet, each into its own folder, then aggregate.

Rigs run in parallel: on local processes by default (``ProcessPoolExecutor``, spawned so
MuJoCo's threads are never forked), or on a Ray cluster, one task per rig (``ray``:
``local`` starts an instance on this machine, anything else is a validated address joined
through ``simgap.fit.backends.ray_init``). Inside a Ray task the rig's fits send their
candidate batches to the same cluster through ``simgap.fit.backends.RayBackend`` (actors
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

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError, SimgapError
from simgap.finding import Diagnosis, load_diagnosis
from simgap.fleet.aggregate import FleetSummary, aggregate
from simgap.fleet.closure import inputs_digest, rig_inputs
from simgap.outputs import atomic_write_json, atomic_write_text, input_clash, resolve_paths
from simgap.rig import load_rig
from simgap.sim.rig_names import load_checked_rig

DIGEST_FILE = "inputs.sha256"
WRITTEN_FILE = ".simgap-fleet-written.json"
"""In each arm's folder: every file the fleet wrote there (so that replacing the folder
later removes nothing else)."""
FLEET_FILE = "fleet.json"
FLEET_HTML = "fleet.html"
PARENT_POLL_S = 0.5
"""How often a worker checks that the fleet that started it is still alive [s]."""
STOP_GRACE_S = 5.0
"""How long a stopped worker may take to clean up before it is killed [s]."""

ProgressFn = Callable[[str], None]


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


def _files(folder: Path) -> list[str]:
    return sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()
    )


def _foreign_files(folder: Path, listed: bool) -> list[str]:
    """The files of an existing arm folder that no fleet run wrote: those missing from its
    ``WRITTEN_FILE``; all of them when it has none and is not an earlier fleet's (no
    ``inputs.sha256``, not listed in ``fleet.json``)."""
    files = _files(folder)
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


def diagnose_one(job: RigJob) -> RigResult:
    """Diagnose one rig into its folder (runs in a worker process or a Ray task), under a
    guard of every input the job carries: the worker checks its own output, whatever the
    process that started it knew."""
    from simgap.diagnose import diagnose_rig
    from simgap.fit.backends import mark_compute_noted
    from simgap.outputs import guard_inputs

    t0 = time.perf_counter()
    mark_compute_noted(job.rig)  # the fleet said it once, not each worker
    try:
        with guard_inputs(job.inputs):
            clash = input_clash(job.out, job.inputs, folder=True)
            if clash is not None:
                raise InputError(
                    file=job.out,
                    expected="an arm folder apart from every input",
                    got=f"the folder {clash[0]} {clash[1]}",
                    fix="write the fleet to a folder apart from the rigs",
                )
            if job.ray_inner:
                from simgap.fit.backends import Compute

                diagnose_rig(job.rig, job.out, force=True, compute=Compute("ray", actor_cpus=0.0))
            else:
                diagnose_rig(job.rig, job.out, force=True, allow_rig_compute=job.allow_rig_compute)
            atomic_write_text(job.out / DIGEST_FILE, job.digest + "\n")
            atomic_write_json(job.out / WRITTEN_FILE, _files(job.out))
        status, error = "done", ""
    except SimgapError as e:
        status, error = "failed", str(e)
    return RigResult(
        job.name, str(job.rig), job.out.name, status, time.perf_counter() - t0, error, job.digest
    )


def _line(i: int, n: int, r: RigResult) -> str:
    if r.status == "cached":
        return f"[{i}/{n}] {r.name}: unchanged, kept ({r.folder}/findings.json)"
    if r.status == "failed":
        return f"[{i}/{n}] {r.name}: failed after {r.wall_s:.1f} s: {r.error}"
    return f"[{i}/{n}] {r.name}: diagnosed in {r.wall_s:.1f} s"


def _stderr(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _stop_self(signum: int, frame: Any) -> None:
    del frame
    raise SystemExit(128 + signum)


def _watch_parent(parent: int) -> None:
    """A worker's initializer: SIGTERM unwinds through the diagnosis' cleanup (its
    half-built folder is removed), and a thread stops the worker when the fleet that
    started it is gone (its parent changes: the fleet was killed and cannot stop it)."""
    signal.signal(signal.SIGTERM, _stop_self)
    signal.signal(signal.SIGINT, _stop_self)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os.kill(os.getpid(), signal.SIGTERM)  # the main thread cleans up ...
        time.sleep(STOP_GRACE_S)
        os._exit(143)  # ... unless it is stuck in native code

    threading.Thread(target=watch, name="simgap-fleet-parent", daemon=True).start()


def _in_worker(job: RigJob) -> RigResult:
    """``diagnose_one`` in a pool worker: a stop (SIGTERM, SIGINT, the parent gone) ends the
    process once the diagnosis has unwound through its cleanup, instead of the pool catching
    the ``SystemExit`` and waiting for more work."""
    try:
        return diagnose_one(job)
    except SystemExit as e:
        sys.stderr.flush()
        os._exit(e.code if isinstance(e.code, int) else 1)


def _stop_pool(ex: Any) -> None:
    """Cancel what is queued and terminate every worker (SIGTERM, then SIGKILL after
    ``STOP_GRACE_S``)."""
    procs = list((getattr(ex, "_processes", None) or {}).values())
    ex.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + STOP_GRACE_S
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


def _broken(job: RigJob, e: BaseException) -> RigResult:
    return RigResult(
        job.name,
        str(job.rig),
        job.out.name,
        "failed",
        0.0,
        f"its worker ended without a result ({type(e).__name__}: {e})",
        job.digest,
    )


def _run_local(todo: list[RigJob], jobs: int, emit: Callable[[RigResult], None]) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ex = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=mp.get_context("spawn"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    )
    try:
        futs = {ex.submit(_in_worker, j): j for j in todo}
        for f in as_completed(futs):
            try:
                r = f.result()
            except Exception as e:  # a worker died or hit a bug: that arm failed
                r = _broken(futs[f], e)
            emit(r)
    except BaseException:
        _stop_pool(ex)
        raise
    ex.shutdown(wait=True)


def _run_ray(
    todo: list[RigJob], address: str, jobs: int, emit: Callable[[RigResult], None]
) -> None:
    from simgap.fit.backends import ray_init

    ray, started = ray_init(address, num_cpus=jobs)
    pending: list[Any] = []
    try:
        task: Any = ray.remote(num_cpus=1)(diagnose_one)
        refs = {task.remote(j): j for j in todo}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    r = ray.get(ref)
                except Exception as e:  # the task died or hit a bug: that arm failed
                    r = _broken(refs[ref], e)
                emit(r)
    except BaseException:
        for ref in pending:  # stopped: nothing of ours runs on after the fleet
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001  (cancelling is best effort)
                pass
        raise
    finally:
        if started:
            ray.shutdown()


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
    from simgap.fit.backends import check_reachable, compute_ignored_note, parse_ray_address

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
                _run_local(todo, workers, emit)
            else:
                _run_ray(todo, ray, workers, emit)
        except BaseException:
            record("stopped")
            raise
    return record("")


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
