"""The calibration branch: LeRobot's calibration files against the rig's model, against each
other, and over time.

Its findings come from a command of its own (``simgap calibration check|compare``), not from
a rung of the ladder, so its contract has no ``assess``; it is listed so that every branch a
finding can name has one (``simgap.branches.ladder_list.BRANCHES``).
"""

from __future__ import annotations

from simgap.branches.branch import Branch
from simgap.calibration.finding import BRANCH

SPEC = Branch(
    name=BRANCH,
    cost=0.0,
    needs=("LeRobot calibration files (simgap calibration check|compare)",),
    assess=None,
)
"""The calibration branch's contract: no rung, no plot, no randomisation entry."""
