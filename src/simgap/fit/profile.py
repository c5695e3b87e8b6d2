"""Delay profile: the joint dynamics refitted at every delay of a grid, all in one batch.

A transport delay trades against the dynamics (a softer servo or more viscous friction
looks like a later response), so it is not fitted by gradient together with them. It is
*profiled*: at each delay ``d_g`` of a grid the dynamics parameters are refitted, and the
per-joint sum of squared residuals ``SSR_j(d_g)`` is the profile. Its minimum is the best
delay, and the 95 % interval is the set of delays whose profile rises by less than
``chi2_1(0.95) * s_j^2 * inflation_j`` (profile likelihood; ``s_j^2`` is the residual
variance at the minimum, ``inflation_j = (1 + rho) / (1 - rho)`` corrects for the lag-1
autocorrelation ``rho`` of the residuals, which are not white when the model is not
perfect).

``grid_fit`` runs the one batched Levenberg-Marquardt (``simgap.fit.lm.lm_batch``) at
every grid delay at once, configured for the profile: the sum of squares
(``simgap.fit.loss.SumOfSquares``), ``block_jacobian`` differences kept after a rejected
step (``simgap.fit.jacobian.BlockDifferences``), and a line search over ``LINE_STEPS``.
Each iteration is ONE batched evaluation of every grid point's finite-difference
candidates and one of the trial steps. Parameters are in log-multiplier
coordinates ``z = ln(value / nominal)`` (five orders of magnitude between kp and armature
would stall an isotropic LM). The Jacobian is the full one by default: on an arm the
parameters of one joint move the others (a softer shoulder changes the elbow's gravity
load). ``joint_blocks`` steps on the joint-block Jacobian instead (K candidates per
difference, not J K); on the 24-parameter SO-101 problem it reached the full LM's SSR or
lower on 5 of 6 seeds in a third of the rollouts (``docs/mujoco_core.md``), and the final
Jacobian, for the intervals, stays full.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from simgap.fit.intervals import intervals, pinv_solve, t_quantile
from simgap.fit.jacobian import BlockDifferences, block_jacobian
from simgap.fit.lm import LMOptions, lm_batch
from simgap.fit.loss import SumOfSquares

EvalFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(z, shape (M, n); delays [s], shape (M,)) -> residuals, shape (M, J, N)."""

LINE_STEPS = (1.5, 1.0, 0.5, 0.2)
"""Fractions of each LM step tried together (one batched evaluation): the replay is only
piecewise smooth (a force-limited actuator drops its implicit damping when it saturates),
so the full step of the local model is often too long."""

CHI2_95 = float(stats.chi2.ppf(0.95, 1))
"""The profile-likelihood threshold of a 95 % interval on one parameter (3.84)."""


@dataclass(frozen=True)
class GridFit:
    """The dynamics fitted at every delay of a grid.

    Attributes:
        delays: the grid [s], shape (G,).
        z: fitted log-multipliers, shape (G, J*K) (joint-major: joint j, kind k at j*K+k).
        ssr: per-joint sum of squared residuals [rad^2], shape (G, J).
        jac: the Jacobian at the fit, shape (G, J*N, n) [rad per unit z], rows joint-major.
        resid: residuals at the fit, shape (G, J, N) [rad].
        iterations: LM iterations run.
        n_evals: candidate evaluations (rollouts per log).
    """

    delays: np.ndarray
    z: np.ndarray
    ssr: np.ndarray
    jac: np.ndarray
    resid: np.ndarray
    iterations: int
    n_evals: int


def grid_fit(
    evaluate: EvalFn,
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
) -> GridFit:
    """Levenberg-Marquardt at every grid delay at once: ``lm_batch`` with the sum of
    squares, ``BlockDifferences`` and the line search ``LINE_STEPS`` (see the module
    docstring).

    Args:
        evaluate: residuals (M, J, N) of M candidates in one batched call.
        delays: grid [s], shape (G,).
        z0: start, shape (n,) or (G, n).
        lo, hi: bounds of z, shape (n,).
        J: joints in the residual; K: parameter kinds per fitted joint (n = J_fit * K).
        iters: most iterations.
        h: central-difference half-step in z (10 % of the value: wide enough to average
            over the small jumps of a saturating actuator).
        tol: relative SSR decrease below which a grid point counts as converged.
        central: central differences (2n candidates per grid point and iteration) at
            every step; otherwise forward ones (n) until a step on a forward Jacobian is
            rejected (its slope may have misled at a kink): that point is differenced
            again centrally at the same z, and every point centrally from then on. The
            final Jacobian, for the intervals, is always central.
        joint_blocks: the LM's steps use the joint-block Jacobian (``block_jacobian``: K
            candidates per difference instead of J K); the final Jacobian, for the
            intervals, is always the full central one.
        final_jacobian: difference that final Jacobian (False: a caller that reads only
            the SSRs, e.g. a comparison of clocks, gets ``jac`` of shape (G, 0, n) and
            saves 2 n candidates per grid point).

    A rejected step on a central Jacobian keeps it (the point did not move) and retries
    with a larger damping, so a rejection costs one batched trial evaluation, not a new
    Jacobian (the same numbers as differencing it again, for fewer rollouts).
    """
    delays = np.asarray(delays, dtype=float)
    G = delays.size
    n = np.size(lo)
    blocks = J if joint_blocks and n == J * K else 0
    run = lm_batch(
        evaluate,
        np.broadcast_to(np.asarray(z0, dtype=float), (G, n)),
        delays,
        lo,
        hi,
        LMOptions(
            loss=SumOfSquares(),
            jacobian=BlockDifferences(h, central=central, blocks=blocks),
            fractions=LINE_STEPS,
            iters=iters,
            tol=tol,
        ),
    )
    r = run.resid.reshape(G, -1)
    if final_jacobian:

        def flat(x: np.ndarray, d: np.ndarray) -> np.ndarray:
            return evaluate(x, d).reshape(x.shape[0], -1)

        jac, ne = block_jacobian(flat, run.x, r, delays, h, lo, hi)
    else:
        jac, ne = np.zeros((G, 0, n)), 0
    return GridFit(
        delays=delays,
        z=run.x,
        ssr=np.sum(run.resid**2, axis=-1),
        jac=jac,
        resid=run.resid,
        iterations=run.iterations,
        n_evals=run.n_evals + ne,
    )


def lag1_inflation(r: np.ndarray) -> float:
    """Variance inflation (1 + rho) / (1 - rho) of residuals with lag-1 autocorrelation
    rho (clipped to [0, 0.98]); 1 for white residuals."""
    r = np.asarray(r, dtype=float) - np.mean(r)
    den = float(r @ r)
    if den <= 0 or r.size < 3:
        return 1.0
    rho = float(np.clip((r[1:] @ r[:-1]) / den, 0.0, 0.98))
    return (1.0 + rho) / (1.0 - rho)


@dataclass(frozen=True)
class DelayProfile:
    """One joint's delay profile.

    Attributes:
        delays: grid [s], shape (G,).
        ssr: the profile [rad^2], shape (G,).
        best_s: the minimum, refined between grid points by a parabola [s].
        interval_s: 95 % profile-likelihood interval [lo, hi] [s]; an end at the grid's
            edge means the data do not bound it there (``open_ends`` says which).
        threshold: the SSR rise that bounds the interval [rad^2].
        s2: residual variance at the minimum [rad^2].
        inflation: the autocorrelation inflation used.
        open_ends: ``"lo"``/``"hi"`` for an end that reached the grid's edge.
    """

    delays: np.ndarray
    ssr: np.ndarray
    best_s: float
    interval_s: tuple[float, float]
    threshold: float
    s2: float
    inflation: float
    open_ends: tuple[str, ...]


def delay_profile(
    delays: np.ndarray,
    ssr: np.ndarray,
    dof: int,
    inflation: float = 1.0,
    s2_min: float = 0.0,
    min_rise: float = 0.0,
) -> DelayProfile:
    """Best delay and 95 % profile-likelihood interval of one joint's profile; the residual
    variance is at least ``s2_min`` (the replay's own floor) [rad^2].

    ``min_rise`` [rad^2] is the least SSR rise that bounds the interval: with
    ``N * floor^2`` (N samples) the interval also holds every delay whose replay differs
    from the best one's by less than the model floor RMS (at the minimum the profile rises
    by the squared norm of the replay's change), the same floor-as-a-bias term the
    parameters' half-widths carry; the chi-square rise alone shrinks as 1/N and claims to
    tell apart delays whose replays the floor cannot."""
    d = np.asarray(delays, dtype=float)
    y = np.asarray(ssr, dtype=float)
    k = int(np.argmin(y))
    best = float(d[k])
    ymin = float(y[k])
    if 0 < k < d.size - 1:  # parabola through the minimum and its neighbours
        x3, y3 = d[k - 1 : k + 2], y[k - 1 : k + 2]
        a, b, c = np.polyfit(x3, y3, 2)
        if a > 0:
            best = float(np.clip(-b / (2 * a), x3[0], x3[2]))
            ymin = float(min(ymin, c - b * b / (4 * a)))
    s2 = max(max(ymin, 0.0) / max(1, dof), s2_min)
    thr = max(CHI2_95 * s2 * inflation, float(min_rise))
    level = ymin + thr
    open_ends: list[str] = []

    def crossing(side: int) -> float:
        i = k
        while 0 <= i + side < d.size and y[i + side] <= level:
            i += side
        if not 0 <= i + side < d.size:
            open_ends.append("lo" if side < 0 else "hi")
            return float(d[i])
        j = i + side  # y[i] <= level < y[j] (or the neighbours of the minimum)
        if i == k and 0 < k < d.size - 1:
            # the crossing lies between the refined minimum and the next grid point: the
            # parabola through the minimum's neighbours gives it
            a, b, c = np.polyfit(d[k - 1 : k + 2], y[k - 1 : k + 2], 2)
            if a > 0:
                disc = b * b - 4 * a * (c - level)
                if disc >= 0:
                    root = (-b + side * np.sqrt(disc)) / (2 * a)
                    lo_, hi_ = sorted((best, float(d[j])))
                    if lo_ - 1e-12 <= root <= hi_ + 1e-12:
                        return float(root)
        yi = min(float(y[i]), level)
        f = (level - yi) / max(float(y[j]) - yi, 1e-300)
        return float(d[i] + f * (d[j] - d[i]))

    lo = crossing(-1)
    hi = crossing(+1)
    lo, hi = min(lo, best), max(hi, best)
    return DelayProfile(
        delays=d,
        ssr=y,
        best_s=best,
        interval_s=(lo, hi),
        threshold=thr,
        s2=s2,
        inflation=inflation,
        open_ends=tuple(open_ends),
    )


@dataclass(frozen=True)
class LinearFit:
    """The linearised fit at one grid point, shared by every joint's intervals: the
    eigen-decomposition of J^T J, the full-data Gauss-Newton step and the delete-one-block
    refits (computed once per grid point, not once per joint).

    Attributes:
        w, v: eigenvalues (n,) and eigenvectors (n, n) of J^T J.
        ssr: r . r [rad^2]; rows: R, the residual count.
        step: the full-data Gauss-Newton step in z, shape (n,).
        blocks: the delete-one-block estimates in z, shape (B, n) (B = 0 without blocks).
    """

    w: np.ndarray
    v: np.ndarray
    ssr: float
    rows: int
    step: np.ndarray
    blocks: np.ndarray


def linear_fit(
    jac: np.ndarray, resid: np.ndarray, blocks: list[np.ndarray] | None = None
) -> LinearFit:
    """``LinearFit`` of the Jacobian ``jac`` (J*N, n), rows joint-major, and the residuals
    ``resid`` (J, N) [rad]; ``blocks``: sample indices (into N) of each time block."""
    resid = np.asarray(resid, dtype=float)
    if resid.ndim == 1:
        resid = resid[None]
    J, N = resid.shape
    r = resid.reshape(-1)
    A = jac.T @ jac
    g = jac.T @ r
    w, v = np.linalg.eigh(A)
    step = -pinv_solve(A, g)
    ests = []
    for idx in blocks or []:
        rows = (np.arange(J)[:, None] * N + idx[None, :]).reshape(-1)
        Jb = jac[rows]
        ests.append(-pinv_solve(A - Jb.T @ Jb, g - Jb.T @ r[rows]))
    est = np.array(ests) if ests else np.zeros((0, jac.shape[1]))
    return LinearFit(w=w, v=v, ssr=float(r @ r), rows=int(r.size), step=step, blocks=est)


def block_intervals(
    jac: np.ndarray,
    r: np.ndarray,
    inflation: float = 1.0,
    cols: np.ndarray | None = None,
    s2_min: float = 0.0,
    lin: LinearFit | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Newton 95 % half-widths and correlations from the full Jacobian (the one rule,
    ``simgap.fit.intervals``: Student-t on the residual's degrees of freedom).

    Args:
        jac: shape (R, n); r: residuals, shape (R,); cols: the parameters reported
            (default all); s2_min: the least residual variance [rad^2] (the replay's own
            floor: what lies below it the replay cannot tell apart); lin: ``linear_fit``
            of the same ``jac`` and ``r``, when already computed.

    Returns:
        (half-widths in z of ``cols``, inf along null directions; their correlation).
    """
    lin = lin if lin is not None else linear_fit(jac, r)
    iv = intervals(lin.w, lin.v, lin.ssr, lin.rows, s2_min=s2_min, inflation=inflation)
    c = np.arange(lin.w.size) if cols is None else np.asarray(cols)
    return iv.half_width[c], iv.corr[np.ix_(c, c)]


def time_blocks(lengths: list[int], block: int) -> list[np.ndarray]:
    """Sample indices of long time blocks: each episode (``lengths`` samples, concatenated)
    cut into pieces of at least ``block`` samples (at least one piece per episode)."""
    out: list[np.ndarray] = []
    start = 0
    for n in lengths:
        pieces = max(1, n // max(1, block))
        edges = np.linspace(start, start + n, pieces + 1).round().astype(int)
        out.extend(np.arange(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True))
        start += n
    return out


def jackknife_halfwidths(
    jac: np.ndarray,
    resid: np.ndarray,
    blocks: list[np.ndarray],
    cols: np.ndarray,
    lin: LinearFit | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Delete-one-block jackknife of the linearised refit, and the fit's remaining step.

    Args:
        jac: shape (J*N, n), rows joint-major; resid: shape (J, N) [rad];
        blocks: sample indices (into N) of each time block; cols: parameters reported;
        lin: ``linear_fit(jac, resid, blocks)``, when already computed.

    Returns:
        (95 % half-widths in z, t quantile with B - 1 dof times the jackknife standard
        error, where block b's estimate is the Gauss-Newton refit without block b's
        samples of every joint; |the full-data Gauss-Newton step| (what the LM left)).
        A block jackknife carries the residuals' own correlation within a block and the
        episode-to-episode differences of the estimate, which a white-noise or lag-1
        model of the residuals does not.
    """
    lin = lin if lin is not None else linear_fit(jac, resid, blocks)
    B = lin.blocks.shape[0]
    if B < 2:
        return np.full(cols.size, np.inf), np.abs(lin.step[cols])
    E = lin.blocks[:, cols]
    var = (B - 1) / B * np.sum((E - E.mean(axis=0)) ** 2, axis=0)
    hw = t_quantile(B - 1) * np.sqrt(var)
    return hw, np.abs(lin.step[cols])


def jackknife_delay(delays: np.ndarray, ssr_blocks: np.ndarray, dof: int) -> float:
    """95 % half-width [s] of the best delay by delete-one-block jackknife of the profile.

    Args:
        delays: grid [s], shape (G,); ssr_blocks: each block's share of the profile,
            shape (B, G) [rad^2]; dof: residual degrees of freedom.
    """
    B = ssr_blocks.shape[0]
    if B < 2:
        return float("inf")
    total = ssr_blocks.sum(axis=0)
    best = np.array([delay_profile(delays, total - ssr_blocks[b], dof).best_s for b in range(B)])
    var = (B - 1) / B * float(np.sum((best - best.mean()) ** 2))
    return t_quantile(B - 1) * float(np.sqrt(var))
