"""Fit BAM's friction families on a known servo, every family and fold at once, and select
the simplest family that held-out trajectory types do not reject.

Each (family, fold) pair is one CMA-ES problem (``simgap.fit.cma_es``): its cost is the mean
absolute position error of the open-loop rollout over the fold's training logs, the loss BAM
fits.
One generation simulates every candidate of every problem of a family in one call.
Parameters get intervals from a Bayesian bootstrap over the training logs (Dirichlet log
weights, each replicate refitted by a CMA-ES warm started at the optimum; replicates in
lockstep): mean +- t sd of the replicates, t the Student-t quantile of the one interval
rule (``simgap.fit.intervals.t_quantile``) on replicates - 1 degrees of freedom (2.20 for the
default 12 replicates; the normal 1.96 it replaced claimed a band 11 % too narrow), clipped
to the box and stretched to hold the fitted value. A parameter whose interval covers more
than half its box is reported not identifiable, with the numbers. The result is the fit's
``Estimate`` (``simgap.fit.estimate``); ``bootstrap_json`` gives the rung's JSON form.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.actuator.families import ServoFamily
from simgap.actuator.friction import FrictionFamily, friction_family
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch
from simgap.fit import cma_es as cma_fit
from simgap.fit.estimate import Estimate, ParamEstimate
from simgap.fit.intervals import t_quantile
from simgap.fit.lm import lm_fit
from simgap.fit.loss import finite_residual

SELECTION_ORDER = ("m1", "m3", "m2", "m4", "m5", "m6")
"""Families from simplest (fewest parameters: 2, 3, 5, 7, 9, 11 friction terms) up."""

UNIDENTIFIABLE_FRACTION = 0.5
"""An interval wider than this fraction of its box: the parameter is not identifiable."""

PHYS_UNITS = {
    "kt": "N m/A",
    "R": "ohm",
    "armature": "kg m^2",
    "q_offset": "rad",
    "delay_s": "s",
    "friction_base": "N m",
    "friction_viscous": "N m s/rad",
    "friction_stribeck": "N m",
    "dtheta_stribeck": "rad/s",
    "alpha": "1",
    "load_friction_base": "1",
    "load_friction_motor": "1",
    "load_friction_external": "1",
    "load_friction_stribeck": "1",
    "load_friction_motor_stribeck": "1",
    "load_friction_external_stribeck": "1",
    "load_friction_motor_quad": "1/(N m)",
    "load_friction_external_quad": "1/(N m)",
    "max_velocity": "rad/s",
}
"""The unit of each physical servo parameter (BAM's names; ``friction.FRICTION_BOXES``)."""


@dataclass(frozen=True)
class FamilyFit:
    """One family fitted on every fold.

    Attributes:
        family: ``m1`` ... ``m6``.
        space: its parameters and boxes.
        x: physical parameters of each fold's fit, shape (F, n) (row 0: all training logs).
        train_cost: each fold's training MAE [rad], shape (F,).
        pred: each fold's rollout of every log [rad], shape (F, L, T).
        evaluations: candidate rollouts spent per fold, shape (F,).
        fit_time_s: wall time of the whole batched fit of this family (its share) [s].
        estimate: row 0's parameters with their bootstrap intervals or reasons, its
            training MAE against the floor (``bootstrap_intervals``); None until
            bootstrapped (only the selected family is).
    """

    family: str
    space: PhysicalSpace
    x: np.ndarray
    train_cost: np.ndarray
    pred: np.ndarray
    evaluations: np.ndarray
    fit_time_s: float = 0.0
    estimate: Estimate | None = None

    def params(self, row: int = 0) -> dict[str, float]:
        """BAM-named parameters of one fold's fit (row 0: all training logs)."""
        return self.space.named(self.x[row])


def per_log_mae(pred: np.ndarray, batch: ServoBatch) -> np.ndarray:
    """MAE of each rollout on each log [rad]: pred (..., L, T) -> (..., L)."""
    err = finite_residual(pred - batch.q) * batch.mask
    return np.abs(err).sum(axis=-1) / batch.mask.sum(axis=1)


def _costs(pred: np.ndarray, batch: ServoBatch, weights: np.ndarray) -> np.ndarray:
    """Weighted mean of the per-log MAE: pred (M, L, T), weights (M, L) -> (M,)."""
    per = per_log_mae(pred, batch)
    return (per * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-300)


def fit_families(
    batch: ServoBatch,
    train: np.ndarray,
    servo: ServoFamily,
    seed: int,
    families: Sequence[str] = SELECTION_ORDER,
    settings: cma_fit.CmaSettings = cma_fit.CmaSettings(),
    fit_max_velocity: bool = False,
    polish_iters: int = 12,
    fit_delay: bool = True,
) -> dict[str, FamilyFit]:
    """Fit each family on each fold's training logs.

    Args:
        batch: every log (training and held out).
        train: which logs each fold trains on, shape (F, L), bool.
        servo: the servo family (firmware constants, motor boxes).
        seed: seed of every search.
        families: names of the families to fit.
        settings: CMA-ES budget per (family, fold).
        fit_max_velocity: also fit the firmware's velocity clamp (STS3215).
        polish_iters: Levenberg-Marquardt iterations refining each optimum (``polish``).
        fit_delay: also fit the transport delay (``PhysicalSpace.fit_delay``).

    Returns:
        family name -> FamilyFit.
    """
    fams: list[FrictionFamily] = [friction_family(f) for f in families]
    spaces = [PhysicalSpace(f, servo, fit_max_velocity, fit_delay) for f in fams]
    F = train.shape[0]
    w = train.astype(float)
    dims = [len(sp.names) for sp in spaces for _ in range(F)]
    timers = np.zeros(len(fams))

    def evaluate(asks: Sequence[np.ndarray]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for i, sp in enumerate(spaces):
            block = asks[i * F : (i + 1) * F]
            sizes = [a.shape[0] for a in block]
            if sum(sizes) == 0:
                out.extend(np.empty(0) for _ in block)
                continue
            t0 = time.perf_counter()
            z = np.concatenate([a for a in block if a.size], axis=0)
            x = sp.from_unit(z)
            pred = simulate_physical(sp.superset(x), batch)
            rows = np.repeat(np.arange(F), sizes)
            c = _costs(pred, batch, w[rows]) + sp.penalty(x)
            timers[i] += time.perf_counter() - t0
            out.extend(np.split(c, np.cumsum(sizes)[:-1]))
        return out

    res = cma_fit.minimize(
        dims, evaluate, seed, settings, x0=[sp.nominal_unit() for sp in spaces for _ in range(F)]
    )
    fits: dict[str, FamilyFit] = {}
    for i, (fam, sp) in enumerate(zip(fams, spaces, strict=True)):
        t0 = time.perf_counter()
        z, cost, extra = polish(
            sp,
            np.array(res.x[i * F : (i + 1) * F]),
            res.cost[i * F : (i + 1) * F],
            batch,
            w,
            polish_iters,
        )
        x = sp.from_unit(z)
        pred = simulate_physical(sp.superset(x), batch)
        timers[i] += time.perf_counter() - t0
        fits[fam.name] = FamilyFit(
            family=fam.name,
            space=sp,
            x=x,
            train_cost=cost,
            pred=pred,
            evaluations=res.evaluations[i * F : (i + 1) * F] + extra,
            fit_time_s=float(timers[i]),
        )
    return fits


def polish(
    space: PhysicalSpace,
    z: np.ndarray,
    cost: np.ndarray,
    batch: ServoBatch,
    weights: np.ndarray,
    iters: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Refine CMA-ES optima with the batched Levenberg-Marquardt on the MAE (IRLS), every
    fold at once, in the unit cube; a fold keeps the refinement only where its cost
    (motor-curve penalty included) went down.

    Args:
        z: unit-cube optima, shape (F, n); cost: their costs, shape (F,).
        weights: training logs of each fold, shape (F, L).

    Returns:
        (points, costs, rollouts spent per fold).
    """
    if iters <= 0:
        return z, cost, np.zeros(z.shape[0], dtype=int)
    F, n = z.shape
    W = (weights[:, :, None] * batch.mask[None]).reshape(F, -1)
    W = W / np.maximum(batch.mask.sum(axis=1), 1.0).repeat(batch.mask.shape[1])[None]

    def resid(theta: np.ndarray, fold: np.ndarray) -> np.ndarray:
        del fold
        sim = simulate_physical(space.superset(space.from_unit(theta)), batch)
        return (sim - batch.q[None]).reshape(theta.shape[0], -1)

    fit = lm_fit(resid, z, W, np.zeros(n), np.ones(n), iters=iters, step=1e-4)
    x = space.from_unit(fit.theta)
    new = _costs(simulate_physical(space.superset(x), batch), batch, weights) + space.penalty(x)
    keep = new < cost
    spent = np.full(F, (fit.iterations + 1) * (n + 2))
    return (np.where(keep[:, None], fit.theta, z), np.where(keep, new, cost), spent)


def bootstrap_intervals(
    fit: FamilyFit,
    batch: ServoBatch,
    train: np.ndarray,
    seed: int,
    replicates: int = 12,
    evaluations: int = 150,
    noise_floor_rad: float | None = None,
) -> Estimate:
    """95 % intervals of the fit on ``train`` (row 0) from a Bayesian bootstrap over logs.

    Args:
        noise_floor_rad: the instrument's floor the training MAE is judged against [rad]
            (None: none given).

    Returns:
        Row 0's estimate: each parameter with its interval, or the reason (the interval
        turned down kept as ``rejected``); row 0's MAE over the training logs (the mean of
        the per-log MAEs) [rad]; the bootstrap's evaluations.
    """
    sp = fit.space
    rng = np.random.default_rng(seed + 7919)
    idx = np.flatnonzero(train)
    weights = np.zeros((replicates, batch.n_logs))
    weights[:, idx] = rng.dirichlet(np.ones(idx.size), size=replicates)
    z0 = sp.to_unit(fit.x[:1])[0]

    def evaluate(asks: Sequence[np.ndarray]) -> list[np.ndarray]:
        sizes = [a.shape[0] for a in asks]
        z = np.concatenate([a for a in asks if a.size], axis=0)
        x = sp.from_unit(z)
        pred = simulate_physical(sp.superset(x), batch)
        c = _costs(pred, batch, weights[np.repeat(np.arange(replicates), sizes)]) + sp.penalty(x)
        return list(np.split(c, np.cumsum(sizes)[:-1]))

    settings = cma_fit.CmaSettings(evaluations=evaluations, sigma0=0.05, max_restarts=0)
    res = cma_fit.minimize(
        [z0.size] * replicates, evaluate, seed + 1, settings, x0=[z0] * replicates
    )
    xs = sp.from_unit(np.array(res.x))
    point = fit.x[0]
    tq = t_quantile(replicates - 1)
    params = []
    for j, name in enumerate(sp.names):
        lo_b, hi_b = sp.box(name)
        sd = float(np.std(xs[:, j], ddof=1))
        low = max(lo_b, min(float(point[j]), float(xs[:, j].mean()) - tq * sd))
        high = min(hi_b, max(float(point[j]), float(xs[:, j].mean()) + tq * sd))
        frac = (high - low) / max(hi_b - lo_b, 1e-300)
        reason = (
            f"the 95% interval [{low:.3g}, {high:.3g}] covers {frac:.0%} "
            f"of the box [{lo_b:.3g}, {hi_b:.3g}]"
            if frac > UNIDENTIFIABLE_FRACTION
            else ""
        )
        params.append(
            ParamEstimate.of(name, PHYS_UNITS.get(name, ""), float(point[j]), (low, high), reason)
        )
    return Estimate(
        tuple(params),
        float(per_log_mae(fit.pred[0], batch)[idx].mean()),
        "rad",
        "MAE",
        noise_floor_rad,
        int(np.sum(res.evaluations)),
    )


def bootstrap_json(est: Estimate) -> dict[str, Any]:
    """The rung's JSON form of a bootstrap estimate: name -> {"value", "low", "high",
    "identifiable"} plus "reason" when not identifiable ("low"/"high" then the interval
    turned down)."""
    out: dict[str, Any] = {}
    for p in est:
        low, high = p.interval or p.rejected or (float("nan"), float("nan"))
        entry: dict[str, Any] = {
            "value": p.value,
            "low": low,
            "high": high,
            "identifiable": p.identified,
        }
        if p.reason:
            entry["reason"] = p.reason
        out[p.name] = entry
    return out
