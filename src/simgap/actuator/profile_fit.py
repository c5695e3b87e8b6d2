"""The joint fit's delay profile, fitted: the dynamics refitted at every delay of a coarse
grid and then a fine one about each joint's best (``profile_fit``, on ``delay_grid``), the
better of the nominal and the drawn start kept per delay (``better_of_starts``), the best
points polished (``polish_best``) and the grid fits merged (``merge_grids``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from simgap.actuator.joint_problem import JointProblem
from simgap.fit.profile import GridFit, delay_profile, grid_fit

if TYPE_CHECKING:
    from simgap.actuator.joint_id import IdConfig


def delay_grid(config: IdConfig) -> np.ndarray:
    if not config.profile_delay:
        return np.array([config.fixed_delay_s])
    n = int(np.floor(config.max_delay_s / config.coarse_step_s + 1e-9)) + 1
    return np.arange(n) * config.coarse_step_s


def profile_fit(
    problem: JointProblem, cfg: IdConfig, start: np.ndarray | None = None
) -> tuple[GridFit, list[GridFit]]:
    """The delay profile under the replayer's current clock: the coarse grid (from
    ``start``, shape (G, n), or the model's values), the fine grid around its best and the
    polish, merged (``fit``) and each (``grids``)."""
    J, K = problem.J, problem.K
    grid = delay_grid(cfg)
    z_first = np.repeat(problem.z0[None], grid.size, axis=0)
    drawn = np.zeros(grid.size, dtype=bool) if start is None else np.any(start != z_first, axis=1)
    if start is not None and drawn.any():  # both starts where they differ, one batched grid
        z_first = np.concatenate([z_first, start[drawn]])
    both = grid_fit(
        problem.residuals,
        np.concatenate([grid, grid[drawn]]),
        z_first,
        problem.lo,
        problem.hi,
        J,
        K,
        iters=cfg.coarse_iters if cfg.profile_delay else cfg.fine_iters,
        central=cfg.central,
        joint_blocks=cfg.joint_blocks,
    )
    coarse = better_of_starts(both, grid.size, drawn)
    grids = [coarse]
    fit = coarse
    if cfg.profile_delay and coarse.delays.size > 1:
        total = coarse.ssr.sum(axis=1)
        g = int(np.argmin(total))
        lo_d = max(0.0, float(coarse.delays[g]) - cfg.coarse_step_s)
        hi_d = min(float(coarse.delays[-1]), float(coarse.delays[g]) + cfg.coarse_step_s)
        fine_d = np.linspace(lo_d, hi_d, cfg.fine_points)
        z_start = np.stack([coarse.z[int(np.argmin(np.abs(coarse.delays - d)))] for d in fine_d])
        fine = grid_fit(
            problem.residuals,
            fine_d,
            z_start,
            problem.lo,
            problem.hi,
            J,
            K,
            iters=cfg.fine_iters,
            central=cfg.central,
            joint_blocks=cfg.joint_blocks,
        )
        grids.append(fine)
        fit = merge_grids(coarse, fine)
        polish = polish_best(
            problem, fit, float(fine_d[1] - fine_d[0]) / 4 if fine_d.size > 1 else 0.0, cfg
        )
        if polish is not None:
            grids.append(polish)
            fit = merge_grids(fit, polish)
    return fit, grids


def better_of_starts(fit: GridFit, G: int, drawn: np.ndarray) -> GridFit:
    """Per delay of a grid fitted from the model's start (rows ``:G``) and, where ``drawn``,
    from the global start too (rows ``G:``), the fit with the lower SSR of the arm."""
    if fit.delays.size == G:
        return fit
    rows = np.arange(G)
    alt = G + np.arange(int(drawn.sum()))
    won = fit.ssr[alt].sum(axis=1) < fit.ssr[np.flatnonzero(drawn)].sum(axis=1)
    rows[np.flatnonzero(drawn)[won]] = alt[won]
    return GridFit(
        delays=fit.delays[rows],
        z=fit.z[rows],
        ssr=fit.ssr[rows],
        jac=fit.jac[rows],
        resid=fit.resid[rows],
        iterations=fit.iterations,
        n_evals=fit.n_evals,
    )


def polish_best(
    problem: JointProblem,
    fit: GridFit,
    step: float,
    cfg: IdConfig,
) -> GridFit | None:
    """``cfg.polish_points`` delays within ``step`` either side of the joints' median best
    delay, each refitted from the dynamics interpolated between the grid's neighbours
    (None: no polish, or every such delay is already on the grid)."""
    if cfg.polish_points <= 0 or step <= 0:
        return None
    best = float(
        np.median([delay_profile(fit.delays, fit.ssr[:, j], 1).best_s for j in range(problem.J)])
    )
    pol = best + step * (
        np.linspace(-1.0, 1.0, cfg.polish_points) if cfg.polish_points > 1 else np.zeros(1)
    )
    pol = np.unique(np.clip(pol, 0.0, float(fit.delays[-1])))
    pol = pol[np.min(np.abs(pol[:, None] - fit.delays[None]), axis=1) > 1e-6]
    if not pol.size:
        return None
    z0 = np.stack([np.interp(pol, fit.delays, fit.z[:, i]) for i in range(fit.z.shape[1])], axis=1)
    return grid_fit(
        problem.residuals,
        pol,
        z0,
        problem.lo,
        problem.hi,
        problem.J,
        problem.K,
        iters=cfg.fine_iters,
        central=cfg.central,
        joint_blocks=cfg.joint_blocks,
    )


def merge_grids(a: GridFit, b: GridFit) -> GridFit:
    """Two grid fits as one, sorted by delay (the fine grid wins on a shared delay)."""
    d = np.concatenate([b.delays, a.delays])
    _, first = np.unique(np.round(d, 9), return_index=True)
    order = first[np.argsort(d[first])]

    def cat(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.concatenate([y, x])[order]

    return GridFit(
        delays=d[order],
        z=cat(a.z, b.z),
        ssr=cat(a.ssr, b.ssr),
        jac=cat(a.jac, b.jac),
        resid=cat(a.resid, b.resid),
        iterations=a.iterations + b.iterations,
        n_evals=a.n_evals + b.n_evals,
    )
