"""The plumbing branch: the audit of a deployment trace, first on the ladder.

Reads ``rig.evidence.trace`` through the evidence bundle and returns one Finding per audit
check that the trace allows (see ``simgap.plumbing``). A rig without a trace gets one
``not_measured`` Finding that says how to record one.
"""

from __future__ import annotations

from pathlib import Path

from simgap.branches.branch import Branch
from simgap.branches.context import Context, not_measured
from simgap.evidence.trace import probe_for, read_trace, trace_from_rig
from simgap.finding import Finding
from simgap.plumbing import AuditReport, audit, audit_trace, rig_control_dt
from simgap.report import plots_plumbing
from simgap.values.trace import Trace


def assess(ctx: Context) -> list[Finding]:
    """The audit's Findings for the rig's deployment trace."""
    rig = ctx.rig
    if rig.evidence.trace is None:
        return [
            not_measured(
                SPEC,
                "Not measured: the rig names no deployment trace "
                "(evidence.trace). Run your deployment script against "
                "simgap's fake arm, or log one from the real arm "
                "(docs/plumbing.md).",
            )
        ]
    trace = ctx.evidence.get("trace", trace_from_rig)
    assert trace is not None

    def _probe(_rig: object, tr: Trace = trace) -> object:
        return probe_for(tr)

    probe = ctx.evidence.get("trace_checkpoint_probe", _probe)
    findings = audit(
        trace,
        expected_dt_s=rig_control_dt(rig),
        policy_server=rig.deploy.policy_server,
        checkpoint=probe,  # type: ignore[arg-type]
    )
    if not findings:
        return [
            not_measured(
                SPEC,
                "Not measured: the trace holds nothing the audit can "
                "check (no actions, images, registers or meta).",
            )
        ]
    return findings


def run_audit(trace_path: str | Path, rig_path: str | Path | None = None) -> AuditReport:
    """Read the trace (and the rig), probe its checkpoint and audit it: what ``simgap audit``
    runs. The reading happens here, at the edge; ``simgap.plumbing`` takes the values."""
    from simgap.rig import load_rig

    rig = load_rig(rig_path) if rig_path is not None else None
    trace = read_trace(trace_path)
    return audit_trace(trace, rig, checkpoint=probe_for(trace))


SPEC = Branch(
    name="plumbing",
    cost=0.5,
    needs=("evidence.trace (a deployment trace from the fake arm or the real one)",),
    assess=assess,
    plots=lambda f: plots_plumbing.plots(f),  # looked up when drawn: a test may replace it
)
"""The plumbing branch's contract: first on the ladder; its plots; no randomisation entries."""
