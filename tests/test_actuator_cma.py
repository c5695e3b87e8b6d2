"""The lockstep CMA-ES: finds known optima of several problems at once, restarts, and is
reproducible from its seed."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simgap.fit import cma_es as cma_fit

CENTRES = [np.array([0.2, 0.7]), np.array([0.8, 0.1, 0.4, 0.6])]


def _quadratic(asks: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [((a - c) ** 2).sum(axis=1) for a, c in zip(asks, CENTRES, strict=True)]


def test_finds_each_problems_optimum_in_one_batched_call() -> None:
    calls = []

    def ev(asks: Sequence[np.ndarray]) -> list[np.ndarray]:
        calls.append([a.shape for a in asks])
        return _quadratic(asks)

    res = cma_fit.minimize([2, 4], ev, seed=1, settings=cma_fit.CmaSettings(evaluations=600))
    for x, c in zip(res.x, CENTRES, strict=True):
        assert np.abs(x - c).max() < 1e-3
    assert all(len(shapes) == 2 for shapes in calls)  # both problems every generation
    assert np.all(res.evaluations <= 600 + 40)


def test_same_seed_same_result_other_seed_other_path() -> None:
    s = cma_fit.CmaSettings(evaluations=120)
    a = cma_fit.minimize([2, 4], _quadratic, seed=5, settings=s)
    b = cma_fit.minimize([2, 4], _quadratic, seed=5, settings=s)
    c = cma_fit.minimize([2, 4], _quadratic, seed=6, settings=s)
    assert all(np.array_equal(x, y) for x, y in zip(a.x, b.x, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a.x, c.x, strict=True))


def test_restarts_escape_a_local_minimum() -> None:
    # a deep narrow well at 0.9 and a wide shallow one at 0.2 (1-D, tiled to 2-D)
    def ev(asks: Sequence[np.ndarray]) -> list[np.ndarray]:
        out = []
        for a in asks:
            wide = 0.5 * ((a - 0.2) ** 2).sum(axis=1)
            deep = -1.0 * np.exp(-((a - 0.9) ** 2).sum(axis=1) / 0.03)
            out.append(wide + deep)
        return out

    res = cma_fit.minimize(
        [2],
        ev,
        seed=0,
        settings=cma_fit.CmaSettings(evaluations=4000, sigma0=0.08, max_restarts=8, tolfun=1e-9),
        x0=[np.array([0.2, 0.2])],
    )
    assert res.restarts[0] >= 1
    assert np.abs(res.x[0] - 0.9).max() < 0.05 and res.cost[0] < -0.5
