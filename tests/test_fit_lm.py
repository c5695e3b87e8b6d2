"""The damping schedule of the one batched Levenberg-Marquardt (``simgap.fit.lm``)."""

from __future__ import annotations

import numpy as np

from simgap.fit.lm import LAMBDA_MAX, damped_step, lm_fit, next_damping


def test_undamped_step_is_gauss_newton_and_damping_shortens_it() -> None:
    rng = np.random.default_rng(0)
    jac = rng.normal(size=(2, 30, 3))
    r = rng.normal(size=(2, 30))
    A = np.einsum("prk,prl->pkl", jac, jac)
    g = np.einsum("prk,pr->pk", jac, r)
    gn = damped_step(A, g, np.zeros(2))
    want = np.stack([np.linalg.lstsq(jac[p], -r[p], rcond=None)[0] for p in range(2)])
    np.testing.assert_allclose(gn, want, rtol=1e-10)
    damped = damped_step(A, g, np.array([1.0, 10.0]))
    assert np.all(np.linalg.norm(damped, axis=1) < np.linalg.norm(gn, axis=1))


def test_schedule_divides_on_accept_multiplies_on_reject_and_stops() -> None:
    lam, done = next_damping(
        np.array([3e-2, 1e-2, 3e5, 1e-2]),
        np.array([True, False, False, True]),
        np.array([0.5, 0.0, 0.0, 1e-9]),
        tol=1e-5,
    )
    np.testing.assert_allclose(lam, [1e-2, 4e-2, 1.2e6, 1e-2 / 3])
    assert done.tolist() == [False, False, True, True]
    assert lam[2] > LAMBDA_MAX


def test_lm_fit_recovers_each_folds_own_line() -> None:
    t = np.linspace(0.0, 1.0, 50)
    truth = np.array([[0.3, 0.6], [0.7, 0.2]])

    def resid(theta: np.ndarray, fold: np.ndarray) -> np.ndarray:
        return theta[:, :1] + theta[:, 1:] * t[None] - (truth[fold, :1] + truth[fold, 1:] * t)

    fit = lm_fit(resid, np.full((2, 2), 0.5), np.ones((2, 50)), np.zeros(2), np.ones(2), iters=60)
    np.testing.assert_allclose(fit.theta, truth, atol=1e-3)
