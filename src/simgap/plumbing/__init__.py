"""The plumbing audit: checks a deployment trace for the bugs that break first.

Each check is one Finding under the ``plumbing`` branch (implicated or eliminated); a check
whose evidence the trace lacks is left out and named in ``skipped``:

- ``Torque on before goal = present`` (``check_torque_jump``)
- ``Gripper unit or scale`` (``check_gripper_unit``)
- ``Stale first frame`` (``check_stale_first_frame``)
- ``Actions outside joint limits or clipped`` (``check_joint_limits``)
- ``Control rate`` (``check_control_rate``)
- ``Checkpoint loads only on a GPU`` (``check_checkpoint``)
- ``Motor temperature drift`` (``check_temperature_drift``)
- ``Policy server address`` (``check_policy_server``)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.finding import Finding, Verdict
from simgap.plumbing.motion import (
    check_control_rate,
    check_gripper_unit,
    check_joint_limits,
    check_torque_jump,
)
from simgap.plumbing.setup import (
    check_checkpoint,
    check_policy_server,
    check_stale_first_frame,
    check_temperature_drift,
)
from simgap.rig import Rig
from simgap.values.trace import CheckpointProbe, Trace

CHECKS: tuple[str, ...] = (
    "Torque on before goal = present",
    "Gripper unit or scale",
    "Stale first frame",
    "Actions outside joint limits or clipped",
    "Control rate",
    "Checkpoint loads only on a GPU",
    "Motor temperature drift",
    "Policy server address",
)
"""Every check's title, in report order."""


def rig_control_dt(rig: Rig | None) -> float | None:
    """The period the deployment loop should keep [s]: the rig's deployed period
    (``control.real_dt_s``), else its control period (``control.dt_s``).

    A deployment deliberately run at another rate than training's is not a plumbing bug; the
    training-envelope check compares it with training's rate."""
    if rig is None:
        return None
    return rig.real_dt_s or rig.control_dt_s


def audit(
    trace: Trace,
    *,
    expected_dt_s: float | None = None,
    policy_server: str | None = None,
    checkpoint: CheckpointProbe | None = None,
) -> list[Finding]:
    """Run every check that the evidence allows, in ``CHECKS`` order.

    Args:
        trace: the deployment trace.
        expected_dt_s: the rig's control period [s]; None uses ``meta.control_dt_s``.
        policy_server: the rig's ``deploy.policy_server`` (the trace's meta wins).
        checkpoint: what loading the deployed checkpoint on the CPU showed.
    """
    found = [
        check_torque_jump(trace),
        check_gripper_unit(trace),
        check_stale_first_frame(trace),
        check_joint_limits(trace),
        check_control_rate(trace, expected_dt_s),
        check_checkpoint(checkpoint),
        check_temperature_drift(trace),
        check_policy_server(trace.meta, policy_server),
    ]
    return [f for f in found if f is not None]


@dataclass(frozen=True)
class AuditReport:
    """The audit of one trace.

    Attributes:
        trace: the trace file.
        rig: the rig's name, if a rig was given.
        n_ticks: records in the trace.
        n_episodes: distinct episodes.
        findings: one per check that ran.
    """

    trace: Path | None
    rig: str | None
    n_ticks: int
    n_episodes: int
    findings: tuple[Finding, ...]

    @property
    def implicated(self) -> list[Finding]:
        """The findings that name a bug."""
        return [f for f in self.findings if f.verdict is Verdict.IMPLICATED]

    def to_dict(self) -> dict[str, Any]:
        """JSON keys: trace, rig, n_ticks, n_episodes, checks_run, skipped, implicated,
        findings."""
        ran = [f.title for f in self.findings]
        return {
            "trace": None if self.trace is None else str(self.trace),
            "rig": self.rig,
            "n_ticks": self.n_ticks,
            "n_episodes": self.n_episodes,
            "checks_run": ran,
            "skipped": [c for c in CHECKS if c not in ran],
            "implicated": [f.title for f in self.implicated],
            "findings": [f.to_dict() for f in self.findings],
        }


def audit_trace(
    trace: Trace, rig: Rig | None = None, checkpoint: CheckpointProbe | None = None
) -> AuditReport:
    """Audit a trace already read, with the rig's period and policy server if given, and what
    probing the trace's checkpoint showed (``evidence.trace.probe_for``; None: not probed)."""
    findings = audit(
        trace,
        expected_dt_s=rig_control_dt(rig),
        policy_server=rig.deploy.policy_server if rig else None,
        checkpoint=checkpoint,
    )
    return AuditReport(
        trace=trace.source,
        rig=rig.name if rig else None,
        n_ticks=len(trace),
        n_episodes=len(set(trace.episode.tolist())),
        findings=tuple(findings),
    )


__all__ = ["CHECKS", "AuditReport", "audit", "audit_trace", "rig_control_dt"]
