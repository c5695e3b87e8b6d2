"""The ladder: run the branches in cost order, apply the stop rule, build the Diagnosis.

Cost order is the method's: the plumbing audit first (it needs no bench time and a broken
translator corrupts every later measurement), then latency (a stopwatch), contact (an
afternoon on the bench), actuator dynamics (a fit) and appearance (a camera); the controller
and the body are fits beside them, and the failure-phase and training-envelope checks use
the rollouts a user already has.

Before the rungs, the evidence gate (``simgap.branches.evidence_gate``) checks the recording
itself (its time base); its Findings come first, and a refusal stops the branches that would
fit the recording's stamps.

Each rung is a branch's contract (``simgap.branches.branch.Branch``: its name, cost, needs and
``assess(ctx: Context) -> list[Finding]``), listed in ``simgap.branches.ladder_list.LADDER``;
``Context`` lives in ``simgap.branches.context``. A branch whose evidence is absent returns
one ``not_measured`` Finding that names what it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from simgap.branches import evidence_gate
from simgap.branches.branch import Branch
from simgap.branches.context import Context, ProgressFn
from simgap.branches.ladder_list import LADDER
from simgap.errors import NameNotFoundError
from simgap.finding import Diagnosis, Finding, Verdict

__all__ = ["LADDER", "Branch", "Context", "ProgressFn", "assess_for", "run_ladder"]


def _stop(findings: Sequence[Finding]) -> dict[str, Any]:
    """The stop rule: the cheapest implicated branch is where to act first."""
    implicated = [f for f in findings if f.verdict is Verdict.IMPLICATED]
    at_floor = [
        f.branch
        for f in findings
        if f.residual is not None and f.noise_floor is not None and f.residual <= f.noise_floor
    ]
    measured = [f for f in findings if f.verdict is not Verdict.NOT_MEASURED]
    if implicated:
        first = implicated[0]
        return {
            "verdict": "cause_found",
            "branch": first.branch,
            "reason": f"{first.branch} is the cheapest implicated branch; act on it first, "
            "then re-measure before trusting the branches after it.",
            "implicated": list(dict.fromkeys(f.branch for f in implicated)),
            "fits_at_noise_floor": at_floor,
        }
    if measured and all(f.verdict is Verdict.ELIMINATED for f in measured):
        return {
            "verdict": "no_cause_found",
            "branch": None,
            "reason": "every measured branch was eliminated; measure the branches marked "
            "not_measured.",
            "implicated": [],
            "fits_at_noise_floor": at_floor,
        }
    return {
        "verdict": "incomplete",
        "branch": None,
        "reason": "no branch is implicated, and some are inconclusive or not measured.",
        "implicated": [],
        "fits_at_noise_floor": at_floor,
    }


def assess_for(branch: Branch) -> Callable[[Context], list[Finding]]:
    """The branch's ``assess``; a branch that is no rung (its findings come from a command of
    its own) is refused, naming the rungs."""
    if branch.assess is None:
        raise NameNotFoundError("branch on the ladder", branch.name, [b.name for b in LADDER])
    return branch.assess


def run_ladder(
    ctx: Context, ladder: Sequence[Branch] = LADDER, comparability: dict[str, Any] | None = None
) -> Diagnosis:
    """Run every branch in cost order and return the Diagnosis."""
    # the evidence gate first: a branch that reads the dataset's stamps as time asks it
    # (``evidence_gate.time_base_refusal``) before it fits anything
    findings: list[Finding] = list(evidence_gate.assess(ctx))
    ctx.findings.extend(findings)
    rungs = sorted(ladder, key=lambda b: b.cost)
    for i, branch in enumerate(rungs):
        ctx.progress(branch.name, i / max(1, len(rungs)))
        found = assess_for(branch)(ctx)
        findings.extend(found)
        ctx.findings.extend(found)
    ctx.progress("done", 1.0)
    return Diagnosis(
        rig=ctx.rig.name,
        findings=tuple(findings),
        stop=_stop(findings),
        comparability=comparability,
        seed=ctx.seed,
    )
