"""Diagnose every rig of a fleet, each into its own folder, then aggregate.

Rigs run in parallel: on local processes by default (``ProcessPoolExecutor``, spawned so
MuJoCo's threads are never forked), or on a Ray cluster, one task per rig (``ray``:
``local`` starts an instance on this machine, anything else is passed to
``ray.init(address=...)``). Inside a Ray task the rig's fits send their candidate batches to
the same cluster through ``simgap.fit.backends.RayBackend`` (actors that reserve no CPU of
their own: the task already holds one, so the tasks cannot starve their actors).

Resumable: each rig's folder keeps ``inputs.sha256``, a digest of its rig.toml, its model
and every evidence file; a rig whose digest is unchanged and whose ``findings.json`` is
there is not diagnosed again. Progress, one line per rig, goes to stderr.

Layout of ``DIR``: ``<arm>/`` (``findings.json``, ``report.html``, artifacts,
``inputs.sha256``) per rig, ``fleet.json`` (every rig's status and the aggregate) and
``fleet.html`` (the fleet report).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError, SimgapError
from simgap.finding import Diagnosis, load_diagnosis
from simgap.fleet.aggregate import FleetSummary, aggregate
from simgap.outputs import atomic_write_json, atomic_write_text
from simgap.rig import load_rig

DIGEST_FILE = "inputs.sha256"
FLEET_FILE = "fleet.json"

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
    """

    name: str
    rig: Path
    out: Path
    digest: str
    ray_inner: bool = False


@dataclass(frozen=True)
class RigResult:
    """What became of one rig.

    Attributes:
        name: the arm.
        rig: its rig.toml (as a string).
        folder: its folder, relative to the fleet's ``DIR``.
        status: ``done``, ``cached`` (inputs unchanged, not rerun) or ``failed``.
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


def _hash_path(h: Any, p: Path) -> None:
    if p.is_dir():
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            h.update(str(f.relative_to(p)).encode())
            _hash_file(h, f)
    elif p.is_file():
        _hash_file(h, p)
    else:
        h.update(b"<missing>")


def _hash_file(h: Any, f: Path) -> None:
    with f.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)


def rig_digest(rig_path: str | Path) -> str:
    """SHA-256 over the rig.toml, its model file and every evidence path it names (folders
    walked in sorted order, names and contents)."""
    rig_path = Path(rig_path)
    rig = load_rig(rig_path)
    h = hashlib.sha256()
    h.update(rig_path.read_bytes())
    h.update(b"\0model\0")
    _hash_path(h, rig.model_path)
    for key, p in rig.evidence.paths():
        h.update(f"\0{key}\0".encode())
        _hash_path(h, p)
    return h.hexdigest()


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "arm"


def plan(rigs: Sequence[str | Path], out_dir: Path, *, ray_inner: bool = False
         ) -> list[RigJob]:
    """One job per rig, with unique arm names and folders (``name``, ``name-2``, ...).

    Raises:
        InputError: no rigs, or a rig does not load (every rig is checked before any runs).
    """
    if not rigs:
        raise InputError(field="RIG", expected="one or more rig.toml files", got="none",
                         fix="pass each arm's rig.toml: simgap fleet a/rig.toml b/rig.toml")
    jobs, seen = [], set()
    for r in rigs:
        path = Path(r).resolve()
        name = _slug(load_rig(path).name)
        base, k = name, 2
        while name in seen:
            name, k = f"{base}-{k}", k + 1
        seen.add(name)
        jobs.append(RigJob(name, path, out_dir / name, rig_digest(path), ray_inner))
    return jobs


def is_current(job: RigJob) -> bool:
    """True when the job's folder holds findings made from the same inputs."""
    d = job.out / DIGEST_FILE
    return (job.out / "findings.json").is_file() and d.is_file() and \
        d.read_text(encoding="utf-8").strip() == job.digest


def diagnose_one(job: RigJob) -> RigResult:
    """Diagnose one rig into its folder (runs in a worker process or a Ray task)."""
    from simgap.diagnose import diagnose_rig

    t0 = time.perf_counter()
    try:
        (job.out / DIGEST_FILE).unlink(missing_ok=True)
        if job.ray_inner:
            from simgap.fit.backends import use_backend

            with use_backend("ray", actor_cpus=0.0):
                diagnose_rig(job.rig, job.out, force=True)
        else:
            diagnose_rig(job.rig, job.out, force=True)
        atomic_write_text(job.out / DIGEST_FILE, job.digest + "\n")
        status, error = "done", ""
    except SimgapError as e:
        status, error = "failed", str(e)
    return RigResult(job.name, str(job.rig), job.out.name, status,
                     time.perf_counter() - t0, error, job.digest)


def _line(i: int, n: int, r: RigResult) -> str:
    if r.status == "cached":
        return f"[{i}/{n}] {r.name}: unchanged, kept ({r.folder}/findings.json)"
    if r.status == "failed":
        return f"[{i}/{n}] {r.name}: failed after {r.wall_s:.1f} s: {r.error}"
    return f"[{i}/{n}] {r.name}: diagnosed in {r.wall_s:.1f} s"


def _stderr(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _run_local(todo: list[RigJob], jobs: int, emit: Callable[[RigResult], None]) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn")) as ex:
        futs = [ex.submit(diagnose_one, j) for j in todo]
        for f in as_completed(futs):
            emit(f.result())


def _run_ray(todo: list[RigJob], address: str, jobs: int,
             emit: Callable[[RigResult], None]) -> None:
    try:
        import ray
    except ImportError as e:
        from simgap.errors import MissingExtraError

        raise MissingExtraError("ray", "ray", "simgap fleet --ray") from e
    started = False
    if not ray.is_initialized():
        if address == "local":
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False,
                     configure_logging=False)
        else:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        task: Any = ray.remote(num_cpus=1)(diagnose_one)
        pending = [task.remote(j) for j in todo]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                emit(ray.get(ref))
    finally:
        if started:
            ray.shutdown()


def run_fleet(rigs: Sequence[str | Path], out_dir: str | Path, *, ray: str | None = None,
              jobs: int | None = None, progress: ProgressFn | None = _stderr,
              ) -> tuple[list[RigResult], FleetSummary]:
    """Diagnose every rig into ``out_dir/<arm>/`` (unchanged ones kept), aggregate, write
    ``fleet.json`` and ``fleet.html``.

    Args:
        rigs: each arm's rig.toml.
        out_dir: the fleet's folder (created; an earlier run's folder is resumed).
        ray: None for local processes; a Ray address, or ``local`` to start one here.
        jobs: rigs at once (local processes, or the CPUs of a local Ray instance); default
            min(number of rigs, CPU count).

    Returns:
        every rig's result (fleet order) and the fleet summary of the rigs that have
        findings.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(file=out, expected="a folder for the fleet", got="a file",
                         fix="name a folder")
    out.mkdir(parents=True, exist_ok=True)
    todo_all = plan(rigs, out, ray_inner=ray is not None)
    n = len(todo_all)
    say = progress or (lambda m: None)
    results: dict[str, RigResult] = {}
    todo = []
    for j in todo_all:
        if is_current(j):
            results[j.name] = RigResult(j.name, str(j.rig), j.out.name, "cached", 0.0,
                                        digest=j.digest)
            say(_line(len(results), n, results[j.name]))
        else:
            todo.append(j)
    workers = max(1, min(jobs or (os.cpu_count() or 1), max(1, len(todo))))
    t0 = time.perf_counter()

    def emit(r: RigResult) -> None:
        results[r.name] = r
        say(_line(len(results), n, r))

    if todo:
        say(f"fleet: {len(todo)} of {n} rig(s) to diagnose on "
            + (f"Ray ({ray})" if ray else f"{workers} local process(es)"))
        if ray is None and workers == 1:  # one at a time: no process to spawn
            for j in todo:
                emit(diagnose_one(j))
        elif ray is None:
            _run_local(todo, workers, emit)
        else:
            _run_ray(todo, ray, workers, emit)
    wall = time.perf_counter() - t0
    ordered = [results[j.name] for j in todo_all]
    summary = summarise(out, ordered)
    write_fleet(out, ordered, summary, backend=f"ray:{ray}" if ray else "local",
                wall_s=wall)
    return ordered, summary


def summarise(out: Path, results: Sequence[RigResult]) -> FleetSummary:
    """The aggregate of every rig with findings (failed rigs are left out)."""
    arms = []
    for r in results:
        if r.status in ("done", "cached"):
            arms.append((r.name, json.loads((out / r.folder / "findings.json")
                                            .read_text(encoding="utf-8"))))
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
        rows = [RigResult(**{k: r[k] for k in ("name", "rig", "folder", "status")},
                          wall_s=float(r.get("wall_s", 0.0))) for r in doc["arms"]]
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise InputError(file=path, field="arms", expected="a fleet.json written by "
                         "'simgap fleet'", got=repr(e)) from None
    usable = [r for r in rows if r.status in ("done", "cached")
              and (out / r.folder / "findings.json").is_file()]
    if not usable:
        raise InputError(file=path, field="arms", expected="at least one arm with findings",
                         got=f"{len(rows)} arm(s), none diagnosed",
                         fix="rerun 'simgap fleet' on the rigs")
    first = load_diagnosis(out / usable[0].folder / "findings.json")
    return summarise(out, usable), first, usable[0].rig


def write_fleet(out: Path, results: Sequence[RigResult], summary: FleetSummary, *,
                backend: str, wall_s: float) -> None:
    """``fleet.json`` (rigs and aggregate) and ``fleet.html``."""
    from simgap.report.fleet import write_fleet_report

    doc = {"arms": [asdict(r) for r in results], "backend": backend, "wall_s": wall_s,
           "summary": summary.to_dict()}
    atomic_write_json(out / FLEET_FILE, doc)
    write_fleet_report(doc, out / "fleet.html")
