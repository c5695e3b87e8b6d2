"""Finite-difference Jacobians of a batched residual, and the policies by which the batched
Levenberg-Marquardt (``simgap.fit.lm.lm_batch``) differences them.

A policy says how a point's Jacobian is differenced (``difference``: one batched evaluation
of every point that needs one) and when (``central``: centrally from the start;
``central_after_reject``: a step rejected on a forward Jacobian has that point differenced
again centrally at the same parameters, and every point centrally from then on;
``keep_on_reject``: a point whose step was rejected did not move, so it keeps its Jacobian
and only retries with more damping, one batched trial evaluation instead of a new
Jacobian).

- ``ForwardWithBase``: forward differences by ``h`` with the point's own residual evaluated
  again in the same batch as its n candidates (each difference's two sides come from one
  call of a vectorised simulation), non-finite residuals replaced (``finite_residual``); a
  new Jacobian every iteration (``simgap.fit.lm.lm_fit``).
- ``BlockDifferences``: ``block_jacobian`` against the point's residual: central over
  +-h (one-sided at a bound) or forward, full or joint-block; kept after a rejected step
  (``simgap.fit.profile.grid_fit``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from simgap.fit.loss import finite_residual

FlatFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(parameters, shape (M, n); tag of each row, shape (M,)) -> residuals, shape (M, R)."""


@dataclass(frozen=True)
class Differenced:
    """Jacobians of P points from one batched evaluation.

    Attributes:
        jac: shape (P, R, n) [residual units per parameter unit].
        base: the residuals they were differenced around, shape (P, R): what the step
            solves against.
        evals: candidates evaluated.
    """

    jac: np.ndarray
    base: np.ndarray
    evals: int


class JacobianPolicy(Protocol):
    """How and when ``lm_batch`` differences (see the module docstring)."""

    @property
    def central(self) -> bool: ...

    @property
    def central_after_reject(self) -> bool: ...

    @property
    def keep_on_reject(self) -> bool: ...

    def difference(
        self,
        evaluate: FlatFn,
        x: np.ndarray,
        r: np.ndarray,
        tags: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        central: bool,
    ) -> Differenced:
        """The Jacobians at ``x`` (P, n), whose residuals are ``r`` (P, R), in one call of
        ``evaluate`` (rows tagged ``tags``, shape (P,)), inside the box [lo, hi]; central
        or forward as ``central`` says."""
        ...


@dataclass(frozen=True)
class ForwardWithBase:
    """Forward differences with the base re-evaluated (see the module docstring).

    Attributes:
        h: the difference step, in the units of the parameters (not kept inside the box:
            the residual must accept parameters up to ``h`` past it).
    """

    h: float

    @property
    def central(self) -> bool:
        return False

    @property
    def central_after_reject(self) -> bool:
        return False

    @property
    def keep_on_reject(self) -> bool:
        return False

    def difference(
        self,
        evaluate: FlatFn,
        x: np.ndarray,
        r: np.ndarray,
        tags: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        central: bool,
    ) -> Differenced:
        """Each point and its n forward candidates, point-major, in one call (see
        ``JacobianPolicy``)."""
        del r, lo, hi, central
        P, n = x.shape
        pert = x[:, None, :] + self.h * np.eye(n)[None, :, :]
        rows = np.concatenate([x[:, None, :], pert], axis=1).reshape(-1, n)
        r_all = finite_residual(evaluate(rows, np.repeat(tags, n + 1)).reshape(P, n + 1, -1))
        base = r_all[:, 0]
        jac = (r_all[:, 1:] - base[:, None, :]) / self.h  # (P, n, R)
        return Differenced(jac=jac.transpose(0, 2, 1), base=base, evals=P * (n + 1))


@dataclass(frozen=True)
class BlockDifferences:
    """``block_jacobian`` differences (see the module docstring).

    Attributes:
        h: the difference half-step (central) or step (forward), in parameter units.
        central: difference centrally from the start (else forward).
        blocks: J > 1: the joint-block Jacobian of J joints (``block_jacobian``).
        central_after_reject: see the module docstring.
        keep_on_reject: see the module docstring.
    """

    h: float
    central: bool = True
    blocks: int = 0
    central_after_reject: bool = True
    keep_on_reject: bool = True

    def difference(
        self,
        evaluate: FlatFn,
        x: np.ndarray,
        r: np.ndarray,
        tags: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        central: bool,
    ) -> Differenced:
        """``block_jacobian`` at ``x`` (see ``JacobianPolicy``)."""
        jac, evals = block_jacobian(evaluate, x, r, tags, self.h, lo, hi, central, self.blocks)
        return Differenced(jac=jac, base=r, evals=evals)


def block_jacobian(
    evaluate: FlatFn,
    z: np.ndarray,
    r: np.ndarray,
    delays: np.ndarray,
    h: float,
    lo: np.ndarray,
    hi: np.ndarray,
    central: bool = True,
    blocks: int = 0,
) -> tuple[np.ndarray, int]:
    """Finite-difference Jacobian (G, R, n) in one batched evaluation: central over +-h
    (one-sided at a bound), or forward by h. Wide differences average the small jumps of a
    piecewise-smooth replay instead of taking the slope of one side of a kink.

    ``blocks`` = J > 1 (the residual's rows joint-major, J blocks; columns j*K + k) gives
    the joint-block Jacobian from K candidates (2K central) instead of n = J K: every
    joint's kind k moves in the same candidate (Curtis-Powell-Reid column grouping on the
    block-diagonal pattern) and column j*K + k is read on joint j's rows only, the others
    left at zero. A joint's own column then carries the pull of the other joints' kind k
    on it as well, which the LM's line search on the exact residual absorbs.
    """
    G, n = z.shape
    K = n // blocks if blocks > 1 else n
    group = np.arange(n) % K  # column -> its candidate
    sel = group[None, :] == np.arange(K)[:, None]  # (K, n)
    up = np.minimum(z + h, hi[None]) if central else np.where(z + h > hi[None], z - h, z + h)
    dn = np.maximum(z - h, lo[None]) if central else z
    rows_up = np.where(sel[None], up[:, None, :], z[:, None, :])  # (G, K, n)
    if central:
        rows_dn = np.where(sel[None], dn[:, None, :], z[:, None, :])
        rows = np.concatenate([rows_up, rows_dn], axis=1)  # (G, 2K, n)
        rp = evaluate(rows.reshape(G * 2 * K, n), np.repeat(delays, 2 * K)).reshape(G, 2 * K, -1)
        diff, ne = rp[:, :K] - rp[:, K:], G * 2 * K
        width = np.maximum(up - dn, 1e-12)  # (G, n)
    else:
        rp = evaluate(rows_up.reshape(G * K, n), np.repeat(delays, K)).reshape(G, K, -1)
        diff, ne = rp - r[:, None, :], G * K
        width = up - z  # signed: away from hi
    jac = diff[:, group, :].transpose(0, 2, 1) / width[:, None, :]  # (G, R, n)
    if blocks > 1:
        rows_joint = np.repeat(np.arange(blocks), jac.shape[1] // blocks)
        jac = jac * (rows_joint[:, None] == (np.arange(n) // K)[None, :])
    return jac, ne
