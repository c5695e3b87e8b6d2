"""Each named option of the one batched LM (``simgap.fit.lm.lm_batch``) does what it says:
the losses reach their own optimum, the box holds, the line search's fractions are tried,
and the Jacobian policies difference when they say."""

from __future__ import annotations

import numpy as np
import pytest

from simgap.fit.jacobian import BlockDifferences, ForwardWithBase, JacobianPolicy
from simgap.fit.lm import LMOptions, LMRun, ResidualFn, lm_batch
from simgap.fit.loss import Loss, SumOfSquares, WeightedMAE

RNG = np.random.default_rng(7)
X = np.column_stack([np.ones(60), np.linspace(-1.0, 1.0, 60), np.linspace(-1.0, 1.0, 60) ** 2])
Y = X @ np.array([0.4, -1.2, 0.7]) + RNG.normal(0.0, 0.05, 60)
OUTLIERS = Y.copy()
OUTLIERS[[5, 17, 33, 48]] += 3.0  # a few gross errors, all one way


def linear(y: np.ndarray) -> ResidualFn:
    """Residuals X theta - y of candidates (M, 3); the tag is ignored."""

    def resid(theta: np.ndarray, tags: np.ndarray) -> np.ndarray:
        assert tags.shape == (theta.shape[0],)
        out: np.ndarray = theta @ X.T - y[None]
        return out

    return resid


def options(
    loss: Loss,
    jacobian: JacobianPolicy,
    fractions: tuple[float, ...] = (1.0,),
    iters: int = 30,
    tol: float = 1e-5,
) -> LMOptions:
    return LMOptions(loss, jacobian, fractions=fractions, iters=iters, tol=tol)


WIDE = (np.full(3, -10.0), np.full(3, 10.0))


@pytest.mark.parametrize("jacobian", [BlockDifferences(1e-3), ForwardWithBase(1e-6)])
def test_sum_of_squares_reaches_the_least_squares_solution(jacobian: JacobianPolicy) -> None:
    run = lm_batch(
        linear(Y),
        np.zeros((2, 3)),
        np.arange(2),
        *WIDE,
        options(SumOfSquares(), jacobian, iters=50, tol=1e-12),
    )
    want = np.linalg.lstsq(X, Y, rcond=None)[0]
    np.testing.assert_allclose(run.x, np.tile(want, (2, 1)), atol=1e-6)
    np.testing.assert_allclose(run.cost, np.sum((X @ want - Y) ** 2), rtol=1e-9)


def test_weighted_mae_lands_on_the_l1_fit_not_the_l2_one() -> None:
    run = lm_batch(
        linear(OUTLIERS),
        np.zeros((1, 3)),
        np.arange(1),
        *WIDE,
        options(WeightedMAE(np.ones((1, 60))), ForwardWithBase(1e-6), iters=200, tol=1e-12),
    )
    l2 = np.linalg.lstsq(X, OUTLIERS, rcond=None)[0]
    clean = np.linalg.lstsq(X, Y, rcond=None)[0]
    # the L1 fit ignores the four outliers (lands by the fit to the clean data); the L2 one
    # is pulled 3 * 4 / 60 = 0.2 up in its intercept
    assert abs(run.x[0, 0] - clean[0]) < 0.03 < 0.15 < abs(l2[0] - clean[0])
    mae = np.mean(np.abs(run.x[0] @ X.T - OUTLIERS))
    assert mae < np.mean(np.abs(l2 @ X.T - OUTLIERS))
    np.testing.assert_allclose(run.cost[0], mae, rtol=1e-12)


def test_weighted_mae_weights_choose_each_points_data() -> None:
    w = np.ones((2, 60))
    w[1, 30:] = 0.0  # the second point sees only the first half of the samples
    y = Y.copy()
    y[30:] += 1.0  # which the second half contradicts
    run = lm_batch(
        linear(y),
        np.zeros((2, 3)),
        np.arange(2),
        *WIDE,
        options(WeightedMAE(w), ForwardWithBase(1e-6), iters=200, tol=1e-12),
    )
    half = np.mean(np.abs(run.x[1] @ X[:30].T - y[:30]))
    assert half < 0.06  # near the noise's mean absolute value (0.04)
    assert np.mean(np.abs(run.x[0] @ X[:30].T - y[:30])) > 2 * half


@pytest.mark.parametrize("loss", [SumOfSquares(), WeightedMAE(np.ones((1, 60)))])
def test_the_box_holds_and_binds(loss: Loss) -> None:
    lo, hi = np.array([-10.0, -0.5, -10.0]), np.array([10.0, 10.0, 0.5])
    run = lm_batch(
        linear(Y),
        np.array([[5.0, 5.0, -20.0]]),  # the start outside the box is clipped into it
        np.arange(1),
        lo,
        hi,
        options(loss, ForwardWithBase(1e-6), fractions=(1.5, 1.0), iters=100, tol=1e-12),
    )
    assert np.all(run.x >= lo) and np.all(run.x <= hi)
    # the slope (-1.2) wants past -0.5, the curvature (0.7) past 0.5: both on the bound
    assert run.x[0, 1] == -0.5 and run.x[0, 2] == 0.5


def test_fractions_are_tried_in_one_batch_and_the_cheapest_kept() -> None:
    calls: list[int] = []
    base = linear(Y)

    def resid(theta: np.ndarray, tags: np.ndarray) -> np.ndarray:
        calls.append(theta.shape[0])
        return base(theta, tags)

    def one_step(fractions: tuple[float, ...]) -> np.ndarray:
        calls.clear()
        run = lm_batch(
            resid,
            np.zeros((2, 3)),
            np.arange(2),
            *WIDE,
            options(SumOfSquares(), BlockDifferences(1e-3), fractions=fractions, iters=1),
        )
        assert run.n_evals == sum(calls)
        return run.x

    x_all = one_step((2.0, 1.0, 0.5))
    assert calls == [2, 2 * 2 * 3, 2 * 3]  # start, central Jacobians, 3 fractions x 2 points
    x_one, x_half = one_step((1.0,)), one_step((0.5,))
    # from 0 the step's fractions are exact multiples; on a linear problem the (lightly
    # damped) Gauss-Newton step is the cheapest of the three
    assert np.array_equal(x_half, 0.5 * x_one) and not np.array_equal(x_half, x_one)
    assert np.array_equal(x_all, x_one)


def _kinked(theta: np.ndarray, tags: np.ndarray) -> np.ndarray:
    """|X theta - y| has a kink where each residual crosses zero: a forward slope misleads."""
    del tags
    out: np.ndarray = np.abs(theta @ X.T - Y[None]) + 0.1 * (theta @ X.T - Y[None])
    return out


def _jacobian_calls(jacobian: JacobianPolicy, iters: int) -> tuple[list[int], LMRun]:
    sizes: list[int] = []

    def resid(theta: np.ndarray, tags: np.ndarray) -> np.ndarray:
        sizes.append(theta.shape[0])
        return _kinked(theta, tags)

    run = lm_batch(
        resid,
        np.full((1, 3), 2.0),
        np.arange(1),
        *WIDE,
        options(SumOfSquares(), jacobian, iters=iters, tol=0.0),
    )
    return sizes, run


def test_forward_until_reject_switches_to_central_for_good() -> None:
    sizes, _ = _jacobian_calls(BlockDifferences(1e-3, central=False), 30)
    jac = sizes[1::2]  # start, then (Jacobian, trial) pairs while the point keeps moving
    assert jac[0] == 3  # forward: n candidates
    first_central = jac.index(6)  # central: 2 n, once a forward step was rejected
    assert 3 not in jac[first_central:]


def test_keep_on_reject_saves_the_jacobian_of_a_point_that_did_not_move() -> None:
    kept, run_kept = _jacobian_calls(BlockDifferences(1e-3), 30)
    fresh, run_fresh = _jacobian_calls(BlockDifferences(1e-3, keep_on_reject=False), 30)
    # a rejection costs one trial (1 candidate) when kept, a Jacobian (6) and a trial when not
    assert kept.count(6) < fresh.count(6)
    assert sum(kept) < sum(fresh)
    # at the same point the central Jacobian is the same: both take the same steps
    np.testing.assert_array_equal(run_kept.x, run_fresh.x)


def test_forward_with_base_evaluates_the_base_beside_its_candidates() -> None:
    sizes, _ = _jacobian_calls(ForwardWithBase(1e-6), 3)
    assert sizes == [1, 4, 1, 4, 1, 4, 1]  # start, then (base + n candidates, trial)
