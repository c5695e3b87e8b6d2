"""Evaluate batches of candidate parameter vectors -> residuals, locally or on Ray.

A ``ReplayProblem`` is a picklable description of one identification problem: the model
(an MJCF path or text), the logs to replay, what to score (joint positions, the 6D
end-effector pose, or the object's position) against which logged targets, and the
parameters searched. A backend turns a batch ``X`` of normalised parameter vectors,
shape (k, n), into residuals, shape (k, m):

- ``LocalBackend``: one ``Replayer`` with a persistent rollout thread pool; each log is one
  batched ``mujoco.rollout`` call across all k candidates.
- ``RayBackend``: the same work split across Ray actors, each holding its own
  ``LocalBackend`` (``ray_init`` joins a cluster; without an address a local instance
  starts). Ray is an optional extra, imported only here and only when used.

Joining a cluster sends it the model and the logs and runs what comes back, so only the
command line chooses one (``--ray ADDRESS``): a rig file's ``[compute]`` section is
obeyed only with ``--allow-rig-compute`` (``compute_context``), and said to be ignored
otherwise. Addresses are validated (``parse_ray_address``), and a cluster that does not
answer within ``RAY_CONNECT_TIMEOUT_S`` is a clear error, not a hang; Ray's own logging is
kept off the terminal.

Both return identical numbers for identical inputs (rollouts are deterministic), so a
seeded search gives the same result on either. The pieces live in ``replay_problem``,
``local_backend``, ``ray_backend`` and ``ray_cluster``; this module chooses one
(``Compute``, ``make_backend``, ``compute_context``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.fit.local_backend import Backend, LocalBackend
from simgap.fit.ray_backend import RayBackend
from simgap.fit.ray_cluster import check_reachable, parse_ray_address
from simgap.fit.replay_problem import ReplayProblem


@dataclass(frozen=True)
class Compute:
    """Where a fit's candidate batches run, passed explicitly to whatever makes a backend
    (no module state chooses it): what ``--ray ADDRESS`` and an allowed rig's
    ``[compute]`` section select.

    Attributes:
        kind: ``local`` (threads on this machine) or ``ray``.
        address: the Ray cluster (``local`` or None: an instance on this machine); only the
            form is checked here, Ray itself is needed at the first fit.
        num_workers: Ray actors (None: one per CPU the cluster offers).
        actor_cpus: CPUs each actor reserves (0 inside a Ray task of the fleet).
    """

    kind: str = "local"
    address: str | None = None
    num_workers: int | None = None
    actor_cpus: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in ("local", "ray"):
            raise InputError(field="compute.backend", expected="'local' or 'ray'", got=self.kind)
        address = self.address
        if self.kind == "ray" and address is not None:
            address = parse_ray_address(address, need_extra=False)
        object.__setattr__(self, "address", None if address in (None, "local") else address)


LOCAL = Compute()
"""Local threads: the default of every fit."""


def make_backend(
    problem: ReplayProblem,
    compute: Compute | str = LOCAL,
    *,
    address: str | None = None,
    nthread: int | None = None,
    num_cpus: int | None = None,
) -> Backend:
    """The backend ``compute`` names (a ``Compute``, or ``local`` / ``ray`` with
    ``address``).

    Raises:
        InputError: a kind that is neither ``local`` nor ``ray``.
    """
    if isinstance(compute, str):
        if compute not in ("local", "ray"):
            raise InputError(field="backend", expected="'local' or 'ray'", got=compute)
        compute = Compute(compute, address=address)
    if compute.kind == "local":
        return LocalBackend(problem, nthread=nthread)
    return RayBackend(
        problem,
        address=compute.address,
        num_cpus=num_cpus,
        num_workers=compute.num_workers,
        actor_cpus=compute.actor_cpus,
    )


_NOTED: set[str] = set()
"""The rig files whose ignored ``[compute]`` section was already said (once each)."""


def mark_compute_noted(source: str | Path | None) -> None:
    """Do not say again that ``source``'s ``[compute]`` section is ignored (the caller
    said it)."""
    if source is not None:
        _NOTED.add(os.path.realpath(source))


def compute_ignored_note(rigs: Sequence[Any], *, command_line: str | None = None) -> str:
    """The sentence that says the rigs' ``[compute]`` sections were ignored, and why."""
    names = ", ".join(
        f"{r.source or r.name} (address {r.compute_address or 'local'})" for r in rigs
    )
    if command_line is not None:
        return (
            f"note: the [compute] section of {names} was ignored: --ray "
            f"{command_line} on the command line chooses where the fits run."
        )
    return (
        f"note: the [compute] section of {names} was ignored: a rig file does not "
        "choose a Ray cluster by itself, since the model and the logs would be sent "
        "to it and what it returns run here. To use it: --ray ADDRESS, or "
        "--allow-rig-compute."
    )


def compute_context(
    rig: Any, ray_address: str | None = None, *, allow_rig_compute: bool = False
) -> Compute:
    """Where a rig's fits run: Ray at ``ray_address`` when the command line names one; the
    rig's ``[compute]`` Ray cluster only with ``allow_rig_compute`` (otherwise it is said,
    once per rig file, to be ignored); else local threads.

    Raises:
        InputError: a malformed address (the command line's, or an allowed rig's).
        MissingExtraError: Ray (or Ray Client) is not installed.
    """
    if ray_address is not None:
        ray_address = parse_ray_address(ray_address)
        check_reachable(ray_address)  # before the long work, not at the first fit
        return Compute("ray", address=ray_address)
    if rig.compute_backend != "ray":
        return LOCAL
    if allow_rig_compute:
        address = parse_ray_address(
            rig.compute_address or "local", field=f"{rig.source}: compute.address"
        )
        check_reachable(address)
        return Compute("ray", address=address)
    key = os.path.realpath(rig.source) if rig.source is not None else rig.name
    if key not in _NOTED:
        _NOTED.add(key)
        sys.stderr.write(compute_ignored_note([rig]) + "\n")
        sys.stderr.flush()
    return LOCAL
