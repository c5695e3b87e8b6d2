"""A Feetech-like register bus for the fake arm, with the STS3215's power-up behaviour.

Registers per motor (the names LeRobot's ``FeetechMotorsBus`` uses): ``Torque_Enable``
(0/1), ``Goal_Position`` [ticks], ``Present_Position`` [ticks], ``Present_Temperature``
[deg C]. At power-up torque is off and every ``Goal_Position`` reads 0 while the joints sit
wherever they were left, far from 0; enabling torque before writing goal = present drives
each joint toward tick 0 (clipped by the joint's range). Every write and read goes to a
listener (the trace recorder).

Temperature follows a first-order model per motor:
``dT/dt = HEAT_RATE_C_S * (|tau| / tau_max)^2 - (T - AMBIENT_C) / THERMAL_TAU_S``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from simgap.errors import NameNotFoundError

REGISTERS: tuple[str, ...] = (
    "Torque_Enable",
    "Goal_Position",
    "Present_Position",
    "Present_Temperature",
)
AMBIENT_C = 25.0
"""Ambient (and power-up) motor temperature [deg C]."""
HEAT_RATE_C_S = 16.0
"""Heating at full torque [deg C / s]. Illustrative: holding the demo arm stretched out (about
a quarter of the stall torque on shoulder_lift) settles about 25 C above ambient."""
THERMAL_TAU_S = 30.0
"""Thermal time constant [s] (illustrative, short so that tests heat motors in seconds)."""


@dataclass(frozen=True)
class RegisterAccess:
    """One register write or read: motor name, register name, value."""

    motor: str
    register: str
    value: float
    write: bool


Listener = Callable[[RegisterAccess], None]


class FakeBus:
    """Registers of a set of motors, backed by callbacks into the simulation.

    Args:
        motors: motor names in bus order.
        present: returns present positions [ticks], shape (M,).
        on_goal: called with (motor index, goal ticks) when a goal takes effect.
        on_torque: called with (motor index, enabled) on a Torque_Enable write.
        listener: receives every access (for the trace).
        before: called before every access (the robot advances physics to the clock's time).
    """

    def __init__(
        self,
        motors: Sequence[str],
        present: Callable[[], np.ndarray],
        on_goal: Callable[[int, float], None],
        on_torque: Callable[[int, bool], None],
        listener: Listener | None = None,
        before: Callable[[], None] | None = None,
    ) -> None:
        self.motors = tuple(motors)
        self._present = present
        self._on_goal = on_goal
        self._on_torque = on_torque
        self.listener = listener
        self._before = before
        n = len(self.motors)
        self.goal = np.zeros(n)  # the power-up value of every Goal_Position register
        self.torque = np.zeros(n, dtype=bool)
        self.temperature = np.full(n, AMBIENT_C)

    def _index(self, motor: str) -> int:
        if motor not in self.motors:
            raise NameNotFoundError("motor", motor, self.motors)
        return self.motors.index(motor)

    def _note(self, motor: str, register: str, value: float, write: bool) -> None:
        if self.listener is not None:
            self.listener(RegisterAccess(motor, register, float(value), write))

    def write(self, register: str, motor: str, value: float) -> None:
        """Write one register of one motor."""
        i = self._index(motor)
        if self._before is not None:
            self._before()
        if register == "Torque_Enable":
            on = bool(int(value))
            self.torque[i] = on
            self._on_torque(i, on)
            if on:
                self._on_goal(i, float(self.goal[i]))
        elif register == "Goal_Position":
            self.goal[i] = float(value)
            if self.torque[i]:
                self._on_goal(i, float(value))
        else:
            raise NameNotFoundError(
                "writable register", register, ("Torque_Enable", "Goal_Position")
            )
        self._note(motor, register, value, True)

    def read(self, register: str, motor: str) -> float:
        """Read one register of one motor."""
        i = self._index(motor)
        if self._before is not None:
            self._before()
        if register == "Present_Position":
            value = float(self._present()[i])
        elif register == "Goal_Position":
            value = float(self.goal[i])
        elif register == "Torque_Enable":
            value = float(self.torque[i])
        elif register == "Present_Temperature":
            value = float(round(self.temperature[i]))
        else:
            raise NameNotFoundError("register", register, REGISTERS)
        self._note(motor, register, value, False)
        return value

    def sync_write(self, register: str, values: dict[str, float]) -> None:
        """Write one register of several motors."""
        for motor, value in values.items():
            self.write(register, motor, value)

    def sync_read(self, register: str) -> dict[str, float]:
        """Read one register of every motor."""
        return {m: self.read(register, m) for m in self.motors}

    def heat(self, torque_fraction: np.ndarray, dt: float) -> None:
        """Advance the thermal model by ``dt`` [s] at a constant ``|tau| / tau_max``."""
        if dt <= 0:
            return
        frac = np.clip(np.abs(np.asarray(torque_fraction, dtype=float)), 0.0, 1.0)
        steady = AMBIENT_C + HEAT_RATE_C_S * frac**2 * THERMAL_TAU_S
        decay = math.exp(-dt / THERMAL_TAU_S)
        self.temperature = steady + (self.temperature - steady) * decay
