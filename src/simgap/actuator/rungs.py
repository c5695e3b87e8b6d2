"""The rungs of the actuator ladder and what they share: folds, the configuration, results.

Rung 1 is the ideal actuator (measured = commanded), rung 2 a fixed delay plus a first-order
lag, rung 3 the physical servo (``servo.py``); rung 4, the network, lives in ``net.py``. Each
rung is fitted on the training logs of every fold at once and scored on the held-out ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.actuator import delay as delay_mod
from simgap.actuator.folds import Folds, by_group, fold_scores, test_scores
from simgap.actuator.lag import LAG_BOUNDS_S, first_order
from simgap.actuator.rung_estimate import at_bound, delay_bounds, rung_estimate, servo_bound_reasons
from simgap.actuator.servo import (
    FREE_BAM,
    FREE_GENERIC,
    ParamSpace,
    ServoBatch,
    named_params,
    simulate,
)
from simgap.fit.delay import shift
from simgap.fit.estimate import Estimate
from simgap.fit.lm import lm_fit
from simgap.fit.loss import weighted_mae

RUNG_NAMES = ("ideal", "delay_lag", "servo", "net")


@dataclass(frozen=True)
class LadderConfig:
    """Settings of the ladder.

    Attributes:
        noise_floor_rad: the instrument's noise [rad] (encoder resolution by default).
        noise_source: what the floor is (named in reports).
        improve_fraction: a richer rung must cut the held-out MAE by this fraction.
        max_delay_s: largest delay searched [s].
        use_net: whether rung 4 may run (needs torch).
        seed: seed of the random search and the network.
        global_samples: random candidates of the servo's global search.
        delay_grid: delays in the servo's delay profile.
        starts_per_delay: LM starts (best random candidates) at each profiled delay.
        lm_iters: LM iterations of the fit on all training logs.
        fold_iters: LM iterations of each fold (warm started).
        net_epochs: training epochs of the actuator network.
        cma_evaluations: CMA-ES rollouts per (friction family, fold) on a known servo.
        families: BAM friction families fitted on a known servo.
        bootstrap_replicates: bootstrap refits for the selected family's intervals.
        gain_out: also hold out each firmware gain in turn where the gain varies.
        searches: independent CMA-ES searches of each held-out fold on a known servo, and of
            the fit on all training logs (the best in training is reported):
            where the training types leave parameters free, equal training errors come
            with different held-out errors, so one search's held-out score is a draw; the
            families are compared on the median over searches, and the range is reported.
    """

    noise_floor_rad: float
    noise_source: str = "encoder resolution"
    improve_fraction: float = 0.1
    max_delay_s: float = delay_mod.DEFAULT_MAX_DELAY_S
    use_net: bool = True
    seed: int = 0
    global_samples: int = 384
    delay_grid: int = 8
    starts_per_delay: int = 2
    lm_iters: int = 40
    fold_iters: int = 20
    net_epochs: int = 150
    cma_evaluations: int = 1000
    families: tuple[str, ...] = ("m1", "m3", "m2", "m4", "m5", "m6")
    bootstrap_replicates: int = 12
    gain_out: bool = True
    searches: int = 3


@dataclass(frozen=True)
class RungResult:
    """One rung's fit: train and held-out MAE [rad], parameters, time [s].

    ``estimate`` is the fit's ``simgap.fit.estimate.Estimate``. The physical servo states
    its bootstrap intervals (each parameter's interval or reason, the training MAE against
    the noise floor). The ideal, delay-lag, generic servo and network rungs are judged by
    their held-out error alone (``scored``): each numeric parameter carries the reason it
    has no interval (or that it ended at a bound of its search range), the residual is the
    held-out MAE [rad] and the floor the one the ladder holds the joint against. None only
    where a caller built the result without one. ``params`` stays the rung's JSON form
    (``to_dict``, which leaves the estimate out), the servo's intervals built from the
    estimate.
    """

    model: str
    train_mae_rad: float
    validation_mae_rad: float
    params: dict[str, Any]
    fit_time_s: float = 0.0
    validation_per_log_rad: tuple[float, ...] = ()
    diagnostics: dict[str, Any] = field(default_factory=dict)
    """The rung's other results (the held-out MAE per group, the other held-out scheme, the
    families compared...): named apart from a Finding's ``details``."""
    estimate: Estimate | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form kept by the CLI (``model``, ``train_mae_rad``, ...; ``diagnostics``
        adds e.g. the held-out MAE per group, the other held-out scheme, the families)."""
        return {
            "model": self.model,
            "train_mae_rad": self.train_mae_rad,
            "validation_mae_rad": self.validation_mae_rad,
            "params": self.params,
            "fit_time_s": self.fit_time_s,
            "validation_per_log_rad": list(self.validation_per_log_rad),
            **self.diagnostics,
        }


def scored(
    model: str,
    pred: np.ndarray,
    batch: ServoBatch,
    folds: Folds,
    params: dict[str, Any],
    t0: float,
    *,
    noise_floor_rad: float | None = None,
    reasons: Mapping[str, str] | None = None,
    fitted: Collection[str] | None = None,
    evaluations: int = 0,
) -> RungResult:
    """A rung's result from its predictions: ``pred`` (F, L, T), fold f's prediction of
    every log, scored by ``fold_scores`` (held-out MAE per log and per group, and the test
    logs' scores in its diagnostics); ``t0`` is the rung's start on ``time.perf_counter``.

    Its ``estimate`` (``rung_estimate``) states the rung's fitted values without intervals.

    Args:
        noise_floor_rad: the floor the ladder holds the joint against [rad] (None: the
            caller gave none, and the estimate says nothing of the instrument).
        reasons: name -> the reason that replaces the ladder's own for that parameter (a
            value that ended at a bound of its search range: ``at_bound``).
        fitted: which entries of ``params`` are fitted values (default: every numeric one;
            the network names none, its numbers being the settings it was trained with).
        evaluations: candidate rollouts of every log the fit spent (0: none, or not
            counted).
    """
    tr, va, per = fold_scores(pred, batch, folds)
    names = (
        [k for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if fitted is None
        else list(fitted)
    )
    return RungResult(
        model,
        tr,
        va,
        params,
        time.perf_counter() - t0,
        tuple(per.tolist()),
        {"held_out_by_group_rad": by_group(per, folds), **test_scores(pred, batch, folds)},
        rung_estimate(
            model,
            {k: float(params[k]) for k in names},
            va,
            noise_floor_rad=noise_floor_rad,
            reasons=reasons,
            evaluations=evaluations,
        ),
    )


def _fold_weights(batch: ServoBatch, folds: Folds) -> np.ndarray:
    return (folds.train[:, :, None] * batch.mask[None]).reshape(folds.train.shape[0], -1)


def xcorr_delays(
    batch: ServoBatch,
    folds: Folds,
    max_delay_s: float,
    source: str,
) -> np.ndarray:
    """Per fold, the cross-correlation delay of its training logs [s] (an upper bound for
    the rungs' delay scans: on a saturating servo it also holds the dynamics' lag)."""
    out = []
    for tr in folds.train:
        idx = np.flatnonzero(tr)
        out.append(
            delay_mod.xcorr_delay(
                [batch.cmd[i] for i in idx],
                [batch.q[i] for i in idx],
                batch.dt,
                max_delay_s=max_delay_s,
                source=source,
            )
        )
    return np.array(out)


def rung_ideal(batch: ServoBatch, folds: Folds, config: LadderConfig | None = None) -> RungResult:
    """Rung 1: measured = commanded (no parameters; ``config`` gives its estimate the
    joint's noise floor)."""
    t0 = time.perf_counter()
    pred = np.broadcast_to(batch.cmd[None], (folds.train.shape[0],) + batch.cmd.shape)
    floor = None if config is None else config.noise_floor_rad
    return scored("ideal", pred, batch, folds, {}, t0, noise_floor_rad=floor)


def rung_delay_lag(
    batch: ServoBatch,
    folds: Folds,
    kmax: int,
    config: LadderConfig | None = None,
) -> tuple[RungResult, np.ndarray, np.ndarray]:
    """Rung 2: a fixed delay and a first-order lag.

    The delay is profiled over every sample between 0 and ``kmax`` (the cross-correlation
    delay, which also holds the lag's own phase delay), the lag on a log grid, all in one
    vectorised pass; each fold keeps its best pair, refined with parabolas (lag first, then
    delay at that lag), then the lag by a golden-section search (all folds at once).

    A lag that ends at a bound of ``lag.LAG_BOUNDS_S``, or a delay at ``config``'s
    ``max_delay_s``, carries that reason in the estimate (``at_bound``); ``config`` also
    gives it the joint's noise floor.

    Returns:
        (result, delay of every fold [s], lag of every fold [s]).
    """
    t0 = time.perf_counter()
    dt = batch.dt
    step = max(1, int(np.ceil((kmax + 1) / 24)))
    d_grid = np.arange(0, kmax + 1, step) * dt
    g = np.linspace(np.log(LAG_BOUNDS_S[0]), np.log(LAG_BOUNDS_S[1]), 41)
    bank = _delay_bank(batch, d_grid)  # (D, L, T)
    D, G = d_grid.size, g.size
    sums = np.empty((D, G, batch.n_logs))
    for i in range(D):
        out = first_order(bank[i], batch.q[:, 0], np.exp(g), dt)  # (G, L, T)
        sums[i] = (np.abs(out - batch.q[None]) * batch.mask[None]).sum(axis=2)
    n_f = folds.train.shape[0]
    delays, lo, hi = np.empty(n_f), np.empty(n_f), np.empty(n_f)
    for f in range(n_f):
        w = folds.train[f].astype(float)
        cost = (sums @ w) / float((batch.mask.sum(axis=1) * w).sum())  # (D, G)
        ii, jj = np.unravel_index(int(np.argmin(cost)), cost.shape)
        i, j = int(ii), int(jj)
        d = float(d_grid[i])
        if 0 < i < D - 1:
            d += (d_grid[1] - d_grid[0]) * delay_mod.parabolic_peak(
                cost[i - 1, j], cost[i, j], cost[i + 1, j]
            )
        delays[f] = max(0.0, float(d))
        lo[f], hi[f] = g[max(j - 1, 0)], g[min(j + 1, G - 1)]
    bank_f = _delay_bank(batch, delays)  # (F, L, T)
    W = _fold_weights(batch, folds)

    def fold_cost(log_lag: np.ndarray) -> np.ndarray:
        out = first_order(bank_f, batch.q[:, 0], np.exp(log_lag), dt)
        return weighted_mae((out - batch.q[None]).reshape(n_f, -1), W)

    golden_iters = 30  # two probes, then one per iteration, each one candidate per fold
    lags = np.exp(_golden(fold_cost, lo, hi, iters=golden_iters))
    preds = np.array(
        [
            first_order(
                shift(batch.cmd.T, float(delays[f]) / dt).T, batch.q[:, 0], np.array([lags[f]]), dt
            )[0]
            for f in range(n_f)
        ]
    )
    params = {"delay_s": float(delays[0]), "lag_s": float(lags[0])}
    reasons = {
        "delay_s": at_bound(params["delay_s"], delay_bounds(float(d_grid[-1]), config), "s"),
        "lag_s": at_bound(params["lag_s"], LAG_BOUNDS_S, "s"),
    }
    rollouts = D * G + n_f * (2 + golden_iters) + n_f  # grid, golden probes, predictions
    return (
        scored(
            "delay_lag",
            preds,
            batch,
            folds,
            params,
            t0,
            noise_floor_rad=None if config is None else config.noise_floor_rad,
            reasons=reasons,
            evaluations=rollouts,
        ),
        delays,
        lags,
    )


def _golden(
    cost: Callable[[np.ndarray], np.ndarray], lo: np.ndarray, hi: np.ndarray, iters: int = 30
) -> np.ndarray:
    """Vectorised golden-section minimisation: one bracket [lo, hi] per element."""
    r = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo.astype(float).copy(), hi.astype(float).copy()
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = cost(c), cost(d)
    for _ in range(iters):
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - r * (b - a), d)
        d_new = np.where(left, c, a + r * (b - a))
        probe = np.where(left, c_new, d_new)
        fp = cost(probe)
        fc, fd = np.where(left, fp, fd), np.where(left, fc, fp)
        c, d = c_new, d_new
    return 0.5 * (a + b)


def _servo_resid(
    space: ParamSpace,
    batch: ServoBatch,
    cmd_bank: np.ndarray,
    spent: list[int] | None = None,
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Residuals of candidates grouped fold-major: rows of fold f use ``cmd_bank[f]``;
    ``spent[0]`` (when given) counts the candidates rolled out."""

    def resid(theta: np.ndarray, fold: np.ndarray) -> np.ndarray:
        m = theta.shape[0]
        if spent is not None:
            spent[0] += m
        cmd = cmd_bank[fold] if cmd_bank.shape[0] > 1 else cmd_bank[0]
        sim = simulate(space.full(theta), batch, cmd)
        return (sim - batch.q[None]).reshape(m, -1)

    return resid


def _delay_bank(batch: ServoBatch, delays: np.ndarray) -> np.ndarray:
    bank: np.ndarray = shift(batch.cmd.T, np.asarray(delays, dtype=float) / batch.dt)
    return bank.transpose(0, 2, 1)


def _scan_servo_delay(
    space: ParamSpace, theta: np.ndarray, batch: ServoBatch, weights: np.ndarray, kmax: int
) -> np.ndarray:
    """Each fold's delay scanned on the grid 0..kmax samples with its physics held fixed,
    refined with a parabola [s]."""
    grid = np.arange(kmax + 1) * batch.dt
    bank = _delay_bank(batch, grid)  # (K, L, T)
    F = theta.shape[0]
    out = np.empty(F)
    for f in range(F):
        sim = simulate(np.repeat(space.full(theta[f : f + 1]), grid.size, 0), batch, bank)
        cost = weighted_mae(
            (sim - batch.q[None]).reshape(grid.size, -1),
            np.broadcast_to(weights[f], (grid.size, weights.shape[1])),
        )
        k = int(np.argmin(cost))
        frac = (
            delay_mod.parabolic_peak(cost[k - 1], cost[k], cost[k + 1])
            if 0 < k < grid.size - 1
            else 0.0
        )
        out[f] = max(0.0, (k + frac) * batch.dt)
    return out


def rung_servo(
    batch: ServoBatch, folds: Folds, known_drive: bool, xcorr_delay_s: float, config: LadderConfig
) -> tuple[RungResult, np.ndarray, ParamSpace, float]:
    """Rung 3: the physical servo, one parameter set across gains.

    The transport delay is profiled between 0 and the cross-correlation delay (which also
    holds the dynamics' own lag): on a grid of delays the physics is refitted at each one
    (several starts per delay, all in one batched LM), and the best delay is refined with a
    parabola (a fine profile at every sample around the best coarse delay), then the physics
    is refitted at that delay;
    the delay is never a free parameter of
    the gradient fit. Folds start from the fit on all training logs, rescan their delay
    with the physics held fixed, then refit the physics.

    Returns:
        (result, parameters (6,) of the fit on all training logs, space, its delay [s]).
    """
    t0 = time.perf_counter()
    space = ParamSpace(FREE_BAM if known_drive else FREE_GENERIC)
    rng = np.random.default_rng(config.seed)
    W = _fold_weights(batch, folds)
    kmax = int(np.ceil(min(xcorr_delay_s, config.max_delay_s) / batch.dt))
    # profile over the delay: a coarse grid of delays, the physics refitted at each one (all
    # delays in one batched LM), each started from the best random candidate at that delay
    n_d = min(kmax + 1, config.delay_grid)
    d_grid = np.unique(np.round(np.linspace(0, kmax, n_d))) * batch.dt
    bank = _delay_bank(batch, d_grid)
    n_c = config.global_samples
    choice = np.arange(n_c) % d_grid.size
    cands = space.lo + (space.hi - space.lo) * rng.random((n_c, space.lo.size))
    cost = np.empty(n_c)
    spent = [n_c]  # candidates rolled out on every log: the global search, then LM's
    for s in range(0, n_c, 128):
        sl = slice(s, s + 128)
        sim = simulate(space.full(cands[sl]), batch, bank[choice[sl]])
        r = (sim - batch.q[None]).reshape(sim.shape[0], -1)
        cost[sl] = weighted_mae(r, np.broadcast_to(W[0], r.shape))
    S = config.starts_per_delay
    start_idx = np.concatenate(
        [np.flatnonzero(choice == i)[np.argsort(cost[choice == i])[:S]] for i in range(d_grid.size)]
    )
    prof = lm_fit(
        _servo_resid(space, batch, bank[choice[start_idx]], spent),
        cands[start_idx],
        np.repeat(W[:1], start_idx.size, 0),
        space.lo,
        space.hi,
        iters=config.lm_iters,
    )
    per_delay = prof.cost.reshape(d_grid.size, -1)
    best_start = np.argmin(per_delay, axis=1)
    k = int(np.argmin(per_delay[np.arange(d_grid.size), best_start]))
    theta_k = prof.theta.reshape(d_grid.size, -1, space.lo.size)[k, best_start[k]][None]
    # fine profile: every sample between the coarse neighbours, warm started
    spacing = int(round((d_grid[1] - d_grid[0]) / batch.dt)) if d_grid.size > 1 else 1
    k0 = int(round(d_grid[k] / batch.dt))
    fine = np.arange(max(0, k0 - spacing), min(kmax, k0 + spacing) + 1) * batch.dt
    if fine.size > 1:
        fp = lm_fit(
            _servo_resid(space, batch, _delay_bank(batch, fine), spent),
            np.repeat(theta_k, fine.size, 0),
            np.repeat(W[:1], fine.size, 0),
            space.lo,
            space.hi,
            iters=config.fold_iters,
        )
        j = int(np.argmin(fp.cost))
        theta_k = fp.theta[j : j + 1]
        d_best = float(fine[j])
        if 0 < j < fine.size - 1:
            d_best += batch.dt * delay_mod.parabolic_peak(
                fp.cost[j - 1], fp.cost[j], fp.cost[j + 1]
            )
    else:
        d_best = float(d_grid[k])
    d_full = np.array([max(0.0, d_best)])
    fit = lm_fit(
        _servo_resid(space, batch, _delay_bank(batch, d_full), spent),
        theta_k,
        W[:1],
        space.lo,
        space.hi,
        iters=config.lm_iters,
    )
    theta_full = fit.theta
    if folds.train.shape[0] > 1:
        Wf = W[1:]
        th_f = np.repeat(theta_full, Wf.shape[0], 0)
        d_f = _scan_servo_delay(space, th_f, batch, Wf, kmax)
        spent[0] += th_f.shape[0] * (kmax + 1)  # the scan's grid, for each fold
        ff = lm_fit(
            _servo_resid(space, batch, _delay_bank(batch, d_f), spent),
            th_f,
            Wf,
            space.lo,
            space.hi,
            iters=config.fold_iters,
        )
        all_theta = np.vstack([theta_full, ff.theta])
        all_d = np.concatenate([d_full, d_f])
    else:
        all_theta, all_d = theta_full, d_full
    pred = np.array(
        [
            simulate(
                space.full(all_theta[f : f + 1]), batch, _delay_bank(batch, all_d[f : f + 1])[0]
            )[0]
            for f in range(all_theta.shape[0])
        ]
    )
    p_full = space.full(theta_full)[0]
    params: dict[str, Any] = {"delay_s": float(d_full[0]), **named_params(p_full, space)}
    reasons = {
        "delay_s": at_bound(params["delay_s"], delay_bounds(kmax * batch.dt, config), "s"),
        **servo_bound_reasons(p_full, space),
    }
    return (
        scored(
            "servo",
            pred,
            batch,
            folds,
            params,
            t0,
            noise_floor_rad=config.noise_floor_rad,
            reasons=reasons,
            evaluations=spent[0] + int(pred.shape[0]),
        ),
        p_full,
        space,
        float(d_full[0]),
    )
