"""What one joint moves: the load a servo drives (read off a model by ``sim.load``, used by
the actuator fits)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JointLoad:
    """What one joint moves.

    Attributes:
        inertia: inertia about the joint without the servo's own armature [kg m^2].
        g_sin: gravity torque = g_sin * sin(q) + g_cos * cos(q) [N m].
        g_cos: see g_sin.
        tau_max: motor torque limit [N m] (inf when none).
    """

    inertia: float
    g_sin: float = 0.0
    g_cos: float = 0.0
    tau_max: float = float("inf")
