"""The anytime-valid sequential comparison: e-value, Type-I error at every look, stopping."""

from __future__ import annotations

import math

import numpy as np
import pytest

from simgap.errors import InputError
from simgap.evaluation import sequential as sq


def test_e_value_closed_form_uniform_prior() -> None:
    # Uniform mixture: E = 2^m / ((m + 1) C(m, u)) with m = u + v.
    for u, v in ((0, 0), (3, 1), (8, 0), (10, 7)):
        m = u + v
        expected = 2**m / ((m + 1) * math.comb(m, u))
        assert float(np.exp(sq.log_e_value(u, v))) == pytest.approx(expected, rel=1e-12)


def test_type_one_error_exact_over_every_look() -> None:
    # Exact: walk the discordant-round sign sequence (fair coin under the null) forward
    # with dynamic programming, absorbing paths the first time E >= 1/alpha; the absorbed
    # mass after 400 discordant rounds is the Type-I error of looking after every round.
    alpha = 0.05
    mass = np.zeros(1)
    mass[0] = 1.0
    rejected = 0.0
    for m in range(1, 401):
        new = np.zeros(m + 1)
        new[1:] += 0.5 * mass  # A wins: u + 1
        new[:-1] += 0.5 * mass  # B wins
        u = np.arange(m + 1)
        hit = sq.log_e_value(u, m - u) >= math.log(1 / alpha)
        rejected += new[hit].sum()
        new[hit] = 0.0
        mass = new
    assert rejected <= alpha
    assert rejected > 0.01  # and the test is not trivially conservative


@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])
def test_type_one_error_by_simulation(p: float) -> None:
    r = sq.simulate(p, p, alpha=0.05, n_max=300, n_sims=3000, seed=11)
    assert r["decide_rate"] <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 3000)


def test_type_one_error_under_drift_with_independent_runs() -> None:
    # Both arms drift together (battery, lighting); interleaved rounds keep the error
    # controlled. Simulated here with the per-run function, not the vectorised simulator.
    rng = np.random.default_rng(5)
    t = np.arange(150)
    p_t = 0.2 + 0.7 * t / 150
    wrong = sum(
        sq.sequential_test(rng.random(150) < p_t, rng.random(150) < p_t).decision != "undecided"
        for _ in range(1500)
    )
    assert wrong / 1500 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 1500)


def test_stops_early_on_clear_difference() -> None:
    r = sq.simulate(0.2, 0.9, alpha=0.05, n_max=100, n_sims=2000, seed=2)
    assert r["b_better_rate"] >= 0.99 and r["a_better_rate"] == 0.0
    assert r["median_rounds"] <= 20
    r2 = sq.simulate(0.5, 0.8, alpha=0.05, n_max=200, n_sims=2000, seed=3)
    assert r2["b_better_rate"] >= 0.95 and r2["mean_rounds"] < 80


def test_sequential_test_reports_stop_round() -> None:
    # A wins the first 8 rounds outright: E after 8 discordant rounds = 2^8 / 9 = 28.4 >= 20,
    # after 7 it is 2^7 / 8 = 16 < 20.
    a = [True] * 10
    b = [False] * 10
    r = sq.sequential_test(a, b, alpha=0.05)
    assert (r.decision, r.stopped_at, r.a_wins, r.b_wins) == ("a_better", 8, 8, 0)
    assert r.e_value == pytest.approx(256 / 9)
    assert sq.sequential_test([True, False], [True, False]).decision == "undecided"


def test_bad_inputs() -> None:
    with pytest.raises(InputError, match="'alpha'"):
        sq.sequential_test([True], [False], alpha=1.0)
    with pytest.raises(InputError, match="rounds"):
        sq.sequential_test([True, True], [False])
