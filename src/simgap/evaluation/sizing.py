"""How many trials per arm: ``simgap trials``.

All sizes are per arm, for a two-sided comparison of success rates p1 and p2 with equal
arms at significance ``alpha`` and power ``power``:

- ``fleiss``: the normal approximation (Fleiss, Levin & Paik 2003, eq. 4.14)
  n = [z_{a/2} sqrt(2 pbar qbar) + z_b sqrt(p1 q1 + p2 q2)]^2 / d^2, pbar = (p1 + p2) / 2;
- ``fleiss_cc``: with continuity correction n' = n/4 [1 + sqrt(1 + 4 / (n |d|))]^2;
- ``arcsine``: n = (z_{a/2} + z_b)^2 / (2 (asin sqrt p1 - asin sqrt p2)^2);
- ``fisher_exact`` and ``barnard_exact``: exact power from the binomial outcome grid
  (``simgap.evaluation.exact_power``). Exact power is not monotone in n (it saw-tooths),
  so the size is the smallest n at which the power reaches the target **and stays there
  for every n up to n_max**; the first n that reaches it is reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scipy import optimize, stats

from simgap.errors import InputError
from simgap.evaluation import exact_power
from simgap.evaluation.stats import check_probability

EXACT_TESTS = ("fisher", "barnard")
EXACT_MAX_N = 2000
"""The largest n per arm whose exact power is computed."""
EXACT_DEFAULT_LIMIT = 1000
"""``plan`` skips the exact sizes when the default n_max would exceed this."""


def default_n_max(p1: float, p2: float, alpha: float, power: float) -> int:
    """How far up the exact power must stay above target: 1.25 x Fleiss-cc + 10, >= 20."""
    return max(math.ceil(1.25 * fleiss_n(p1, p2, alpha, power, cc=True)) + 10, 20)


def _check(p1: float, p2: float, alpha: float, power: float) -> tuple[float, float]:
    p1 = check_probability(p1, "p1")
    p2 = check_probability(p2, "p2")
    check_probability(alpha, "alpha", open_interval=True)
    check_probability(power, "power", open_interval=True)
    if p1 == p2:
        raise InputError(
            field="p2",
            expected="a success rate different from p1",
            got=p2,
            fix="no number of trials separates two equal rates",
        )
    return p1, p2


def _za(alpha: float) -> float:
    return float(stats.norm.isf(alpha / 2))


def fleiss_n_float(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8, cc: bool = False
) -> float:
    """The Fleiss per-arm size before rounding up."""
    p1, p2 = _check(p1, p2, alpha, power)
    d = abs(p1 - p2)
    pbar = (p1 + p2) / 2
    zb = float(stats.norm.ppf(power))
    n = (
        _za(alpha) * math.sqrt(2 * pbar * (1 - pbar))
        + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    ) ** 2 / d**2
    if cc:
        n = n / 4 * (1 + math.sqrt(1 + 4 / (n * d))) ** 2
    return n


def fleiss_n(
    p1: float, p2: float, alpha: float = 0.05, power: float = 0.8, cc: bool = False
) -> int:
    """Per-arm size by Fleiss' normal approximation, with or without continuity correction."""
    return math.ceil(fleiss_n_float(p1, p2, alpha, power, cc) - 1e-9)


def arcsine_n(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Per-arm size by the arcsine (variance-stabilising) approximation."""
    p1, p2 = _check(p1, p2, alpha, power)
    h = math.asin(math.sqrt(p1)) - math.asin(math.sqrt(p2))
    n = (_za(alpha) + float(stats.norm.ppf(power))) ** 2 / (2 * h * h)
    return math.ceil(n - 1e-9)


@dataclass(frozen=True)
class ExactSize:
    """An exact per-arm size.

    Attributes:
        test: "fisher" or "barnard".
        n: smallest n with power >= target for every n in [n, n_max] (None if none).
        first_reached: smallest n scanned whose power reaches the target (None if none).
        power_at_n: exact power at ``n``.
        n_max: the largest n checked.
    """

    test: str
    n: int | None
    first_reached: int | None
    power_at_n: float | None
    n_max: int


def exact_n(
    test: str,
    p1: float,
    p2: float,
    alpha: float = 0.05,
    power: float = 0.8,
    n_max: int | None = None,
) -> ExactSize:
    """Smallest per-arm n at which the exact power reaches ``power`` and stays there to n_max.

    Scans n downward from ``n_max`` (default: ``default_n_max``) until the power first
    falls below the target, then a further tenth (at least 10) of the way down to report
    the first n that reaches it.

    Raises:
        InputError: bad rates, alpha or power, or n_max outside 1..EXACT_MAX_N.
    """
    p1, p2 = _check(p1, p2, alpha, power)
    if test not in EXACT_TESTS:
        raise InputError(field="test", expected=f"one of {', '.join(EXACT_TESTS)}", got=test)
    if n_max is None:
        n_max = default_n_max(p1, p2, alpha, power)
    if not 1 <= n_max <= EXACT_MAX_N:
        raise InputError(
            field="n_max",
            expected=f"a number of trials in 1..{EXACT_MAX_N} "
            "(exact power enumerates an (n + 1) x (n + 1) grid)",
            got=n_max,
            fix="use the normal approximations for larger sizes",
        )
    n: int | None = None
    pw_n: float | None = None
    m = n_max
    while m >= 1:
        pw = exact_power.power(test, m, p1, p2, alpha)
        if pw < power:
            break
        n, pw_n = m, pw
        m -= 1
    first = n
    stop = max(1, m - max(10, m // 10))
    for k in range(m - 1, stop - 1, -1):
        if exact_power.power(test, k, p1, p2, alpha) >= power:
            first = k
    return ExactSize(test=test, n=n, first_reached=first, power_at_n=pw_n, n_max=n_max)


def fleiss_power(n: int, p1: float, p2: float, alpha: float = 0.05) -> float:
    """Power of the two-sided normal-approximation test (Fleiss, no cc) with n per arm."""
    d = abs(p1 - p2)
    pbar = (p1 + p2) / 2
    se1 = math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    if se1 == 0:
        return 1.0 if d > 0 else 0.0
    zb = (d * math.sqrt(n) - _za(alpha) * math.sqrt(2 * pbar * (1 - pbar))) / se1
    return float(stats.norm.cdf(zb))


def min_detectable(
    n: int, p1: float, alpha: float = 0.05, power: float = 0.8, test: str = "normal"
) -> dict[str, float | None]:
    """The smallest p2 - p1 (upward) and p1 - p2 (downward) detectable with n per arm.

    ``test`` is "normal" (Fleiss without cc) or an exact test ("fisher", "barnard").
    A direction is None when even p2 = 1 (or 0) does not reach the power.
    """
    check_probability(p1, "p1")
    check_probability(alpha, "alpha", open_interval=True)
    check_probability(power, "power", open_interval=True)
    if n < 1:
        raise InputError(field="n", expected="a positive number of trials per arm", got=n)

    def pw(p2: float) -> float:
        if test == "normal":
            return fleiss_power(n, p1, p2, alpha)
        return exact_power.power(test, n, p1, p2, alpha)

    out: dict[str, float | None] = {}
    for name, edge in (("up", 1.0), ("down", 0.0)):
        if abs(edge - p1) < 1e-12 or pw(edge) < power:
            out[name] = None
            continue
        root = optimize.brentq(lambda p2: pw(p2) - power, p1 + (edge - p1) * 1e-9, edge, xtol=1e-10)
        out[name] = abs(root - p1)
    return out


def half_width(n: int, p: float, conf: float = 0.95) -> dict[str, float]:
    """Interval half-widths with n trials at rate p: Wald, Wilson (at s = n p) and difference.

    ``wald`` = z sqrt(p q / n); ``wilson`` = the Wilson half-width at the same rate;
    ``difference`` = z sqrt(2 p q / n), the Wald half-width on p1 - p2 for two arms at p.
    """
    check_probability(p, "p1")
    check_probability(conf, "conf", open_interval=True)
    if n < 1:
        raise InputError(field="n", expected="a positive number of trials per arm", got=n)
    z = float(stats.norm.isf((1 - conf) / 2))
    wilson = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return {
        "wald": z * math.sqrt(p * (1 - p) / n),
        "wilson": wilson,
        "difference": z * math.sqrt(2 * p * (1 - p) / n),
    }


def plan(
    p1: float,
    p2: float,
    alpha: float = 0.05,
    power: float = 0.8,
    n: int | None = None,
    n_max: int | None = None,
) -> dict[str, Any]:
    """Everything ``simgap trials`` reports, as the JSON dict.

    Keys: ``n_per_arm`` {fleiss, fleiss_cc, arcsine, fisher_exact, barnard_exact},
    ``exact`` (first n reaching the power, n_max, power at n), ``inputs``, and when ``n``
    is given ``for_n`` {min_detectable (normal and Barnard), half_width, power}.
    """
    p1, p2 = _check(p1, p2, alpha, power)
    horizon = default_n_max(p1, p2, alpha, power) if n_max is None else n_max
    skipped = n_max is None and horizon > EXACT_DEFAULT_LIMIT
    if skipped:
        fisher = ExactSize("fisher", None, None, None, horizon)
        barnard = ExactSize("barnard", None, None, None, horizon)
    else:
        fisher = exact_n("fisher", p1, p2, alpha, power, horizon)
        barnard = exact_n("barnard", p1, p2, alpha, power, horizon)
    out: dict[str, Any] = {
        "inputs": {"p1": p1, "p2": p2, "alpha": alpha, "power": power, "sides": 2},
        "n_per_arm": {
            "fleiss": fleiss_n(p1, p2, alpha, power),
            "fleiss_cc": fleiss_n(p1, p2, alpha, power, cc=True),
            "arcsine": arcsine_n(p1, p2, alpha, power),
            "fisher_exact": fisher.n,
            "barnard_exact": barnard.n,
        },
        "exact": {
            e.test: {
                "n": e.n,
                "first_reached": e.first_reached,
                "power_at_n": e.power_at_n,
                "n_max": e.n_max,
            }
            for e in (fisher, barnard)
        },
        "definition": "exact sizes: the smallest n per arm whose exact power reaches the "
        "target and stays there for every n up to n_max",
    }
    if skipped:
        out["exact"]["skipped"] = (
            f"the exact search would need n_max = {horizon} > "
            f"{EXACT_DEFAULT_LIMIT}; the normal approximations are "
            "accurate at these sizes (pass --n-max to force it)"
        )
    if n is not None:
        if n < 1:
            raise InputError(field="n", expected="a positive number of trials per arm", got=n)
        exact_ok = n <= EXACT_MAX_N
        out["for_n"] = {
            "n": n,
            "min_detectable": {
                "normal": min_detectable(n, p1, alpha, power, "normal"),
                "barnard_exact": min_detectable(n, p1, alpha, power, "barnard")
                if exact_ok
                else None,
            },
            "half_width": half_width(n, p1, 1 - alpha),
            "power": {
                "fleiss": fleiss_power(n, p1, p2, alpha),
                "fisher_exact": exact_power.power("fisher", n, p1, p2, alpha) if exact_ok else None,
                "barnard_exact": exact_power.power("barnard", n, p1, p2, alpha)
                if exact_ok
                else None,
            },
        }
    return out
