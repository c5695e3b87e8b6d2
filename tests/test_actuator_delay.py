"""Delay estimated on its own: cross-correlation with sub-sample refinement."""

from __future__ import annotations

import numpy as np
import pytest

from simgap.actuator.delay import parabolic_peak, xcorr_delay
from simgap.actuator.lag import first_order
from simgap.errors import InputError
from simgap.fit.delay import shift


def test_parabolic_peak_is_exact_on_a_parabola() -> None:
    # y = -(x - 0.3)^2 sampled at -1, 0, 1: the vertex is at 0.3
    ys = [-((x - 0.3) ** 2) for x in (-1.0, 0.0, 1.0)]
    assert parabolic_peak(*ys) == pytest.approx(0.3)


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.0335, 0.071])
def test_xcorr_recovers_a_pure_delay_below_one_sample(delay: float) -> None:
    dt = 0.005
    rng = np.random.default_rng(3)
    t = np.arange(0, 8, dt)
    # broadband command: sum of sines 0.5..20 Hz with random phases
    cmd = sum(0.1 * np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in np.linspace(0.5, 20, 30))
    meas = np.interp(t - delay, t, cmd, left=cmd[0])  # independent of simgap's shift()
    est = xcorr_delay([cmd], [meas], dt)
    assert abs(est - delay) < 0.25 * dt


def test_shift_matches_interpolation() -> None:
    t = np.arange(0, 1, 0.01)
    x = np.sin(3 * t)
    np.testing.assert_allclose(shift(x, 0.037 / 0.01)[10:], np.sin(3 * (t[10:] - 0.037)), atol=1e-3)


def test_constant_command_has_no_delay() -> None:
    with pytest.raises(InputError, match="simgap excite"):
        xcorr_delay([np.zeros(500)], [np.zeros(500)], 0.01)


def test_first_order_matches_closed_form_step() -> None:
    # Euler first-order response to a unit step: 1 - (1 - dt/tau)^k
    dt, tau = 0.01, 0.1
    out = first_order(np.ones((1, 50)), np.zeros(1), np.array([tau]), dt)[0, 0]
    k = np.arange(50)
    np.testing.assert_allclose(out, 1 - (1 - dt / tau) ** k)
