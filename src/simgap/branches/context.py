"""What a branch gets and how it is named: the ladder's rungs (``BranchSpec``, ``LADDER``, cheapest
first), the ``Context`` each branch's ``assess(ctx)`` receives, and the ``not_measured`` Finding
of a branch whose evidence is absent.

These sit under ``branches/`` so that the branches import them downward; ``simgap.ladder``
imports them and the branches, and runs the rungs in cost order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Finding, Verdict
from simgap.fit.backends import LOCAL, Compute
from simgap.rig import Rig

ProgressFn = Callable[[str, float], None]
"""Progress callback: (message, fraction done in [0, 1])."""


@dataclass(frozen=True)
class BranchSpec:
    """One rung of the ladder.

    Attributes:
        name: branch name, as in findings.
        module: module holding ``assess(ctx)``.
        cost: relative cost; the ladder runs in increasing cost.
        needs: the evidence keys the branch reads (for the not_measured message).
    """

    name: str
    module: str
    cost: float
    needs: tuple[str, ...] = ()


LADDER: tuple[BranchSpec, ...] = (
    BranchSpec(
        "plumbing",
        "simgap.branches.plumbing",
        0.5,
        ("evidence.trace (a deployment trace from the fake arm or the real one)",),
    ),
    BranchSpec(
        "training",
        "simgap.branches.training",
        0.6,
        ("a [training] section (simgap init --maniskill-config)",),
    ),
    BranchSpec(
        "phases",
        "simgap.branches.phases",
        0.7,
        ("evidence.dataset or evidence.sim_dataset (recorded rollouts)",),
    ),
    BranchSpec(
        "envelope", "simgap.branches.envelope", 0.8, ("evidence.dataset and a [training] section",)
    ),
    BranchSpec(
        "latency",
        "simgap.branches.latency",
        1.0,
        ("evidence.timing_logs or evidence.client_logs/server_logs",),
    ),
    BranchSpec(
        "contact",
        "simgap.branches.contact",
        2.0,
        ("evidence.push_logs (logged pushes) and model.object_body",),
    ),
    BranchSpec(
        "actuator", "simgap.branches.actuator", 3.0, ("evidence.actuator_logs or evidence.dataset",)
    ),
    BranchSpec(
        "controller",
        "simgap.branches.controller",
        3.5,
        ("evidence.dataset with actions, and model.ee_site",),
    ),
    BranchSpec(
        "body",
        "simgap.branches.body",
        3.7,
        ("evidence.static_object_poses or frame.origin_reference_m",),
    ),
    BranchSpec(
        "appearance",
        "simgap.branches.appearance",
        4.0,
        ("evidence.frames or camera frames in evidence.dataset", "a [camera] section"),
    ),
)
"""Every branch, cheapest first. Each module exposes ``assess(ctx) -> list[Finding]``."""


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


def not_measured(spec: BranchSpec, why: str = "") -> Finding:
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
