"""Every branch's contract, listed once: the ladder's rungs in cost order (``LADDER``) and
every branch a finding can name (``BRANCHES``: the evidence gate, the rungs, calibration).

The lists hold each branch module's ``SPEC`` (a ``Branch``), imported directly: every
branch ships, and nothing is found by a module's name. The report finds a finding's plots
here (``branch_named``), and ``simgap randomize`` and the fleet take the branches' entry
builders from here (``entry_builders``).
"""

from __future__ import annotations

from collections.abc import Sequence

from simgap.branches import (
    actuator,
    appearance,
    body,
    calibration,
    contact,
    controller,
    envelope,
    evidence_gate,
    latency,
    phases,
    plumbing,
    training,
)
from simgap.branches.branch import Branch
from simgap.randomize import EntryBuilder

LADDER: tuple[Branch, ...] = (
    plumbing.SPEC,
    training.SPEC,
    phases.SPEC,
    envelope.SPEC,
    latency.SPEC,
    contact.SPEC,
    actuator.SPEC,
    controller.SPEC,
    body.SPEC,
    appearance.SPEC,
)
"""The ladder's rungs, cheapest first; each has an ``assess``."""

BRANCHES: tuple[Branch, ...] = (evidence_gate.SPEC, *LADDER, calibration.SPEC)
"""Every branch a finding can name: the evidence gate (run before the rungs), the rungs, and
calibration (a command of its own)."""


def branch_named(name: str) -> Branch | None:
    """The branch whose findings carry ``name`` (``Finding.branch``), or None."""
    return next((b for b in BRANCHES if b.name == name), None)


def entry_builders(branches: Sequence[Branch] = LADDER) -> tuple[EntryBuilder, ...]:
    """The randomisation entry builders of ``branches``, in cost order (a later builder sees
    the earlier ones' entries: the controller leaves the gains the actuator pinned)."""
    ordered = sorted(branches, key=lambda b: b.cost)
    return tuple(b.randomization for b in ordered if b.randomization is not None)
