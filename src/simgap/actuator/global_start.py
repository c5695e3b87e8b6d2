"""The joint identification's second start (``global_start``): at every coarse delay, draws
over the parameter box whose best replay starts the local fit where it beats the nominal."""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.actuator.joint_problem import JointProblem


def global_start(
    problem: JointProblem,
    delays: np.ndarray,
    draws: int,
    seed: int = 0,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Per delay, the start of the local fit (module docstring, 5), shape (G, n), and what it
    took: per joint the share of delays whose start came from a draw, and the arm's SSR
    of the model's own values and of the starts kept [rad^2] summed over the delays."""
    from scipy.stats import qmc

    G, n, J, K = delays.size, problem.z0.size, problem.J, problem.K
    z0 = np.repeat(problem.z0[None], G, axis=0)
    if draws <= 0:
        return z0, {"draws": 0}
    u = qmc.LatinHypercube(d=n, seed=seed).random(draws)
    cand = np.concatenate([problem.z0[None], problem.lo + u * (problem.hi - problem.lo)])
    M = cand.shape[0]
    r = problem.residuals(np.tile(cand, (G, 1)), np.repeat(delays, M))  # (G M, J, N)
    ssr = np.sum(r**2, axis=2).reshape(G, M, J)
    pick = np.argmin(ssr, axis=1)  # (G, J)
    blocks = cand.reshape(M, J, K)
    mixed = np.stack([blocks[pick[g], np.arange(J)].reshape(-1) for g in range(G)])
    changed = np.any(pick > 0, axis=1)
    start = z0.copy()
    ssr_mixed = ssr[:, 0].sum(axis=1).copy()
    if changed.any():
        rm = problem.residuals(mixed[changed], delays[changed])
        got = np.sum(rm**2, axis=(1, 2))
        better = got < ssr_mixed[changed]
        idx = np.flatnonzero(changed)[better]
        start[idx] = mixed[idx]
        ssr_mixed[idx] = got[better]
    from_draw = (pick > 0) & np.any(start != z0, axis=1)[:, None]
    info = {
        "draws": draws,
        "seed": seed,
        "joints_from_draw": {
            name: float(np.mean(from_draw[:, j])) for j, name in enumerate(problem.joints)
        },
        "ssr_model_rad2": float(ssr[:, 0].sum()),
        "ssr_start_rad2": float(ssr_mixed.sum()),
    }
    return start, info
