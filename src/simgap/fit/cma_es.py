"""A global search that finds the optimum: CMA-ES (the ``cma`` package) with restarts, many
problems in lockstep, every candidate of every problem simulated in one batched call.

Each problem (one friction family on one fold's training logs) runs its own CMA-ES in the
unit cube of its parameter box. Every generation, all problems ask for their candidates,
``evaluate`` scores them together (one vectorised simulation, no per-candidate Python
loop), and each problem is told its costs. A problem whose CMA-ES stops (converged or
stalled) restarts from a new random point with twice the population (IPOP), until its
budget of evaluations is spent; the best point ever seen is kept. Everything derives from
the seed: the same seed gives the same fit, whatever the machine's speed.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Evaluate = Callable[[Sequence[np.ndarray]], Sequence[np.ndarray]]
"""Unit-cube candidates of each problem, shapes (m_k, n_k) -> their costs, shapes (m_k,)."""


@dataclass(frozen=True)
class CmaSettings:
    """Budget and restart policy.

    Attributes:
        evaluations: candidate evaluations per problem (all restarts together).
        sigma0: initial step size in the unit cube.
        popsize: first population (None: CMA-ES's default 4 + 3 ln n).
        max_restarts: most restarts per problem.
        tolfun: stop a run when the cost range falls below this [rad].
    """

    evaluations: int = 900
    sigma0: float = 0.25
    popsize: int | None = None
    max_restarts: int = 4
    tolfun: float = 2e-5


@dataclass(frozen=True)
class CmaResult:
    """Best unit-cube point and its cost per problem, evaluations spent, restarts made."""

    x: tuple[np.ndarray, ...]
    cost: np.ndarray
    evaluations: np.ndarray
    restarts: np.ndarray


class _Run:
    def __init__(
        self, n: int, x0: np.ndarray, sigma0: float, popsize: int, seed: int, tolfun: float
    ) -> None:
        opts = {
            "bounds": [0.0, 1.0],
            "popsize": popsize,
            "seed": seed,
            "verbose": -9,
            "tolfun": tolfun,
            "tolx": 1e-6,
            "CMA_elitist": False,
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import cma  # warns at import where matplotlib is absent (only cma.plot needs it)

            self.es = cma.CMAEvolutionStrategy(np.clip(x0, 0.0, 1.0).tolist(), sigma0, opts)
        self.n, self.popsize = n, popsize
        self.pending: list[np.ndarray] = []

    def ask(self) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.pending = self.es.ask()
        return np.clip(np.array(self.pending), 0.0, 1.0)

    def tell(self, cost: np.ndarray) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.es.tell(self.pending, [float(c) for c in cost])

    def stopped(self) -> bool:
        return bool(self.es.stop())


def minimize(
    dims: Sequence[int],
    evaluate: Evaluate,
    seed: int,
    settings: CmaSettings = CmaSettings(),
    x0: Sequence[np.ndarray | None] | None = None,
) -> CmaResult:
    """Minimise K problems in lockstep.

    Args:
        dims: dimension of each problem.
        evaluate: scores every problem's candidates at once.
        seed: the seed of everything random (starting points, CMA-ES's sampling).
        settings: budget and restarts.
        x0: optional first starting point per problem (unit cube); None: random.

    Returns:
        CmaResult.
    """
    K = len(dims)
    rng = np.random.default_rng(seed)
    seeds = rng.integers(1, 2**31 - 1, size=(K, settings.max_restarts + 1))
    starts = [rng.random(n) for n in dims]
    if x0 is not None:
        starts = [
            s if x is None else np.asarray(x, dtype=float) for s, x in zip(starts, x0, strict=True)
        ]
    pops = [settings.popsize or 4 + int(3 * np.log(n)) for n in dims]
    runs: list[_Run | None] = [
        _Run(n, starts[k], settings.sigma0, pops[k], int(seeds[k, 0]), settings.tolfun)
        for k, n in enumerate(dims)
    ]
    best_x = [np.full(n, 0.5) for n in dims]
    best_c = np.full(K, np.inf)
    spent = np.zeros(K, dtype=int)
    restarts = np.zeros(K, dtype=int)
    while True:
        active = [k for k in range(K) if runs[k] is not None]
        if not active:
            break
        asks = [runs[k].ask() for k in active]  # type: ignore[union-attr]
        costs = evaluate(asks) if len(active) == K else _evaluate_some(evaluate, dims, active, asks)
        for k, xs, c in zip(active, asks, costs, strict=True):
            run = runs[k]
            assert run is not None
            c = np.where(np.isfinite(c), c, 1e9)
            run.tell(c)
            spent[k] += xs.shape[0]
            i = int(np.argmin(c))
            if c[i] < best_c[k]:
                best_c[k], best_x[k] = float(c[i]), xs[i].copy()
            if spent[k] >= settings.evaluations:
                runs[k] = None
            elif run.stopped():
                if restarts[k] >= settings.max_restarts:
                    runs[k] = None
                    continue
                restarts[k] += 1
                start = np.random.default_rng(int(seeds[k, restarts[k]])).random(dims[k])
                runs[k] = _Run(
                    dims[k],
                    start,
                    settings.sigma0,
                    run.popsize * 2,
                    int(seeds[k, restarts[k]]),
                    settings.tolfun,
                )
    return CmaResult(x=tuple(best_x), cost=best_c, evaluations=spent, restarts=restarts)


def _evaluate_some(
    evaluate: Evaluate, dims: Sequence[int], active: list[int], asks: list[np.ndarray]
) -> list[np.ndarray]:
    """Evaluate only the active problems: the others get empty candidate arrays."""
    full: list[np.ndarray] = [np.empty((0, n)) for n in dims]
    for k, a in zip(active, asks, strict=True):
        full[k] = a
    out = evaluate(full)
    return [np.asarray(out[k]) for k in active]
