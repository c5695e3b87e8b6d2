"""The one fractional-delay shift and the one delay-to-step rounding (``simgap.fit.delay``)."""

from __future__ import annotations

import numpy as np

from simgap.fit.delay import delay_step_span, delay_steps, shift


def test_shift_interpolates_and_holds_the_first_value() -> None:
    x = np.arange(6.0) ** 2
    out = shift(x, 1.5)
    np.testing.assert_allclose(out, [0.0, 0.0, 0.5, 2.5, 6.5, 12.5])
    np.testing.assert_array_equal(shift(x, 0.0), x)
    np.testing.assert_array_equal(shift(x, -1.0), [1.0, 4.0, 9.0, 16.0, 25.0, 25.0])


def test_many_delays_in_one_call_match_one_at_a_time() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    ks = np.array([0.0, 0.3, 2.0, 7.25])
    many = shift(x, ks)
    assert many.shape == (4, 40, 3)
    for k, row in zip(ks, many, strict=True):
        np.testing.assert_array_equal(row, shift(x, float(k)))


def test_delay_steps_rounds_and_clips_at_zero() -> None:
    assert delay_steps(0.012, 0.005) == 2
    assert delay_steps(0.013, 0.005) == 3
    assert delay_steps(-0.01, 0.005) == 0


def test_delay_step_span_floors_low_ceils_high_and_forgives_float_noise() -> None:
    assert delay_step_span(0.012, 0.031, 0.005) == (2, 7)
    assert delay_step_span(0.07, 0.07, 0.005) == (14, 14)  # 0.07 / 0.005 = 14.000000000000002
    assert delay_step_span(-0.01, 0.0, 0.005) == (0, 0)
