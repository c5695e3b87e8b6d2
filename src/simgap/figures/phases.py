"""The failure-phase branch's figures: where real episodes break, against simulated ones, and
which branches that points at or eliminates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, JSONValue, Record, figure


@dataclass(frozen=True)
class PhaseCounts(Record):
    """One evaluation's outcomes and failure phases."""

    n: int = figure(UNITLESS, "episodes with a known outcome")
    successes: int = figure(UNITLESS, "successful episodes")
    failures: int = figure(UNITLESS, "failed episodes")
    unknown: int = figure(UNITLESS, "episodes with no known outcome")
    by_phase: Mapping[str, int] = figure(UNITLESS, "phase -> failures that broke in it")
    by_signature: Mapping[str, int] = figure(UNITLESS, "signature -> failures showing it")


@dataclass(frozen=True)
class PhaseComparison(Record):
    """Sim against real, phase by phase (Fisher's exact test per phase)."""

    sim: PhaseCounts | None = figure(TEXT, "the simulated evaluation (None: not recorded)")
    real: PhaseCounts | None = figure(TEXT, "the real evaluation (None: not recorded)")
    p_values: Mapping[str, float] = figure(UNITLESS, "phase -> two-sided p-value")
    departs: tuple[str, ...] = figure(TEXT, "phases where real breaks significantly more")
    alpha: float = figure(UNITLESS, "the test's significance level")


@dataclass(frozen=True)
class PhaseBranches(Record):
    """What a failure in one phase says about the branches."""

    points_at: tuple[str, ...] = figure(TEXT, "branches to measure first")
    eliminates: tuple[str, ...] = figure(TEXT, "branches it rules out")
    why: str = figure(TEXT, "the reasoning")


@dataclass(frozen=True)
class PhasesFigures(Record):
    """The failure phases of the real (else the simulated) evaluation, where real departs
    from simulation, and the branches that points at or eliminates."""

    branch = "phases"

    comparison: PhaseComparison = figure(TEXT, "sim against real, phase by phase")
    branch_map: Mapping[str, PhaseBranches] = figure(TEXT, "phase -> what a failure there says")
    evaluation: str = figure(TEXT, "the evaluation counted: 'real' or 'sim'")
    dominant_phase: str | None = figure(TEXT, "the phase most failures broke in")
    departs: tuple[str, ...] = figure(TEXT, "phases where real departs from simulation")
    points_at: tuple[str, ...] = figure(TEXT, "branches the failures point at")
    eliminates: tuple[str, ...] = figure(TEXT, "branches every failure phase rules out")
    failures: int = figure(UNITLESS, "failed episodes of that evaluation")
    episodes: int = figure(UNITLESS, "episodes of that evaluation with a known outcome")


@dataclass(frozen=True)
class EpisodeOutcome(Record):
    """One episode's outcome and where it broke."""

    episode: int = figure(UNITLESS, "the episode index")
    success: bool | None = figure(TEXT, "it succeeded (None: unknown)")
    success_source: str = figure(TEXT, "where the outcome comes from")
    reached: str | None = figure(TEXT, "the last phase it entered")
    failure_phase: str | None = figure(TEXT, "the phase it broke in")
    signature: str | None = figure(TEXT, "the failure's signature")
    before: str = figure(TEXT, "what happened just before", default="")
    evidence: Mapping[str, JSONValue] = figure(
        TEXT, "the classification's evidence", default_factory=dict
    )
    annotated: bool = figure(TEXT, "the failure phase was annotated by hand", default=False)
    phases_s: Mapping[str, tuple[float, ...]] = figure(
        "s", "phase -> (start, end) in the episode's time", default_factory=dict
    )


@dataclass(frozen=True)
class PhasesDetails(Record):
    """Every episode's outcome, for the report's bars and the Rerun timeline."""

    branch = "phases"

    phases: tuple[str, ...] = figure(TEXT, "the phases, in order", default=())
    real_episodes: tuple[EpisodeOutcome, ...] | None = figure(
        TEXT, "the real episodes (None: not recorded)", default=None
    )
    sim_episodes: tuple[EpisodeOutcome, ...] | None = figure(
        TEXT, "the simulated episodes (None: not recorded)", default=None
    )
