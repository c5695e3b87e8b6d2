"""Side by side: where the simulated and the real evaluation of one protocol break.

For each phase, the number of episodes that broke there out of all episodes with a known
outcome, in simulation and on the real rig, and Fisher's exact test of the 2x2 table
(broke here / did not) x (sim / real). A phase where real breaks significantly more often
than simulation is where the real world departs from the simulated one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scipy.stats import fisher_exact

from simgap.episodes.signatures import EpisodeResult
from simgap.values.episode import PHASES


@dataclass(frozen=True)
class PhaseCounts:
    """Outcomes of one evaluation.

    Attributes:
        n: episodes with a known outcome.
        successes: how many succeeded.
        unknown: episodes whose outcome is unknown.
        by_phase: phase -> failures that broke there (every phase present).
        by_signature: signature -> count among failures.
    """

    n: int
    successes: int
    unknown: int
    by_phase: dict[str, int]
    by_signature: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "n": self.n,
            "successes": self.successes,
            "failures": self.n - self.successes,
            "unknown": self.unknown,
            "by_phase": dict(self.by_phase),
            "by_signature": dict(self.by_signature),
        }


def count_phases(results: Sequence[EpisodeResult]) -> PhaseCounts:
    """Count outcomes and failure phases of one evaluation."""
    known = [r for r in results if r.success is not None]
    by_phase = {ph: 0 for ph in PHASES}
    by_sig: dict[str, int] = {}
    for r in known:
        if r.success is False and r.failure_phase is not None:
            by_phase[r.failure_phase] += 1
            key = r.signature or "unclassified"
            by_sig[key] = by_sig.get(key, 0) + 1
    return PhaseCounts(
        n=len(known),
        successes=sum(1 for r in known if r.success),
        unknown=len(results) - len(known),
        by_phase=by_phase,
        by_signature=by_sig,
    )


@dataclass(frozen=True)
class PhaseComparison:
    """Sim against real, phase by phase.

    Attributes:
        sim: the simulated evaluation's counts (None when absent).
        real: the real evaluation's counts (None when absent).
        p_values: phase -> two-sided Fisher exact p (only when both are present).
        departs: phases where real breaks more often than sim with p < ``alpha``.
        alpha: the significance level used.
    """

    sim: PhaseCounts | None
    real: PhaseCounts | None
    p_values: dict[str, float]
    departs: tuple[str, ...]
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return {
            "sim": self.sim.to_dict() if self.sim else None,
            "real": self.real.to_dict() if self.real else None,
            "p_values": dict(self.p_values),
            "departs": list(self.departs),
            "alpha": self.alpha,
        }


def compare_phases(
    sim: Sequence[EpisodeResult] | None, real: Sequence[EpisodeResult] | None, alpha: float = 0.05
) -> PhaseComparison:
    """Compare the failure-phase distributions of a simulated and a real evaluation."""
    cs = count_phases(sim) if sim is not None else None
    cr = count_phases(real) if real is not None else None
    p_values: dict[str, float] = {}
    departs: list[str] = []
    if cs is not None and cr is not None and cs.n and cr.n:
        for ph in PHASES:
            a, b = cr.by_phase[ph], cs.by_phase[ph]
            if a == 0 and b == 0:
                continue
            table = [[a, cr.n - a], [b, cs.n - b]]
            p = float(fisher_exact(table, alternative="two-sided").pvalue)
            p_values[ph] = p
            if p < alpha and a / cr.n > b / cs.n:
                departs.append(ph)
    return PhaseComparison(sim=cs, real=cr, p_values=p_values, departs=tuple(departs), alpha=alpha)
