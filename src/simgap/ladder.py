"""The ladder: run the branches in cost order, apply the stop rule, build the Diagnosis.

Cost order is the method's: the plumbing audit first (it needs no bench time and a broken
translator corrupts every later measurement), then latency (a stopwatch), contact (an
afternoon on the bench), actuator dynamics (a fit) and appearance (a camera); the controller
and the body are fits beside them, and the failure-phase and training-envelope checks use
the rollouts a user already has.

Each branch module exposes ``assess(ctx: Context) -> list[Finding]``. A branch whose
evidence is absent returns one ``not_measured`` Finding that names what it needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Diagnosis, Finding, Verdict
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
    BranchSpec("plumbing", "simgap.branches.plumbing", 0.5,
               ("evidence.trace (a deployment trace from the fake arm or the real one)",)),
    BranchSpec("phases", "simgap.branches.phases", 0.7,
               ("evidence.dataset or evidence.sim_dataset (recorded rollouts)",)),
    BranchSpec("envelope", "simgap.branches.envelope", 0.8,
               ("evidence.dataset and a [training] section",)),
    BranchSpec("latency", "simgap.branches.latency", 1.0,
               ("evidence.timing_logs or evidence.client_logs/server_logs",)),
    BranchSpec("contact", "simgap.branches.contact", 2.0,
               ("evidence.push_logs (logged pushes) and model.object_body",)),
    BranchSpec("actuator", "simgap.branches.actuator", 3.0,
               ("evidence.actuator_logs or evidence.dataset",)),
    BranchSpec("controller", "simgap.branches.controller", 3.5,
               ("evidence.dataset with actions, and model.ee_site",)),
    BranchSpec("body", "simgap.branches.body", 3.7,
               ("evidence.static_object_poses or frame.origin_reference_m",)),
    BranchSpec("appearance", "simgap.branches.appearance", 4.0,
               ("evidence.frames or camera frames in evidence.dataset", "a [camera] section")),
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
    """

    rig: Rig
    evidence: EvidenceBundle
    out_dir: Path | None = None
    seed: int = 0
    progress: ProgressFn = field(default=lambda msg, frac: None)
    options: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def not_measured(spec: BranchSpec, why: str = "") -> Finding:
    """The Finding of a branch that could not run, naming the evidence it needs."""
    needs = " and ".join(spec.needs) if spec.needs else "its evidence"
    return Finding(
        branch=spec.name, verdict=Verdict.NOT_MEASURED, title=spec.name.capitalize(),
        summary=why or f"Not measured: the rig gives no {needs}.",
        next_step=f"Record {needs} and name it in rig.toml.", needs=spec.needs)


def _stop(findings: Sequence[Finding]) -> dict[str, Any]:
    """The stop rule: the cheapest implicated branch is where to act first."""
    implicated = [f for f in findings if f.verdict is Verdict.IMPLICATED]
    at_floor = [f.branch for f in findings
                if f.residual is not None and f.noise_floor is not None
                and f.residual <= f.noise_floor]
    measured = [f for f in findings if f.verdict is not Verdict.NOT_MEASURED]
    if implicated:
        first = implicated[0]
        return {"verdict": "cause_found", "branch": first.branch,
                "reason": f"{first.branch} is the cheapest implicated branch; act on it first, "
                          "then re-measure before trusting the branches after it.",
                "implicated": [f.branch for f in implicated], "fits_at_noise_floor": at_floor}
    if measured and all(f.verdict is Verdict.ELIMINATED for f in measured):
        return {"verdict": "no_cause_found", "branch": None,
                "reason": "every measured branch was eliminated; measure the branches marked "
                          "not_measured.", "implicated": [], "fits_at_noise_floor": at_floor}
    return {"verdict": "incomplete", "branch": None,
            "reason": "no branch is implicated, and some are inconclusive or not measured.",
            "implicated": [], "fits_at_noise_floor": at_floor}


def load_assess(spec: BranchSpec) -> Callable[[Context], list[Finding]] | None:
    """The branch's ``assess``, or None when this build does not ship the branch."""
    try:
        module = importlib.import_module(spec.module)
    except ModuleNotFoundError as e:
        if e.name == spec.module:
            return None  # this build of simgap does not ship the branch
        raise
    assess: Callable[[Context], list[Finding]] = module.assess
    return assess


def run_ladder(ctx: Context, ladder: Sequence[BranchSpec] = LADDER,
               comparability: dict[str, Any] | None = None) -> Diagnosis:
    """Run every branch in cost order and return the Diagnosis."""
    findings: list[Finding] = []
    specs = sorted(ladder, key=lambda s: s.cost)
    for i, spec in enumerate(specs):
        ctx.progress(spec.name, i / max(1, len(specs)))
        assess = load_assess(spec)
        if assess is None:
            findings.append(not_measured(spec, f"The {spec.name} branch is not part of this "
                                               "build of simgap."))
            continue
        found = assess(ctx)
        findings.extend(found)
        ctx.findings.extend(found)
    ctx.progress("done", 1.0)
    return Diagnosis(rig=ctx.rig.name, findings=tuple(findings), stop=_stop(findings),
                     comparability=comparability, seed=ctx.seed)
