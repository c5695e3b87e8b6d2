"""The evaluation of candidate batches spread over Ray actors, each holding its own
``LocalBackend`` with one thread."""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.fit.local_backend import LocalBackend
from simgap.fit.ray_cluster import ray_init
from simgap.fit.replay_problem import ReplayProblem


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
