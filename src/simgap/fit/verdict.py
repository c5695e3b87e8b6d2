"""The one verdict of an identification against its noise floor.

A model as given (the nominal: the rig's MJCF, or the ideal actuator of a bench log) is
``eliminated`` when it reproduces the data within ``ELIMINATE_FACTOR`` x the noise floor;
``implicated`` when it is more than ``IMPLICATE_FACTOR`` x the floor away and the identified
model removes at least ``IMPLICATE_GAIN`` of its error; ``inconclusive`` otherwise (off, but
the fit does not explain why). The actuator ladder, the joint-dynamics identification and
the ManiSkill gain fit all state their verdict with this rule and these factors.

The floor is one definition (``simgap.actuator.noise_floor.NoiseFloor``, computed by its
``instrument_floor``), given to ``verdict`` in the metric of the errors: the joint
identification's RMS replay residuals against ``NoiseFloor.rms_rad`` (``least_residual`` of
its parts), the actuator ladder's held-out MAE against ``NoiseFloor.mae_rad`` (RMS x
sqrt(3) / 2), never below one encoder count (``simgap.actuator.ladder.ladder_floor_rad``).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

ELIMINATE_FACTOR = 1.5
"""The nominal is eliminated within this many noise floors."""
IMPLICATE_FACTOR = 2.0
"""The nominal is implicated only beyond this many noise floors..."""
IMPLICATE_GAIN = 0.3
"""... and when the identified model removes at least this fraction of its error."""


def verdict(nominal: float, identified: float, floor: float) -> str:
    """``eliminated``, ``implicated`` or ``inconclusive`` (see the module docstring).

    Args:
        nominal: the error of the model as given; identified: the identified model's; both
            in the unit of ``floor``, the least error the instrument allows.
    """
    if nominal <= ELIMINATE_FACTOR * floor:
        return "eliminated"
    if nominal > IMPLICATE_FACTOR * floor and identified <= (1 - IMPLICATE_GAIN) * nominal:
        return "implicated"
    return "inconclusive"


def least_residual(floor: Mapping[str, float]) -> float:
    """The least RMS residual a joint's verdict may expect [rad]: the instrument's floor
    (``total_rad``), with the model's own (``model_rad``: its step's discretisation, where
    the recording follows continuous time rather than the model's step) in quadrature."""
    return float(np.hypot(floor["total_rad"], floor.get("model_rad", 0.0)))
