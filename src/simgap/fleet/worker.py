"""One rig diagnosed in a worker (a spawned process or a Ray task), under a guard of every
input, and the worker's stop when the fleet that started it is gone."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any

from simgap.errors import InputError, SimgapError
from simgap.fleet.arm_folders import written_files
from simgap.fleet.jobs import DIGEST_FILE, WRITTEN_FILE, RigJob, RigResult
from simgap.outputs import atomic_write_json, atomic_write_text, input_clash

PARENT_POLL_S = 0.5
"""How often a worker checks that the fleet that started it is still alive [s]."""


STOP_GRACE_S = 5.0
"""How long a stopped worker may take to clean up before it is killed [s]."""


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
            atomic_write_json(job.out / WRITTEN_FILE, written_files(job.out))
        status, error = "done", ""
    except SimgapError as e:
        status, error = "failed", str(e)
    return RigResult(
        job.name, str(job.rig), job.out.name, status, time.perf_counter() - t0, error, job.digest
    )


def _stop_self(signum: int, frame: Any) -> None:
    del frame
    raise SystemExit(128 + signum)


def watch_parent(parent: int) -> None:
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


def in_worker(job: RigJob) -> RigResult:
    """``diagnose_one`` in a pool worker: a stop (SIGTERM, SIGINT, the parent gone) ends the
    process once the diagnosis has unwound through its cleanup, instead of the pool catching
    the ``SystemExit`` and waiting for more work."""
    try:
        return diagnose_one(job)
    except SystemExit as e:
        sys.stderr.flush()
        os._exit(e.code if isinstance(e.code, int) else 1)
