"""What evaluates a batch of candidate parameter vectors (``Backend``), and the backend
on this machine: one ``Replayer`` with a persistent rollout thread pool, each log one
batched ``mujoco.rollout`` call across all candidates (``LocalBackend``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from simgap.fit.replay_problem import ReplayProblem


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
