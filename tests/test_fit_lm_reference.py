"""``lm_fit`` and ``grid_fit``, now wrappers over the one batched LM (``fit.lm.lm_batch``),
against the two loops they replaced, kept here verbatim as the reference.

Bit-identical means more than equal results: a vectorised simulation's rows need not be
bitwise independent of the batch they are simulated in, so the one loop must ask for the
same candidates, in the same batches and the same order, as each old loop. The synthetic
residuals below make that visible: every row carries a 1e-12 term of the mean over its whole
batch, so a candidate evaluated in another batch changes the fit's last bits, and every
evaluation call is logged and compared as well. The problems are chosen to go through every
branch of both loops: folds converging at different iterations (the batch shrinks), a box
bound active at the optimum, a candidate whose simulation diverges (NaN), a saturation kink
that rejects steps (a forward Jacobian re-differenced centrally, a central one kept), the
joint-block Jacobian, and no final Jacobian.

``benchmarks/lm_reference.py`` saves the same problems' outputs to a file, to compare two
checkouts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from simgap.fit.lm import LAMBDA0, damped_step, lm_fit, next_damping
from simgap.fit.loss import IRLS_EPS, finite_residual, weighted_mae
from simgap.fit.profile import LINE_STEPS, block_jacobian, grid_fit

DT = 0.01
T = np.arange(120) * DT


def _batch_term(x: np.ndarray) -> float:
    """The batch-dependence of a vectorised simulation, made visible: 1e-12 times the mean
    of every finite candidate coordinate in the call."""
    return 1e-12 * float(np.mean(np.where(np.isfinite(x), x, 0.0)))


def lag_resid(theta: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Four episodes (different commands) of a first-order lag with saturation, as
    residuals against a fixed truth, (M, 4 * 120); theta in the unit cube: gain 0.5 + theta0,
    time constant 0.3 theta1 (NaN, as a diverged simulation, below theta1 = 0.02),
    saturation 0.2 + theta2. The fold only checks that the loop passes it through."""
    assert fold.shape == (theta.shape[0],)
    truth = np.array([1.3, 0.11, 0.6])  # gain 1.8 lies past the box (theta0 <= 1)
    M = theta.shape[0]
    amp = np.array([0.4, 0.8, 1.2, 0.6])[None, :, None]
    u = amp * np.sign(np.sin(2 * np.pi * (0.7 + np.arange(4)[:, None]) * T[None]))[None]

    def sim(th: np.ndarray) -> np.ndarray:
        gain, tau, sat = 0.5 + th[:, 0], 0.3 * th[:, 1], 0.2 + th[:, 2]
        x = np.zeros((th.shape[0], 4))
        out = np.empty((th.shape[0], 4, T.size))
        for k in range(T.size):
            drive = np.clip(gain[:, None] * u[:, :, k], -sat[:, None], sat[:, None])
            x = x + DT / np.maximum(tau[:, None], 1e-9) * (drive - x)
            out[:, :, k] = x
        return out

    data = sim(truth[None])
    with np.errstate(all="ignore"):
        res = (sim(theta) - data).reshape(M, -1) + _batch_term(theta)
    res[theta[:, 1] < 0.02] = np.nan
    return res


def joint_resid(z: np.ndarray, delays: np.ndarray) -> np.ndarray:
    """Two coupled joints driven through a transport delay, residuals (M, 2, 120) against a
    truth replayed at 0.03 s; z: log-multipliers of (stiffness, damping, load) per joint
    (joint-major, K = 3). The torque saturates (a kink), and a stiffness of the first joint
    past e^0.9 of nominal diverges (NaN rows)."""
    cmd = np.stack([0.5 * np.sin(2 * np.pi * 0.8 * T), 0.3 * np.sign(np.sin(2 * np.pi * 1.3 * T))])

    def sim(zz: np.ndarray, d: np.ndarray) -> np.ndarray:
        m = np.exp(zz.reshape(-1, 2, 3))
        kp, kd, load = 40.0 * m[:, :, 0], 4.0 * m[:, :, 1], 0.5 * m[:, :, 2]
        u = np.stack([np.interp(T - dd, T, c, left=0.0) for dd in d for c in cmd])
        u = u.reshape(-1, 2, T.size)
        q = np.zeros((zz.shape[0], 2))
        v = np.zeros_like(q)
        out = np.empty((zz.shape[0], 2, T.size))
        for k in range(T.size):
            tau = np.clip(kp * (u[:, :, k] - q) - kd * v, -6.0, 6.0) - load * np.cos(q)
            tau[:, 1] += 2.0 * q[:, 0]  # the first joint's pose loads the second
            v = v + DT * tau
            q = q + DT * v
            out[:, :, k] = q
        return out

    truth = np.array([[0.3, -0.4, 0.2, 1.4, 0.2, -0.3]])  # joint 1's stiffness past hi = 1
    data = sim(truth, np.array([0.03]))
    res = sim(z, delays) - data + _batch_term(z)
    res[z[:, 1] < -1.8] = np.nan
    return res


@dataclass
class Logged:
    """A residual function that records every call's candidates and tags."""

    fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
    calls: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)

    def __call__(self, x: np.ndarray, tags: np.ndarray) -> np.ndarray:
        self.calls.append((np.array(x, copy=True), np.array(tags, copy=True)))
        return self.fn(x, tags)


LM_CASES: dict[str, dict[str, Any]] = {
    # five folds, leave-one-episode-out weights, from spread starts; the box binds theta0
    "lag_folds": dict(
        theta0=np.array(
            [[0.2, 0.5, 0.5], [0.8, 0.05, 0.1], [0.5, 0.9, 0.9], [0.1, 0.03, 0.3], [0.6, 0.4, 0.0]]
        ),
        episodes=[[0, 1, 2, 3], [1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]],
        kw=dict(iters=25, tol=1e-4),
    ),
    # a wider step and few iterations: folds still active when the loop ends
    "lag_short": dict(
        theta0=np.array([[0.9, 0.9, 0.9], [0.05, 0.05, 0.05]]),
        episodes=[[0, 1], [2, 3]],
        kw=dict(iters=4, step=1e-2, tol=1e-6),
    ),
}

GRID_CASES: dict[str, dict[str, Any]] = {
    "central": dict(z0=np.zeros(6), kw=dict(iters=12, tol=0.05)),
    "forward_until_reject": dict(
        z0=np.array(
            [[0.2, 0.0, 0.0, 0.5, 0.1, 0.0], np.zeros(6), [-0.5, 0.3, 0.2, 0.8, -0.3, -0.2]]
        ),
        kw=dict(iters=10, central=False),
    ),
    "joint_blocks": dict(z0=np.zeros(6), kw=dict(iters=8, joint_blocks=True, tol=1e-3)),
    "blocks_forward_no_final": dict(
        z0=np.full(6, 0.1), kw=dict(iters=6, joint_blocks=True, central=False, h=0.05)
    ),
}
GRID_DELAYS = np.array([0.0, 0.02, 0.04])
GRID_LO, GRID_HI = np.full(6, -2.0), np.full(6, 1.0)


def lm_weights(episodes: list[list[int]]) -> np.ndarray:
    """(F, 4 * 120) weights: each fold's training episodes."""
    w = np.zeros((len(episodes), 4, T.size))
    for f, eps in enumerate(episodes):
        w[f, eps] = 1.0
    return w.reshape(len(episodes), -1)


def run_lm_case(name: str, fit_fn: Callable[..., Any] = lm_fit, **extra: Any) -> tuple[Any, Logged]:
    """One ``LM_CASES`` problem through ``fit_fn`` (``lm_fit`` or the legacy loop)."""
    case = LM_CASES[name]
    resid = Logged(lag_resid)
    fit = fit_fn(
        resid,
        case["theta0"],
        lm_weights(case["episodes"]),
        np.zeros(3),
        np.ones(3),
        **case["kw"],
        **extra,
    )
    return fit, resid


def run_grid_case(
    name: str, fit_fn: Callable[..., Any] = grid_fit, **extra: Any
) -> tuple[Any, Logged]:
    """One ``GRID_CASES`` problem through ``fit_fn`` (``grid_fit`` or the legacy loop)."""
    case = GRID_CASES[name]
    kw = dict(case["kw"], **extra)
    if name == "blocks_forward_no_final":
        kw["final_jacobian"] = False
    ev = Logged(joint_resid)
    fit = fit_fn(ev, GRID_DELAYS, case["z0"], GRID_LO, GRID_HI, 2, 3, **kw)
    return fit, ev


# --- the two loops as they were before the one LM (reference only; ``events`` counts the
# branches taken, and is the only addition) ----------------------------------------------------


def legacy_lm_fit(
    resid: Any,
    theta0: np.ndarray,
    weights: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    iters: int = 30,
    step: float = 1e-4,
    tol: float = 1e-5,
    events: dict[str, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    ev = events if events is not None else {}
    theta = np.clip(np.array(theta0, dtype=float), lo, hi)
    F, n = theta.shape
    lam = np.full(F, LAMBDA0)
    r0 = resid(theta, np.arange(F))
    cost = weighted_mae(r0, weights)
    active = np.ones(F, dtype=bool)
    it = 0
    for it in range(1, iters + 1):  # noqa: B007
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        th = theta[idx]
        pert = th[:, None, :] + step * np.eye(n)[None, :, :]
        r_all = resid(
            np.concatenate([th[:, None, :], pert], axis=1).reshape(-1, n), np.repeat(idx, n + 1)
        )
        r_all = r_all.reshape(idx.size, n + 1, -1)
        r_all = finite_residual(r_all)
        base = r_all[:, 0]
        jac = (r_all[:, 1:] - base[:, None, :]) / step  # (f, n, R)
        w = weights[idx] / np.maximum(np.abs(base), IRLS_EPS)
        A = np.einsum("fir,fr,fjr->fij", jac, w, jac)
        g = np.einsum("fir,fr,fr->fi", jac, w, base)
        delta = damped_step(A, g, lam[idx])
        trial = np.clip(th + delta, lo, hi)
        new_cost = weighted_mae(resid(trial, idx), weights[idx])
        better = new_cost < cost[idx]
        gain = (cost[idx] - new_cost) / np.maximum(cost[idx], 1e-300)
        theta[idx[better]] = trial[better]
        cost[idx[better]] = new_cost[better]
        lam[idx], done = next_damping(lam[idx], better, gain, tol)
        active[idx[done]] = False
        ev["rejected"] = ev.get("rejected", 0) + int(np.sum(~better))
        ev["done_early"] = ev.get("done_early", 0) + int(np.sum(done)) * (it < iters)
    return theta, cost, it


def legacy_grid_fit(
    evaluate: Any,
    delays: np.ndarray,
    z0: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    J: int,
    K: int,
    *,
    iters: int = 10,
    h: float = 0.1,
    tol: float = 1e-4,
    central: bool = True,
    joint_blocks: bool = False,
    final_jacobian: bool = True,
    events: dict[str, int] | None = None,
) -> dict[str, Any]:
    ev = events if events is not None else {}
    delays = np.asarray(delays, dtype=float)
    G = delays.size
    n = np.size(lo)
    z = np.clip(np.broadcast_to(np.asarray(z0, dtype=float), (G, n)).copy(), lo, hi)
    lam = np.full(G, LAMBDA0)
    active = np.ones(G, dtype=bool)
    r3 = evaluate(z, delays)
    shape = r3.shape[1:]
    r = r3.reshape(G, -1)
    n_evals = G
    it = 0
    want_central = np.full(G, central)
    jac_all: np.ndarray | None = None
    stale = np.ones(G, dtype=bool)
    was_central = np.zeros(G, dtype=bool)

    def flat(x: np.ndarray, d: np.ndarray) -> np.ndarray:
        return evaluate(x, d).reshape(x.shape[0], -1)

    for it in range(1, iters + 1):  # noqa: B007
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        need = idx[stale[idx]]
        for mode in (False, True):
            sub = need[want_central[need] == mode]
            if not sub.size:
                continue
            jn, ne = block_jacobian(
                flat,
                z[sub],
                r[sub],
                delays[sub],
                h,
                lo,
                hi,
                mode,
                blocks=J if joint_blocks and n == J * K else 0,
            )
            n_evals += ne
            if jac_all is None:
                jac_all = np.zeros((G,) + jn.shape[1:])
            jac_all[sub] = jn
            stale[sub], was_central[sub] = False, mode
        assert jac_all is not None
        jac = jac_all[idx]
        A = np.einsum("grk,grl->gkl", jac, jac)
        grad = np.einsum("grk,gr->gk", jac, r[idx])
        delta = damped_step(A, grad, lam[idx])
        m = len(LINE_STEPS)
        trials = np.clip(
            z[idx, None, :] + np.asarray(LINE_STEPS)[None, :, None] * delta[:, None, :], lo, hi
        )
        rts = evaluate(trials.reshape(-1, n), np.repeat(delays[idx], m)).reshape(idx.size, m, -1)
        n_evals += idx.size * m
        best = np.argmin(np.sum(rts**2, axis=2), axis=1)
        trial = trials[np.arange(idx.size), best]
        rt = rts[np.arange(idx.size), best]
        ssr, ssr_t = np.sum(r[idx] ** 2, axis=1), np.sum(rt**2, axis=1)
        better = ssr_t < ssr
        redo = idx[~better & ~was_central[idx]]
        ev["redo"] = ev.get("redo", 0) + redo.size
        ev["kept"] = ev.get("kept", 0) + int(np.sum(~better & was_central[idx]))
        if redo.size:
            central = True
            stale[redo], want_central[:] = True, True
        gain = (ssr - ssr_t) / np.maximum(ssr, 1e-300)
        acc = idx[better]
        stale[acc], want_central[acc] = True, central
        z[acc] = trial[better]
        r[acc] = rt[better]
        lam[idx], done = next_damping(lam[idx], better, gain, tol)
        active[idx[done]] = False
        ev["done_early"] = ev.get("done_early", 0) + int(np.sum(done)) * (it < iters)
    if final_jacobian:
        jac, ne = block_jacobian(flat, z, r, delays, h, lo, hi)
    else:
        jac, ne = np.zeros((G, 0, n)), 0
    r3 = r.reshape((G,) + shape)
    return dict(
        delays=delays,
        z=z,
        ssr=np.sum(r3**2, axis=-1),
        jac=jac,
        resid=r3,
        iterations=it,
        n_evals=n_evals + ne,
    )


# --- the tests ---------------------------------------------------------------------------


def _same_calls(a: Logged, b: Logged) -> None:
    assert len(a.calls) == len(b.calls)
    for (xa, ta), (xb, tb) in zip(a.calls, b.calls, strict=True):
        assert xa.shape == xb.shape and np.array_equal(xa, xb, equal_nan=True)
        assert ta.dtype == tb.dtype and np.array_equal(ta, tb)


@pytest.mark.parametrize("name", sorted(LM_CASES))
def test_lm_fit_is_bit_identical_to_the_loop_it_replaced(name: str) -> None:
    fit, calls = run_lm_case(name)
    (theta, cost, it), ref_calls = run_lm_case(name, legacy_lm_fit)
    _same_calls(calls, ref_calls)
    assert np.array_equal(fit.theta, theta)
    assert np.array_equal(fit.cost, cost)
    assert fit.iterations == it


@pytest.mark.parametrize("name", sorted(GRID_CASES))
def test_grid_fit_is_bit_identical_to_the_loop_it_replaced(name: str) -> None:
    fit, calls = run_grid_case(name)
    ref, ref_calls = run_grid_case(name, legacy_grid_fit)
    _same_calls(calls, ref_calls)
    for key in ("delays", "z", "ssr", "jac", "resid"):
        got = getattr(fit, key)
        assert got.shape == ref[key].shape and np.array_equal(got, ref[key], equal_nan=True), key
    assert (fit.iterations, fit.n_evals) == (ref["iterations"], ref["n_evals"])


def test_the_reference_problems_reach_every_branch() -> None:
    """What makes the comparisons above worth something: the problems go through the
    branches named in the module docstring (counted in the legacy loops, so this holds
    whatever the new loop does)."""
    lm_events: dict[str, int] = {}
    lm_nan = False
    for name in LM_CASES:
        fit, calls = run_lm_case(name, legacy_lm_fit, events=lm_events)
        lm_nan |= any(np.isnan(lag_resid(x, t)).any() for x, t in calls.calls)
        if name == "lag_folds":
            assert np.any(fit[0][:, 0] == 1.0)  # the box binds
            assert fit[2] == LM_CASES[name]["kw"]["iters"]  # some fold ran to the end
    assert lm_nan and lm_events["rejected"] > 0 and lm_events["done_early"] > 0
    grid_events: dict[str, int] = {}
    grid_nan, bound = False, False
    for name in GRID_CASES:
        ref, calls = run_grid_case(name, legacy_grid_fit, events=grid_events)
        grid_nan |= any(np.isnan(joint_resid(x, t)).any() for x, t in calls.calls)
        bound |= bool(np.any(ref["z"] == GRID_HI))
    assert grid_nan and bound
    assert grid_events["redo"] > 0 and grid_events["kept"] > 0 and grid_events["done_early"] > 0
