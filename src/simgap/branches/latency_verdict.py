"""The latency branch's verdict on measured stage times (``judge``): implicated when the
total's p95 passes the period, eliminated when its whole interval sits below it with enough
ticks and episodes (``MIN_TICKS``, ``RECIPE_EPISODES``), else how many more to time
(``more_needed``); the slowest stages named (``slowest_stages``, ``slowest_text``)."""

from __future__ import annotations

import math
from typing import Any

from simgap.branches.latency_budget import Budget
from simgap.finding import Verdict

RECIPE_EPISODES = 20
"""The default recipe: time twenty episodes."""
MIN_TICKS = 100
"""Fewer ticks than this support no verdict (a p95 needs >= 5 ticks above it)."""


def more_needed(n: int, half_width: float, margin: float) -> int:
    """Extra ticks for the p95 interval's half-width to shrink below the margin (1/sqrt n)."""
    if margin <= 0 or not math.isfinite(half_width):
        return 9 * n
    need = math.ceil(n * (half_width / margin) ** 2)
    return int(min(max(need - n, 1), 99 * n))


def slowest_stages(stages: dict[str, dict[str, Any]]) -> list[str]:
    """The stage with the highest p95 and every stage tied with it: whose p95 interval
    reaches the slowest one's (``p95_ci_s``), slowest first. Two stages a millisecond
    apart inside their intervals are not told apart, so the advice names both."""

    def p95(k: str) -> float:
        v = stages[k]["p95_s"]
        return float(v) if v is not None and math.isfinite(v) else -1.0

    order = sorted(stages, key=p95, reverse=True)
    if not order or p95(order[0]) < 0:
        return order[:1]
    lo_worst = (stages[order[0]].get("p95_ci_s") or [p95(order[0])] * 2)[0]
    return [
        k
        for k in order
        if p95(k) >= 0
        and (k == order[0] or (stages[k].get("p95_ci_s") or [0.0, p95(k)])[1] >= lo_worst)
    ]


def slowest_text(stages: dict[str, dict[str, Any]], slowest: list[str]) -> str:
    def one(k: str) -> str:
        st = stages[k]
        ci = st.get("p95_ci_s")
        iv = (
            f" [{ci[0] * 1e3:.1f}, {ci[1] * 1e3:.1f}]"
            if ci and all(v is not None and math.isfinite(v) for v in ci)
            else ""
        )
        return f"'{k}' (p95 {st['p95_s'] * 1e3:.1f} ms{iv})"

    if len(slowest) == 1:
        return f"the slowest stage is {one(slowest[0])}"

    def p99(k: str) -> float:
        v = stages[k].get("p99_s")
        return float(v) if v is not None and math.isfinite(v) else -1.0

    tail = max(slowest, key=p99)
    text = "the slowest stages, tied within their p95 intervals, are " + ", ".join(
        one(k) for k in slowest
    )
    return text + (
        f"; '{tail}' has the longest tail (p99 {p99(tail) * 1e3:.1f} ms)" if p99(tail) >= 0 else ""
    )


def judge(
    fig: dict[str, Any],
    p95_ci: tuple[float, float],
    n: int,
    episodes: int,
    source: str,
    budget: Budget,
) -> tuple[Verdict, str, str]:
    dt = budget.budget_s
    unit = {"timing log": "episode", "policy-server log": "session"}.get(source, "log file")
    p95, margin = fig["total_p95_s"], fig["margin_s"]
    lo, hi = p95_ci
    stages = fig["stages"]
    slowest = slowest_stages(stages)
    worst = " or ".join(f"'{k}'" for k in slowest) if slowest else "'total'"
    ad = fig["added_delay"]
    per_ep = max(1, n // max(1, episodes))
    what = "inference" if budget.mode == "async" else "tick"
    bword = "budget" if budget.mode == "async" else "period"
    head = (
        f"Total p95 {p95 * 1e3:.1f} ms [{lo * 1e3:.1f}, {hi * 1e3:.1f}] against a "
        f"{budget.label} over {n} {what}{'' if n == 1 else 's'} ({episodes} "
        f"{unit}{'' if episodes == 1 else 's'}); "
        f"{fig['overrun_fraction']:.1%} of {what}s overrun."
    )
    if n < MIN_TICKS:
        more = MIN_TICKS - n
        return (
            Verdict.INCONCLUSIVE,
            head + f" No verdict from the timing: {n} ticks, and a "
            f"p95 needs {MIN_TICKS} ({more} more).",
            f"Time at least {more} more ticks (the recipe: {RECIPE_EPISODES} episodes of "
            "the task) and re-run.",
        )
    if lo > dt:
        rate = ad.get("rate_per_s_min"), ad.get("rate_per_s_max")
        spec = (
            f" or train with dt = {dt:.4g} s + Exp(rate), rate drawn per episode in "
            f"[{rate[0]:.4g}, {rate[1]:.4g}] /s"
            if all(r is not None and math.isfinite(r) for r in rate)
            else ""
        )
        return (
            Verdict.IMPLICATED,
            head + f" p95 exceeds the {bword} by {margin * 1e3:.1f} ms "
            f"({fig['margin_fraction']:.0%}); {slowest_text(stages, slowest)}."
            if stages
            else head,
            f"Cut {worst} until the total p95 fits in {dt * 1e3:.1f} ms, lower the fps "
            f"to match the loop{spec}, or serve with real-time chunking."
            if budget.mode == "sync"
            else f"Cut {worst} until the inference p95 fits in the "
            f"{budget.label}, raise chunk_size_threshold (send earlier) or "
            "actions_per_chunk, or serve with real-time chunking.",
        )
    if hi < dt:
        if source == "timing log" and episodes < RECIPE_EPISODES:
            more = RECIPE_EPISODES - episodes
            return (
                Verdict.INCONCLUSIVE,
                head + f" p95 is below the {bword}, but over {episodes} episodes only.",
                f"Time {more} more episodes (about {more * per_ep} ticks; the recipe is "
                f"{RECIPE_EPISODES}) before eliminating latency.",
            )
        return (
            Verdict.ELIMINATED,
            head + f" p95 is {-margin * 1e3:.1f} ms below the {bword}, its whole interval with it.",
            "Latency alone does not explain the gap: move to the contact branch.",
        )
    more = more_needed(n, (hi - lo) / 2.0, abs(margin))
    return (
        Verdict.INCONCLUSIVE,
        head + f" The p95 interval straddles the {bword}.",
        f"Time about {more} more ticks (~{math.ceil(more / per_ep)} episodes of {per_ep} "
        "ticks) and re-run.",
    )
