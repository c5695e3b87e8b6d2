"""Fits recover planted parameters where identifiable and say so where not."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from simgap.fit import search
from simgap.fit.intervals import jacobian_intervals
from simgap.fit.local_backend import LocalBackend
from simgap.fit.params import Param, ParamSet
from simgap.fit.replay_problem import ReplayProblem
from simgap.sim.replay import ReplayLog

XML = """<mujoco><compiler angle="radian"/><option timestep="0.002"/>
<worldbody><body name="link"><joint name="j" axis="0 1 0" damping="0.5" armature="0.01"
 frictionloss="0.005"/>
<geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5"/></body></worldbody>
<actuator><position name="a" joint="j" kp="20" kv="0.3" forcerange="-{fr} {fr}"/></actuator>
</mujoco>"""
TRUTH = np.array([1.3, 1.2, 1.5, 1.5])  # multipliers of nominal


def _params() -> ParamSet:
    return ParamSet(
        (
            Param("kp", "a", 20, 5, 80),
            Param("damping", "j", 0.5, 0.1, 2),
            Param("armature", "j", 0.01, 0.002, 0.05),
            Param("frictionloss", "j", 0.005, 0.0005, 0.05),
        )
    )


def _problem(fr: float, noise: float = 0.002, truth: np.ndarray = TRUTH) -> ReplayProblem:
    t = np.arange(0, 2.0, 0.01)
    cmd = (0.6 * np.sin(2 * np.pi * 1.1 * t) + 0.3 * np.sin(2 * np.pi * 3.1 * t))[:, None]
    log = ReplayLog(t=t, commands=cmd, joints=("j",), q0=np.zeros(1))
    xml = XML.format(fr=fr)
    ps = _params()
    gen = LocalBackend(
        ReplayProblem(
            model=xml,
            model_is_xml=True,
            joints=("j",),
            logs=(log,),
            targets=(np.zeros((len(t), 1)),),
            params=ps,
        ),
        nthread=1,
    )
    q = gen.replays(truth[None])[0].q[0]
    gen.close()
    q = q + np.random.default_rng(0).normal(0, noise, q.shape)
    return ReplayProblem(
        model=xml, model_is_xml=True, joints=("j",), logs=(log,), targets=(q,), params=ps
    )


def test_least_squares_recovers_kp_damping_armature_and_flags_frictionloss() -> None:
    be = LocalBackend(_problem(fr=100.0))
    fit = search.least_squares(be, be.problem.params)
    be.close()
    np.testing.assert_allclose(fit.x[:3], TRUTH[:3], rtol=0.05)
    assert fit.identified[:3] == [True, True, True]
    # free-space tracking cannot see 5 mN m of Coulomb friction under a 20 N m/rad servo
    assert fit.identified[3] is False
    assert fit.half_width[3] > fit.values[3] or "bound" in fit.why[3]
    assert fit.cost_after < 0.1 * fit.cost_before


def test_saturated_servo_kp_is_reported_not_identifiable() -> None:
    be = LocalBackend(_problem(fr=0.3))
    fit = search.least_squares(be, be.problem.params)
    be.close()
    assert fit.identified[0] is False and "half-width" in fit.why[0]
    assert fit.col_norm[0] < 0.2 * fit.col_norm[1]  # kp barely moves the residual
    np.testing.assert_allclose(fit.x[1:3], TRUTH[1:3], rtol=0.05)  # the rest still fits


class _Linear:
    """A backend whose residual is linear: r = A x - b (so intervals are OLS's)."""

    def __init__(self, a: np.ndarray, b: np.ndarray) -> None:
        self.a, self.b, self.n_evals = a, b, 0
        self.problem = None

    def residuals(self, x: np.ndarray) -> np.ndarray:
        return np.atleast_2d(x) @ self.a.T - self.b[None]

    def close(self) -> None:
        pass


def test_intervals_match_statsmodels_ols_and_null_directions_are_infinite() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(size=(60, 3))
    b = a @ np.array([1.0, 2.0, -0.5]) + rng.normal(0, 0.1, 60)
    ols = sm.OLS(b, a).fit()
    x = np.asarray(ols.params)
    r = _Linear(a, b).residuals(x)[0]
    iv = jacobian_intervals(a, r)
    ci = np.asarray(ols.conf_int(0.05))
    np.testing.assert_allclose(iv.half_width, (ci[:, 1] - ci[:, 0]) / 2, rtol=1e-8)
    a2 = np.column_stack([a[:, 0], a[:, 0], a[:, 2]])  # two identical columns
    iv2 = jacobian_intervals(a2, r)
    assert np.isinf(iv2.half_width[:2]).all() and np.isfinite(iv2.half_width[2])
    assert np.isinf(iv2.cond)


def test_sweep_and_annealing_find_a_planted_value() -> None:
    truth = np.array([1.3, 1.2, 1.0, 1.0])  # armature, frictionloss at nominal
    be = LocalBackend(_problem(fr=100.0, noise=0.0, truth=truth))
    ps = be.problem.params
    curve = search.sweep(be, ps, 1, np.linspace(0.2, 1.5, 14), base_x=TRUTH)
    assert curve["refined_value"] == pytest.approx(0.6, rel=0.05)
    small = ParamSet(ps.params[:2])
    be.problem = ReplayProblem(**{**be.problem.__dict__, "params": small})
    fit = search.dual_annealing(be, small, seed=3, maxfun=150)
    be.close()
    np.testing.assert_allclose(fit.x, truth[:2], rtol=0.05)
    assert fit.seed == 3


def test_ray_backend_gives_the_local_result() -> None:
    pytest.importorskip("ray")
    from simgap.fit.ray_backend import RayBackend

    prob = _problem(fr=100.0, noise=0.0, truth=np.array([1.3, 1.2, 1.0, 1.0]))
    small = ParamSet(prob.params.params[:2])
    prob = ReplayProblem(**{**prob.__dict__, "params": small})
    local = LocalBackend(prob, nthread=1)
    want = search.least_squares(local, small, max_iter=15)
    local.close()
    ray_be = RayBackend(prob, num_cpus=2, num_workers=2)
    try:
        got = search.least_squares(ray_be, small, max_iter=15)
    finally:
        ray_be.close()
    # the replays are bit-identical; only the driver's BLAS summation order may differ
    # once Ray has set its thread environment
    np.testing.assert_allclose(got.x, want.x, rtol=1e-8)
    np.testing.assert_allclose(got.x, [1.3, 1.2], rtol=0.05)
