"""Searches over normalised parameters: a 1-D sweep, simulated annealing, least squares.

Every search ends in a ``FitResult`` carrying the statistics that say whether a number
can be trusted: its ``Estimate`` (``simgap.fit.estimate``: each value with its 95 %
interval, from s^2 (J^T J)^-1 with Student-t half-widths by the one rule of
``simgap.fit.intervals``, or the reason it is not identified; the RMS residual and the
noise floor), the parameters that ended at a bound, the condition number of J^T J, and the
norm of each Jacobian column (a near-zero column means the data cannot see that parameter).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize

from simgap.fit.estimate import Estimate
from simgap.fit.intervals import jacobian_intervals, t_quantile
from simgap.fit.local_backend import Backend
from simgap.fit.params import ParamSet

IDENTIFIED_REL_HALF_WIDTH = 0.05
"""A parameter counts as identified when its 95 % half-width is under 5 % of its value."""

RESIDUAL_UNITS = {"joints": "rad", "object": "m", "ee": "m and rad (translation, rotation)"}
"""The residual's unit by what a ``ReplayProblem`` scores (``score``)."""


def residual_unit(backend: Backend) -> str:
    """The unit of ``backend``'s residuals: from its problem's ``score`` where it replays a
    ``ReplayProblem``, else ``residual units``."""
    score = getattr(getattr(backend, "problem", None), "score", None)
    return RESIDUAL_UNITS.get(str(score), "residual units")


def jacobian(
    backend: Backend, x: np.ndarray, r0: np.ndarray, upper: np.ndarray, eps: float = 1e-4
) -> np.ndarray:
    """Forward-difference Jacobian with all n columns in ONE batched evaluation.

    The step ``eps * max(1, |x|)`` is taken upwards, or downwards where that would cross
    ``upper``.
    """
    n = x.size
    h = eps * np.maximum(1.0, np.abs(x))
    h = np.where(x + h > upper, -h, h)
    xs = np.repeat(x[None], n, axis=0) + np.diag(h)
    rs = backend.residuals(xs)
    out: np.ndarray = ((rs - r0[None]) / h[:, None]).T
    return out


@dataclass(frozen=True)
class FitResult:
    """The outcome of one search.

    Attributes:
        method: ``sweep``, ``dual_annealing`` or ``least_squares``.
        estimate: the SI values, each with its 95 % interval or the reason it is not
            identified, the RMS residual at the best and the noise floor given
            (``simgap.fit.estimate``).
        x: best normalised coordinates, shape (n,).
        nominal: nominal SI values, shape (n,).
        cost_before: 0.5 ||r||^2 at the nominal (or the scalar loss used).
        cost_after: the same at the best.
        half_width: the interval rule's 95 % half-widths in SI, shape (n,) (inf: a null
            direction), before the identifiability verdict: finite also where the
            estimate turned the interval down.
        at_bounds: names of parameters at a bound.
        cond: cond(J^T J) at the best.
        col_norm: Jacobian column norms (normalised coordinates), shape (n,).
        n_evals: candidate evaluations (rollouts per log).
        seed: the seed (annealing).
        extra: method-specific data (a sweep's curve; ``profile_rise``, per parameter the
            least rise of the squared residual over its two 5 % steps, and
            ``profile_threshold``, the t^2 s^2 it is held against).
    """

    method: str
    estimate: Estimate
    x: np.ndarray
    nominal: np.ndarray
    cost_before: float
    cost_after: float
    half_width: np.ndarray
    at_bounds: list[str]
    cond: float
    col_norm: np.ndarray
    n_evals: int
    seed: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def table(self) -> dict[str, dict[str, Any]]:
        """JSON-able per-parameter rows: value, nominal, half_width, identified, why."""
        return {
            p.name: {
                "value": p.value,
                "nominal": float(nom),
                "half_width": float(h),
                "identified": p.identified,
                "why": p.reason,
            }
            for p, nom, h in zip(self.estimate, self.nominal, self.half_width, strict=True)
        }


def _cost(r: np.ndarray) -> float:
    return 0.5 * float(r @ r)


def assess(
    backend: Backend,
    params: ParamSet,
    x: np.ndarray,
    *,
    method: str,
    cost_before: float,
    n_evals: int,
    seed: int | None = None,
    extra: dict[str, Any] | None = None,
    cost_after: float | None = None,
    eps: float = 1e-4,
    noise: float | None = None,
    unit: str | None = None,
) -> FitResult:
    """Intervals, bounds and identifiability at ``x``; see ``FitResult``. The estimate's
    residual is the RMS of the residual vector at ``x`` in ``unit`` (default: the backend's,
    ``residual_unit``) and its noise floor ``noise``.

    With ``noise`` (the measurement noise, residual units), a fit whose residual RMS stays
    above twice the noise has not explained the data (a local minimum or a structural
    mismatch): no parameter of it is called identified, whatever its interval says.
    """
    lo, hi = params.x_lower, params.x_upper
    r = backend.residuals(x[None])[0]
    jac = jacobian(backend, x, r, hi, eps=eps)
    iv = jacobian_intervals(jac, r)
    col_norm = np.linalg.norm(jac, axis=0)
    scale = np.array([p.value_per_x for p in params.params])
    values = params.values(x)
    hw = iv.half_width * np.abs(scale)
    bounds = params.at_bounds(x)
    col_max = float(col_norm.max()) if col_norm.size else 0.0
    # a profile check against non-smooth residuals (friction, saturation): moving one
    # parameter by IDENTIFIED_REL_HALF_WIDTH of its value must raise the squared residual
    # by more than t^2 s^2 in BOTH directions; a kink can make the local Jacobian steep
    # while the cost is flat a few per cent away
    n = x.size
    prof = np.repeat(x[None], 2 * n, axis=0)
    for k, p in enumerate(params.params):
        dx = IDENTIFIED_REL_HALF_WIDTH * abs(values[k]) / abs(p.value_per_x)
        prof[2 * k, k] = min(x[k] + dx, hi[k])
        prof[2 * k + 1, k] = max(x[k] - dx, lo[k])
    ssr = float(r @ r)
    rise = (backend.residuals(prof) ** 2).sum(axis=1) - ssr
    tq2 = t_quantile(iv.dof) ** 2 * iv.s2
    why = []
    rms = float(np.sqrt(np.mean(r**2))) if r.size else 0.0
    for k, p in enumerate(params.params):
        rel = hw[k] / max(abs(values[k]), 1e-300)
        if noise is not None and rms > 2 * noise:
            why.append(
                f"the fit did not reach the noise floor (residual RMS {rms:.3g} > "
                f"2 x noise {noise:.3g}): a local minimum or a model mismatch"
            )
        elif col_norm[k] <= 1e-6 * max(col_max, 1e-300):
            why.append(
                f"Jacobian column ~0 ({col_norm[k]:.2g} vs max {col_max:.2g}): "
                "the data does not depend on it"
            )
        elif not np.isfinite(hw[k]):
            why.append(iv.withheld[k])
        elif p.name in bounds:
            why.append("ended at a bound of its range")
        elif rel > IDENTIFIED_REL_HALF_WIDTH:
            why.append(f"95% half-width is {100 * rel:.0f}% of the value")
        elif min(rise[2 * k], rise[2 * k + 1]) <= tq2:
            why.append(
                f"flat profile: a {100 * IDENTIFIED_REL_HALF_WIDTH:.0f}% change "
                f"raises the squared residual by {min(rise[2 * k], rise[2 * k + 1]):.3g}"
                f" <= t^2 s^2 = {tq2:.3g} (non-smooth residual)"
            )
        else:
            why.append("")
    n_spent = n_evals + 3 * x.size + 1
    estimate = Estimate.from_intervals(
        params.names,
        [p.unit for p in params.params],
        values,
        iv,
        scale=scale,
        reasons=why,
        residual=rms,
        residual_unit=unit or residual_unit(backend),
        noise_floor=noise,
        evaluations=n_spent,
    )
    return FitResult(
        method=method,
        estimate=estimate,
        x=x,
        nominal=np.array([p.nominal for p in params.params]),
        cost_before=cost_before,
        cost_after=_cost(r) if cost_after is None else cost_after,
        half_width=hw,
        at_bounds=bounds,
        cond=iv.cond,
        col_norm=col_norm,
        n_evals=n_spent,
        seed=seed,
        extra={
            **(extra or {}),
            # per parameter, the least rise of the squared residual over its two 5 % steps,
            # and the t^2 s^2 it is held against (a fall beyond it: not at a minimum)
            "profile_rise": [float(min(rise[2 * k], rise[2 * k + 1])) for k in range(n)],
            "profile_threshold": float(tq2),
        },
    )


def least_squares(
    backend: Backend,
    params: ParamSet,
    x0: np.ndarray | None = None,
    *,
    max_iter: int = 30,
    eps: float = 1e-6,
    noise: float | None = None,
    restarts: int = 2,
    n_starts: int = 1,
    seed: int = 0,
    unit: str | None = None,
) -> FitResult:
    """Levenberg-Marquardt through ``mujoco.minimize`` with a batched residual.

    Args:
        x0: start in normalised coordinates (default: the nominal).
        max_iter: iterations per LM run.
        eps: finite-difference step.
        noise: measurement noise (residual units), for the identifiability verdict.
        restarts: LM re-runs from its own result (a fresh regulariser).
        n_starts: starts in all: ``x0`` and ``n_starts - 1`` seeded log-normal
            perturbations of it (30 %); the lowest cost wins.
        seed: seed of the extra starts.
        unit: the residual's unit (default: the backend's, ``residual_unit``).
    """
    from simgap.sim.minimize import least_squares as mj_lsq

    x0 = params.x_nominal if x0 is None else np.asarray(x0, dtype=float)
    lo, hi = params.x_lower, params.x_upper
    x0 = np.clip(x0, lo + 1e-3 * (hi - lo), hi - 1e-3 * (hi - lo))
    start = backend.residuals(params.x_nominal[None])[0]
    n0 = getattr(backend, "n_evals", 0)

    # mujoco.minimize's tolerances are absolute: scale residuals to unit RMS at the start
    # so that small physical residuals (metres, radians) do not stop it early
    rs = float(np.sqrt(np.mean(start**2))) or 1.0

    def residual(xm: np.ndarray) -> np.ndarray:
        out: np.ndarray = backend.residuals(np.asarray(xm).T).T / rs
        return out

    def one(start: np.ndarray) -> tuple[np.ndarray, int]:
        x, iters, _ = mj_lsq(start, residual, lo, hi, max_iter=max_iter, eps=eps)
        for _ in range(restarts):  # a fresh regulariser can leave a stall at a kink
            x2, it2, _ = mj_lsq(x, residual, lo, hi, max_iter=max_iter, eps=eps)
            iters += it2
            if np.allclose(x2, x, rtol=1e-6, atol=1e-9):
                break
            x = x2
        return x, iters

    # multi-start: non-smooth residuals (friction, torque saturation) have local minima
    rng = np.random.default_rng(seed)
    starts = [x0] + [
        np.clip(x0 * np.exp(rng.normal(0, 0.3, x0.size)), lo, hi)
        for _ in range(max(0, n_starts - 1))
    ]
    best: tuple[float, np.ndarray, int] | None = None
    total = 0
    for st in starts:
        xs, its = one(st)
        total += its
        c = _cost(backend.residuals(xs[None])[0])
        if best is None or c < best[0]:
            best = (c, xs, its)
    assert best is not None
    x, iters = best[1], total
    n = getattr(backend, "n_evals", 0) - n0
    return assess(
        backend,
        params,
        x,
        method="least_squares",
        cost_before=_cost(start),
        n_evals=n,
        extra={"iterations": iters},
        noise=noise,
        unit=unit,
    )


def dual_annealing(
    backend: Backend,
    params: ParamSet,
    *,
    seed: int = 0,
    maxfun: int = 400,
    loss: Callable[[np.ndarray], float] | None = None,
    x0: np.ndarray | None = None,
) -> FitResult:
    """``scipy.optimize.dual_annealing`` over the normalised box (as SIMPLER annealed).

    Args:
        loss: scalar loss of one residual vector (default 0.5 ||r||^2).
        maxfun: evaluation budget (each one replay of every log).
    """
    f_loss = loss or _cost
    lo, hi = params.x_lower, params.x_upper
    x0 = params.x_nominal if x0 is None else x0

    def f(x: np.ndarray) -> float:
        return f_loss(backend.residuals(x[None])[0])

    before = f(np.clip(params.x_nominal, lo, hi))
    res = optimize.dual_annealing(
        f,
        bounds=list(zip(lo, hi, strict=True)),
        seed=seed,
        maxfun=maxfun,
        x0=np.clip(x0, lo, hi),
        minimizer_kwargs={"method": "L-BFGS-B", "options": {"maxfun": max(10, maxfun // 4)}},
    )
    return assess(
        backend,
        params,
        np.asarray(res.x, dtype=float),
        method="dual_annealing",
        cost_before=before,
        cost_after=float(res.fun),
        n_evals=int(res.nfev),
        seed=seed,
    )


def sweep(
    backend: Backend,
    params: ParamSet,
    index: int,
    values: np.ndarray,
    *,
    base_x: np.ndarray | None = None,
    loss: Callable[[np.ndarray], float] | None = None,
    refine_points: int = 21,
) -> dict[str, Any]:
    """Evaluate ONE parameter over SI ``values`` (others at ``base_x``) in one batch.

    Returns:
        ``{"name", "values", "loss", "best_value", "best_loss", "nominal_loss",
        "refined_value"}``; ``refined_value`` is the best of a second, finer batch of
        ``refine_points`` values between the best grid point's neighbours (None when the
        best is at the grid's edge: the optimum may lie outside the grid).
    """
    f_loss = loss or _cost
    p = params.params[index]
    base = params.x_nominal if base_x is None else np.asarray(base_x, dtype=float)
    xs = np.repeat(base[None], len(values) + 1, axis=0)
    xs[:-1, index] = [p.to_x(float(v)) for v in values]
    rs = backend.residuals(xs)
    losses = np.array([f_loss(r) for r in rs])
    curve, nominal_loss = losses[:-1], float(losses[-1])
    k = int(np.argmin(curve))
    refined = None
    if 0 < k < len(values) - 1 and refine_points > 0:
        fine = np.linspace(float(values[k - 1]), float(values[k + 1]), refine_points)
        xf = np.repeat(base[None], refine_points, axis=0)
        xf[:, index] = [p.to_x(float(v)) for v in fine]
        fl = np.array([f_loss(r) for r in backend.residuals(xf)])
        refined = float(fine[int(np.argmin(fl))])
    return {
        "name": p.name,
        "values": [float(v) for v in values],
        "loss": [float(v) for v in curve],
        "best_value": float(values[k]),
        "best_loss": float(curve[k]),
        "nominal_loss": nominal_loss,
        "refined_value": refined,
    }
