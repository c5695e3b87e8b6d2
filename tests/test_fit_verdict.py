"""The one identification verdict and its factors (``simgap.fit.verdict``)."""

from __future__ import annotations

import inspect

import simgap.branches.actuator as actuator_branch
import simgap.branches.joint_dynamics as joint_dynamics
import simgap.maniskill.fit as maniskill_fit
from simgap.fit.verdict import (
    ELIMINATE_FACTOR,
    IMPLICATE_FACTOR,
    IMPLICATE_GAIN,
    least_residual,
    verdict,
)


def test_the_rule_at_its_edges() -> None:
    floor = 1e-3
    assert verdict(ELIMINATE_FACTOR * floor, 0.0, floor) == "eliminated"
    nom = IMPLICATE_FACTOR * floor * 1.01
    assert verdict(nom, (1 - IMPLICATE_GAIN) * nom, floor) == "implicated"
    assert verdict(nom, (1 - IMPLICATE_GAIN) * nom * 1.01, floor) == "inconclusive"
    # between the two factors: off, but not far enough to implicate
    assert verdict(1.8 * floor, 0.0, floor) == "inconclusive"


def test_the_floor_adds_the_models_own_in_quadrature() -> None:
    assert least_residual({"total_rad": 3e-3, "model_rad": 4e-3}) == 5e-3
    assert least_residual({"total_rad": 3e-3}) == 3e-3


def test_every_actuator_verdict_states_the_one_rule() -> None:
    for mod in (actuator_branch, joint_dynamics, maniskill_fit):
        assert not hasattr(mod, "ELIMINATE_FACTOR") and not hasattr(mod, "IMPLICATE_FACTOR")
    assert joint_dynamics.least_residual is least_residual
    assert "verdict(" in inspect.getsource(actuator_branch._verdict)
