"""What every branch's randomisation entries are built from: the ``Draft`` of the spec, the
builder's type, Peng et al.'s default ranges and the measured finding a builder reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from simgap.finding import Diagnosis, Finding, Verdict
from simgap.values.randomization import Entry

PENG_TABLE: dict[str, tuple[float, float]] = {
    "link_mass_scale": (0.25, 4.0),
    "joint_damping_scale": (0.2, 20.0),
    "object_mass_kg": (0.1, 0.4),
    "object_friction": (0.1, 5.0),
    "object_damping_ns_per_m": (0.01, 0.2),
    "table_height_m": (0.73, 0.77),
    "controller_gain_scale": (0.5, 2.0),
    "action_delay_rate_per_s": (125.0, 1000.0),
}
"""Peng, Andrychowicz, Zaremba, Abbeel 2018, Table I (arXiv:1710.06537)."""


@dataclass(frozen=True)
class Draft:
    """What a branch's entry builder reads: the spec as far as it is built.

    Attributes:
        diagnosis: the diagnosis the spec is for (``findings.json``).
        object_body: the manipulated object's body in the model (the mass entry's target).
        gripper_geoms: the gripper's pad geoms (the pad friction entry's target).
        earlier: the entries the builders before this one wrote (cheaper branches first), so
            that a later branch leaves alone a name an earlier one pinned.
    """

    diagnosis: Diagnosis
    object_body: str = "cube"
    gripper_geoms: tuple[str, ...] = ("fixed_jaw_pad", "moving_jaw_pad")
    earlier: tuple[Entry, ...] = ()


EntryBuilder = Callable[[Draft], list[Entry]]
"""A branch's randomisation entries from the draft (``Branch.randomization``)."""


def measured_finding(diag: Diagnosis, branch: str, kind: str = "") -> Finding | None:
    """The branch's first measured finding of ``kind`` (implicated, eliminated or
    inconclusive), or None."""
    for f in diag.by_branch(branch):
        if f.kind == kind and f.verdict in (
            Verdict.IMPLICATED,
            Verdict.ELIMINATED,
            Verdict.INCONCLUSIVE,
        ):
            return f
    return None
