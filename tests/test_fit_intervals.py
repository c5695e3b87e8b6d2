"""The one interval rule of the fits (``simgap.fit.intervals``)."""

from __future__ import annotations

import numpy as np

from simgap.fit.intervals import NULL_REASON, jacobian_intervals, pinv_solve, t_quantile
from simgap.fit.profile import block_intervals


def _ols(
    rng: np.random.Generator,
    a: np.ndarray,
    truth: np.ndarray,
    sd: float,
) -> tuple[np.ndarray, np.ndarray]:
    b = a @ truth + rng.normal(0.0, sd, a.shape[0])
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    return x, a @ x - b


def test_a_small_sample_t_interval_holds_the_truth_about_95_percent() -> None:
    rng = np.random.default_rng(7)
    truth = np.array([1.0, -0.5, 2.0])
    trials, held = 2000, 0
    for _ in range(trials):
        a = rng.normal(size=(8, 3))  # 5 degrees of freedom: t, not 1.96
        x, r = _ols(rng, a, truth, 0.3)
        iv = jacobian_intervals(a, r)
        held += int(abs(x[0] - truth[0]) <= iv.half_width[0])
    assert iv.dof == 5 and iv.quantile == t_quantile(5)
    # binomial sd at 95 % over 2000 trials is 0.5 %; a normal quantile gives ~91 %
    assert 0.935 <= held / trials <= 0.965


def test_a_null_direction_withholds_the_interval_with_its_reason() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(50, 3))
    a[:, 1] = 2.0 * a[:, 0]  # two parameters the data cannot tell apart
    x, r = _ols(rng, a, np.array([1.0, 0.0, 3.0]), 0.1)
    iv = jacobian_intervals(a, r)
    assert np.isinf(iv.half_width[:2]).all() and np.isfinite(iv.half_width[2])
    assert iv.withheld[:2] == (NULL_REASON, NULL_REASON) and iv.withheld[2] == ""
    assert iv.cond > 1e10
    # the profile fits' intervals are the same rule
    hw, _ = block_intervals(a, r)
    np.testing.assert_array_equal(hw, iv.half_width)


def test_pinv_solve_drops_the_null_direction() -> None:
    A = np.diag([4.0, 1e-14, 1.0])
    np.testing.assert_allclose(pinv_solve(A, np.array([8.0, 1.0, 3.0])), [2.0, 0.0, 3.0])
