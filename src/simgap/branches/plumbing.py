"""The plumbing branch: the audit of a deployment trace, first on the ladder.

Reads ``rig.evidence.trace`` through the evidence bundle and returns one Finding per audit
check that the trace allows (see ``simgap.audit``). A rig without a trace gets one
``not_measured`` Finding that says how to record one.
"""

from __future__ import annotations

from simgap.audit import audit, probe_for, rig_control_dt
from simgap.evidence.trace import Trace, trace_from_rig
from simgap.finding import Finding
from simgap.ladder import LADDER, Context, not_measured

_SPEC = next(s for s in LADDER if s.name == "plumbing")


def assess(ctx: Context) -> list[Finding]:
    """The audit's Findings for the rig's deployment trace."""
    rig = ctx.rig
    if rig.evidence.trace is None:
        return [not_measured(_SPEC, "Not measured: the rig names no deployment trace "
                                    "(evidence.trace). Run your deployment script against "
                                    "simgap's fake arm, or log one from the real arm "
                                    "(docs/plumbing.md).")]
    trace = ctx.evidence.get("trace", trace_from_rig)
    assert trace is not None

    def _probe(_rig: object, tr: Trace = trace) -> object:
        return probe_for(tr)

    probe = ctx.evidence.get("trace_checkpoint_probe", _probe)
    findings = audit(trace, expected_dt_s=rig_control_dt(rig),
                     policy_server=rig.deploy.policy_server,
                     checkpoint=probe)  # type: ignore[arg-type]
    if not findings:
        return [not_measured(_SPEC, "Not measured: the trace holds nothing the audit can "
                                    "check (no actions, images, registers or meta).")]
    return findings
