"""An anytime-valid sequential comparison of two policies' success rates.

Trials are run in rounds, one for A and one for B (interleaved, ideally from the same
initial state). Only *discordant* rounds carry information about which is better: under
the null hypothesis "A and B succeed equally often" (even if that common rate drifts from
round to round, e.g. with lighting or battery) a discordant round goes A's way with
probability exactly 1/2, independently of the past. With u rounds won by A and v by B,

    E = integral theta^u (1 - theta)^v dBeta(theta; a, b) / (1/2)^(u + v)
      = 2^(u + v) B(a + u, b + v) / B(a, b)

is a mixture likelihood ratio (Robbins 1970; the mixture-martingale construction of
Howard, Ramdas, McAuliffe and Sekhon 2021) and a non-negative martingale with mean 1 under
the null. By Ville's inequality P(E_t >= 1/alpha for some t) <= alpha, so stopping the
first time E >= 1/alpha keeps the Type-I error at most alpha at every look, whenever one
looks and however one decides to stop. The decision's direction is the sign of u - v.
Past ``n_max`` rounds without a decision the result is "undecided".

Written from the literature above; it is not STEP (Snyder et al. 2025) and shares no code
with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from simgap.errors import InputError
from simgap.evaluation.stats import check_probability


def log_e_value(
    u: np.ndarray | int, v: np.ndarray | int, prior: tuple[float, float] = (1.0, 1.0)
) -> np.ndarray:
    """log E after u discordant rounds won by A and v won by B (any shape)."""
    a, b = prior
    uu = np.asarray(u, dtype=float)
    vv = np.asarray(v, dtype=float)
    return np.asarray(
        (uu + vv) * math.log(2.0) + special.betaln(a + uu, b + vv) - special.betaln(a, b)
    )


@dataclass(frozen=True)
class SequentialResult:
    """The outcome of the sequential comparison.

    Attributes:
        decision: "a_better", "b_better" or "undecided".
        stopped_at: the round at which it stopped (1-based), or None when undecided.
        rounds: rounds examined.
        a_wins: discordant rounds A won (up to the stop).
        b_wins: discordant rounds B won.
        e_value: the e-value at the stop (or at the last round).
        alpha: the level; the threshold is 1 / alpha.
    """

    decision: str
    stopped_at: int | None
    rounds: int
    a_wins: int
    b_wins: int
    e_value: float
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "decision": self.decision,
            "stopped_at": self.stopped_at,
            "rounds": self.rounds,
            "a_wins": self.a_wins,
            "b_wins": self.b_wins,
            "e_value": self.e_value,
            "alpha": self.alpha,
            "threshold": 1 / self.alpha,
        }


def sequential_test(
    a: Sequence[bool],
    b: Sequence[bool],
    alpha: float = 0.05,
    prior: tuple[float, float] = (1.0, 1.0),
) -> SequentialResult:
    """Run the test over paired rounds (a[i], b[i]) in order and stop at the first crossing.

    Args:
        a: A's outcomes, shape (T,).
        b: B's outcomes in the same rounds, shape (T,).
        alpha: Type-I error bound, in (0, 1).
        prior: Beta mixing prior on P(A wins a discordant round).
    """
    check_probability(alpha, "alpha", open_interval=True)
    if len(a) != len(b):
        raise InputError(
            field="trials",
            expected="as many rounds for A as for B",
            got=f"{len(a)} and {len(b)}",
            fix="run the arms in pairs of rounds",
        )
    xa = np.asarray(a, dtype=bool)
    xb = np.asarray(b, dtype=bool)
    u = np.cumsum(xa & ~xb)
    v = np.cumsum(~xa & xb)
    le = log_e_value(u, v, prior)
    hit = np.flatnonzero(le >= math.log(1 / alpha))
    if hit.size:
        k = int(hit[0])
        return SequentialResult(
            "a_better" if u[k] > v[k] else "b_better",
            k + 1,
            len(xa),
            int(u[k]),
            int(v[k]),
            float(np.exp(le[k])),
            alpha,
        )
    last = len(xa) - 1
    return SequentialResult(
        "undecided",
        None,
        len(xa),
        int(u[last]) if len(xa) else 0,
        int(v[last]) if len(xa) else 0,
        float(np.exp(le[last])) if len(xa) else 1.0,
        alpha,
    )


def simulate(
    p_a: float,
    p_b: float,
    alpha: float = 0.05,
    n_max: int = 200,
    n_sims: int = 2000,
    seed: int = 0,
    prior: tuple[float, float] = (1.0, 1.0),
) -> dict[str, Any]:
    """Monte Carlo operating characteristics at (p_a, p_b), independent arms.

    Returns ``{"p_a", "p_b", "decide_rate", "a_better_rate", "b_better_rate",
    "mean_rounds", "median_rounds", "p90_rounds", "n_max", "n_sims", "seed"}``; rounds
    count trials per arm, n_max for undecided runs.
    """
    check_probability(p_a, "p1")
    check_probability(p_b, "p2")
    check_probability(alpha, "alpha", open_interval=True)
    if n_max < 1 or n_sims < 1:
        raise InputError(field="n_max", expected="positive n_max and n_sims", got=(n_max, n_sims))
    rng = np.random.default_rng(seed)
    thr = math.log(1 / alpha)
    stop = np.full(n_sims, n_max)
    sign = np.zeros(n_sims, dtype=np.int8)
    chunk = max(1, 2_000_000 // n_max)
    for i in range(0, n_sims, chunk):
        m = min(chunk, n_sims - i)
        xa = rng.random((m, n_max)) < p_a
        xb = rng.random((m, n_max)) < p_b
        u = np.cumsum(xa & ~xb, axis=1)
        v = np.cumsum(~xa & xb, axis=1)
        hit = log_e_value(u, v, prior) >= thr
        any_hit = hit.any(axis=1)
        first = np.argmax(hit, axis=1)
        rows = np.arange(m)
        stop[i : i + m] = np.where(any_hit, first + 1, n_max)
        d = np.sign(u[rows, first] - v[rows, first])
        sign[i : i + m] = np.where(any_hit, d, 0)
    return {
        "p_a": p_a,
        "p_b": p_b,
        "decide_rate": float(np.mean(sign != 0)),
        "a_better_rate": float(np.mean(sign > 0)),
        "b_better_rate": float(np.mean(sign < 0)),
        "mean_rounds": float(stop.mean()),
        "median_rounds": float(np.median(stop)),
        "p90_rounds": float(np.quantile(stop, 0.9)),
        "n_max": n_max,
        "n_sims": n_sims,
        "seed": seed,
    }


def plan_sequential(
    p1: float, p2: float, alpha: float = 0.05, n_max: int = 200, n_sims: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """The ``sequential`` block of ``simgap trials``: behaviour at (p1, p2) and at the null."""
    return {
        "method": "mixture likelihood-ratio e-process on discordant rounds "
        "(Beta(1, 1) mixture; Ville's inequality); stop when E >= 1/alpha",
        "alpha": alpha,
        "n_max": n_max,
        "alternative": simulate(p1, p2, alpha, n_max, n_sims, seed),
        "null": simulate(p1, p1, alpha, n_max, n_sims, seed + 1),
    }
