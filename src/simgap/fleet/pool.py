"""The rigs run in parallel: a pool of spawned local processes, or one Ray task per rig;
stopped, either cancels what is queued and ends its workers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from simgap.fleet.jobs import RigJob, RigResult
from simgap.fleet.worker import STOP_GRACE_S, diagnose_one, in_worker, watch_parent


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


def run_local(todo: list[RigJob], jobs: int, emit: Callable[[RigResult], None]) -> None:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ex = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=mp.get_context("spawn"),
        initializer=watch_parent,
        initargs=(os.getpid(),),
    )
    try:
        futs = {ex.submit(in_worker, j): j for j in todo}
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


def run_ray(todo: list[RigJob], address: str, jobs: int, emit: Callable[[RigResult], None]) -> None:
    from simgap.fit.ray_cluster import ray_init

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
