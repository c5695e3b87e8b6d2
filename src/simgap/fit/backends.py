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
seeded search gives the same result on either.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from simgap.errors import InputError, MissingExtraError, SimgapError
from simgap.fit.params import ParamSet

ScoreKind = Literal["joints", "ee", "object"]


def quat_half_angle_vectors(q_ref: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Half rotation vectors of ``q_ref^-1 q`` (w, x, y, z quaternions), shape (..., 3).

    The norm of each vector is theta / 2, half the geodesic angle between the two
    orientations, which equals SIMPLER's arcsin(||R1 - R2||_F / (2 sqrt 2)) exactly.
    """
    w1, v1 = q_ref[..., :1], q_ref[..., 1:]
    w2, v2 = q[..., :1], q[..., 1:]
    w = w1 * w2 + np.sum(v1 * v2, axis=-1, keepdims=True)
    v = w1 * v2 - w2 * v1 - np.cross(v1, v2)
    sign = np.where(w < 0, -1.0, 1.0)
    w, v = w * sign, v * sign
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    half = np.arctan2(n, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(n > 1e-15, v / np.maximum(n, 1e-300), 0.0)
    out: np.ndarray = unit * half
    return out


def simpler_loss(
    pos: np.ndarray, quat: np.ndarray, pos_ref: np.ndarray, quat_ref: np.ndarray
) -> float:
    """SIMPLER's pose loss: mean translation error [m] + mean half-angle rotation error
    [rad] (weight 1), over samples. Shapes (T, 3) and (T, 4)."""
    trans = np.linalg.norm(pos - pos_ref, axis=-1)
    rot = np.linalg.norm(quat_half_angle_vectors(quat_ref, quat), axis=-1)
    return float(np.mean(trans) + np.mean(rot))


@dataclass(frozen=True)
class ReplayProblem:
    """One identification problem (picklable).

    Attributes:
        model: an MJCF file path, or MJCF text when ``model_is_xml``.
        joints: the logged joints (model names).
        logs: the logged command sequences (``simgap.sim.replay.ReplayLog``).
        targets: per log, what the robot did: joint positions (T, J) [rad] for
            ``joints``; (T, 7) position + quaternion for ``ee``; (T, 3) positions [m] for
            ``object``.
        params: the parameters searched.
        score: what is compared: ``joints``, ``ee`` or ``object``.
        ee_site: the end-effector site/body (``ee``).
        object_body: the object body (``object``).
        interp: command expansion, ``hold`` or ``linear``.
        delay_s: command transport delay [s].
        physics_dt: physics step [s]; None keeps the model's.
        strip: strip visual-only geoms and unused meshes before compiling.
        rot_weight: weight of the rotation residual against translation (``ee``).
    """

    model: str
    joints: tuple[str, ...]
    logs: tuple[Any, ...]
    targets: tuple[np.ndarray, ...]
    params: ParamSet
    score: ScoreKind = "joints"
    model_is_xml: bool = False
    ee_site: str | None = None
    object_body: str | None = None
    interp: str = "hold"
    delay_s: float = 0.0
    physics_dt: float | None = None
    strip: bool = True
    rot_weight: float = 1.0

    def __post_init__(self) -> None:
        if len(self.logs) != len(self.targets):
            raise InputError(
                field="targets", expected=f"{len(self.logs)} target arrays", got=len(self.targets)
            )
        if self.score == "ee" and self.ee_site is None:
            raise InputError(
                field="model.ee_site",
                expected="an end-effector site or body",
                got="nothing",
                fix="set model.ee_site in rig.toml",
            )
        if self.score == "object" and self.object_body is None:
            raise InputError(
                field="model.object_body",
                expected="the pushed object's body",
                got="nothing",
                fix="set model.object_body in rig.toml",
            )

    def residual(self, result: Any, target: np.ndarray) -> np.ndarray:
        """Residuals of a batch of replays against one target, shape (B, m)."""
        if self.score == "joints":
            r = result.q - target[None]
        elif self.score == "ee":
            dp = result.ee_pos - target[None, :, :3]
            dr = (
                quat_half_angle_vectors(
                    np.broadcast_to(target[None, :, 3:], result.ee_quat.shape), result.ee_quat
                )
                * self.rot_weight
            )
            r = np.concatenate([dp, dr], axis=-1)
        else:
            r = result.obj_pos - target[None, :, :3]
        out: np.ndarray = r.reshape(r.shape[0], -1)
        return out


class Backend(Protocol):
    """Evaluates candidate parameter vectors."""

    problem: ReplayProblem

    def residuals(self, x: np.ndarray) -> np.ndarray:
        """Residuals of each row of ``x`` (k, n) -> (k, m)."""
        ...

    def close(self) -> None:
        """Release threads or workers."""
        ...


class LocalBackend:
    """Rollout threads on this machine (one per core unless ``nthread`` says)."""

    def __init__(self, problem: ReplayProblem, nthread: int | None = None) -> None:
        from simgap.sim.model import load_spec, spec_from_xml, strip_visuals
        from simgap.sim.replay import Replayer

        self.problem = problem
        spec = spec_from_xml(problem.model) if problem.model_is_xml else load_spec(problem.model)
        if problem.strip:
            spec = strip_visuals(spec)
        source = None if problem.model_is_xml else Path(problem.model)
        self.replayer = Replayer.build(
            spec,
            problem.joints,
            ee_site=problem.ee_site if problem.score == "ee" else None,
            object_body=problem.object_body,
            interp=problem.interp,
            delay_s=problem.delay_s,
            physics_dt=problem.physics_dt,
            nthread=nthread or (os.cpu_count() or 1),
            source=source,
        )
        self.n_evals = 0

    def models(self, x: np.ndarray) -> list[Any]:
        """Candidate models for rows of ``x``."""
        from simgap.sim.model import with_params

        base = self.replayer.model
        return [with_params(base, self.problem.params.writes(row)) for row in np.atleast_2d(x)]

    def replays(self, x: np.ndarray) -> list[Any]:
        """The raw replays (one ``ReplayResult`` per log) for rows of ``x``."""
        models = self.models(x)
        return [self.replayer.replay(models, log) for log in self.problem.logs]

    def residuals(self, x: np.ndarray) -> np.ndarray:
        """Residuals for each row of ``x``, shape (k, m)."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        self.n_evals += x.shape[0]
        parts = [
            self.problem.residual(res, tgt)
            for res, tgt in zip(self.replays(x), self.problem.targets, strict=True)
        ]
        out = np.concatenate(parts, axis=1)
        return np.where(np.isfinite(out), out, 1e3)

    def close(self) -> None:
        """End the rollout thread pool."""
        self.replayer.close()


class _RayWorker:
    """A Ray actor body: a LocalBackend with one thread."""

    def __init__(self, problem: ReplayProblem) -> None:
        self.backend = LocalBackend(problem, nthread=1)

    def residuals(self, x: np.ndarray) -> np.ndarray:
        return self.backend.residuals(x)


class RayBackend:
    """The same evaluation spread over Ray actors.

    Args:
        problem: the problem (shipped to each actor once).
        address: a Ray cluster address (``ray://host:port`` or ``auto``); None starts a
            local instance with ``num_cpus``.
        num_workers: actors to start (default: the cluster's CPU count).
        num_cpus: CPUs of a local instance.
        actor_cpus: CPUs each actor reserves (0 inside a Ray task that already holds its
            CPU, so a fleet's rig tasks cannot starve their own actors).
    """

    def __init__(
        self,
        problem: ReplayProblem,
        *,
        address: str | None = None,
        num_workers: int | None = None,
        num_cpus: int | None = None,
        actor_cpus: float = 1.0,
    ) -> None:
        ray, self._started = ray_init(address, num_cpus=num_cpus)
        self.problem = problem
        self._ray = ray
        n = num_workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor: Any = ray.remote(num_cpus=actor_cpus)(_RayWorker)
        self.workers: list[Any] = [actor.remote(problem) for _ in range(n)]
        self.n_evals = 0

    def residuals(self, x: np.ndarray) -> np.ndarray:
        """Residuals for each row of ``x`` (rows split evenly across actors)."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        self.n_evals += x.shape[0]
        chunks = [c for c in np.array_split(x, min(len(self.workers), x.shape[0])) if len(c)]
        futures = [w.residuals.remote(c) for w, c in zip(self.workers, chunks, strict=False)]
        out: np.ndarray = np.concatenate(self._ray.get(futures), axis=0)
        return out

    def close(self) -> None:
        """Stop the actors, and the local Ray instance if this backend started it."""
        for w in self.workers:
            self._ray.kill(w)
        self.workers = []
        if self._started:
            self._ray.shutdown()


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


RAY_CONNECT_TIMEOUT_S = 20.0
"""How long joining a Ray cluster may take before it is an error [s]."""

RAY_FORMS = (
    "'auto' (the cluster this machine belongs to), 'local' (start one here), "
    "'HOST:PORT' (a cluster's head, e.g. 10.0.0.5:6379) or 'ray://HOST:PORT' "
    "(Ray Client, e.g. ray://head:10001)"
)
"""The ``--ray`` address forms, as the messages name them."""

_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)"
_ADDRESS = re.compile(rf"(?P<client>ray://)?(?P<host>{_HOST}):(?P<port>[0-9]{{1,5}})")


def parse_ray_address(address: str, *, field: str = "--ray", need_extra: bool = True) -> str:
    """``address`` checked: ``auto``, ``local``, ``host:port`` or ``ray://host:port``
    (port 1..65535), returned stripped. With ``need_extra``, Ray is installed, and for a
    ``ray://`` address Ray Client (``ray[client]``, which brings ``grpcio``): checked here,
    before any work.

    Raises:
        InputError: any other form (``http://...``, no port, a path), naming the valid ones.
        MissingExtraError: Ray, or Ray Client for ``ray://``, is not installed.
    """
    s = address.strip() if isinstance(address, str) else ""
    m = _ADDRESS.fullmatch(s)
    if s not in ("auto", "local") and (m is None or not 1 <= int(m["port"]) <= 65535):
        raise InputError(
            field=field,
            expected=f"a Ray address: {RAY_FORMS}",
            got=repr(address),
            fix="name the cluster in one of these forms",
        )
    if not need_extra:
        return s
    if not _installed("ray"):
        raise MissingExtraError("ray", "ray", f"{field} {s}")
    if m is not None and m["client"] and not _installed("grpc"):
        raise MissingExtraError("ray", "ray[client]", f"The Ray Client address {s} (ray://)")
    return s


def _installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _host_port(address: str) -> tuple[str, int] | None:
    m = _ADDRESS.fullmatch(address)
    if m is None:
        return None
    return m["host"].strip("[]"), int(m["port"])


def _unreachable(address: str, why: str) -> SimgapError:
    return SimgapError(
        f"Ray: the cluster at {address} did not answer ({why}; waited at most "
        f"{RAY_CONNECT_TIMEOUT_S:g} s). Fix: check the address and that the cluster is "
        "running ('ray status' on its head), or leave --ray out to run here."
    )


_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client preface and an empty SETTINGS frame: a gRPC server (a Ray head's GCS,
a Ray Client server) answers with its own SETTINGS frame."""


def check_reachable(address: str) -> None:
    """For a ``host:port`` or ``ray://host:port`` address: the head accepts a TCP connection
    and answers as a gRPC server would, within ``RAY_CONNECT_TIMEOUT_S`` (checked before any
    work, and before ``ray.init``, which would wait minutes on an address that does not
    answer; ``auto`` and ``local`` are left to Ray).

    Raises:
        SimgapError: nothing answered, or what answered is not a Ray head, naming the
            address and the time waited.
    """
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=RAY_CONNECT_TIMEOUT_S) as sock:
            sock.settimeout(RAY_CONNECT_TIMEOUT_S)
            sock.sendall(_H2_PREFACE)
            head = sock.recv(9)
    except TimeoutError:
        raise _unreachable(address, "no answer in time") from None
    except OSError as e:
        raise _unreachable(address, e.strerror or str(e)) from None
    if len(head) < 4 or head[3] != 4:  # not an HTTP/2 SETTINGS frame
        raise _unreachable(address, "something answered, but not a Ray head (no gRPC)")


def ray_init(address: str | None, *, num_cpus: int | None = None) -> tuple[Any, bool]:
    """Ray, initialised: joined to ``address`` (validated; ``None`` or ``local`` starts an
    instance on this machine with ``num_cpus``), unless this process already is. Returns
    ``(ray, started)``; ``started`` says whether the caller should ``ray.shutdown()``.

    A ``host:port`` or ``ray://host:port`` is first reached directly (``check_reachable``:
    the head must answer as a gRPC server within ``RAY_CONNECT_TIMEOUT_S``), since
    ``ray.init`` itself waits minutes on an address that does not answer. Ray's logging
    stays off the terminal (errors only, workers' output not forwarded).

    Raises:
        InputError: a malformed address.
        MissingExtraError: Ray (or Ray Client, for ``ray://``) is not installed.
        SimgapError: the cluster did not answer, or refused to be joined.
    """
    if address is not None:
        address = parse_ray_address(address)
    try:
        import ray
    except ImportError as e:
        raise MissingExtraError("ray", "ray", "Running on Ray") from e
    if ray.is_initialized():
        return ray, False
    quiet: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
    }
    if address in (None, "local"):
        ray.init(num_cpus=num_cpus or (os.cpu_count() or 1), **quiet)
        return ray, True
    check_reachable(address)
    try:
        ray.init(address=address, **quiet)
    except SimgapError:
        raise
    except Exception as e:  # noqa: BLE001  (Ray raises ConnectionError, RuntimeError, ...)
        raise _unreachable(address, f"{type(e).__name__}: {str(e)[:200]}") from None
    return ray, True


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
