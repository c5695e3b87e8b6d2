"""What a branch gets: the ``Context`` each branch's ``assess(ctx)`` receives, and the
``not_measured`` Finding of a branch whose evidence is absent.

These sit under ``branches/`` so that the branches import them downward; each branch's
contract is its ``Branch`` (``simgap.branches.branch``), the ladder's rungs are listed in
``simgap.branches.ladder_list``, and ``simgap.ladder`` runs them in cost order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Finding, Verdict
from simgap.fit.backends import LOCAL, Compute
from simgap.rig import Rig

if TYPE_CHECKING:  # branch.py imports this module for Context
    from simgap.branches.branch import Branch

ProgressFn = Callable[[str, float], None]
"""Progress callback: (message, fraction done in [0, 1])."""


@dataclass
class Context:
    """What a branch gets: the rig, its evidence, where to write artifacts, progress.

    Attributes:
        rig: the rig.
        evidence: lazily loaded evidence values.
        out_dir: folder for artifacts (None when nothing may be written).
        seed: seed for everything random.
        progress: callback for long work.
        options: per-run options (e.g. ``control_dt_s`` override).
        findings: the findings of the branches run so far (cheaper first), so that a
            branch can account for another's result (the actuator's delay for the
            latency the loop explains).
        compute: where the fits' candidate batches run (local threads by default).
    """

    rig: Rig
    evidence: EvidenceBundle
    out_dir: Path | None = None
    seed: int = 0
    progress: ProgressFn = field(default=lambda msg, frac: None)
    options: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    compute: Compute = LOCAL


def not_measured(spec: Branch, why: str = "") -> Finding:
    """The Finding of a branch that could not run, naming the evidence it needs."""
    needs = " and ".join(spec.needs) if spec.needs else "its evidence"
    return Finding(
        branch=spec.name,
        verdict=Verdict.NOT_MEASURED,
        title=spec.name.capitalize(),
        summary=why or f"Not measured: the rig gives no {needs}.",
        next_step=f"Record {needs} and name it in rig.toml.",
        needs=spec.needs,
    )
