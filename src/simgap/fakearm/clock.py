"""Clocks for the fake arm: virtual (as fast as called) or the wall clock (real time)."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """What the fake arm needs of a clock: the time [s] and a way to wait."""

    def now(self) -> float:
        """Seconds since the clock started."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` [s]."""
        ...

    def spend(self, seconds: float) -> None:
        """Account for ``seconds`` [s] an operation takes (bus transfer, camera read)."""
        ...


class VirtualClock:
    """Simulated time: advances only by ``sleep`` and the cost of each operation, so a
    deployment script runs as fast as the computer allows with realistic time stamps."""

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)

    def now(self) -> float:
        """Simulated seconds."""
        return self._t

    def sleep(self, seconds: float) -> None:
        """Advance by ``seconds`` (negative values are ignored)."""
        self._t += max(0.0, float(seconds))

    def spend(self, seconds: float) -> None:
        """Advance by the cost of an operation."""
        self.sleep(seconds)


class RealClock:
    """The monotonic wall clock; physics catches up with it on each call (real time)."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        """Seconds since construction."""
        return time.monotonic() - self._t0

    def sleep(self, seconds: float) -> None:
        """``time.sleep``."""
        if seconds > 0:
            time.sleep(seconds)

    def spend(self, seconds: float) -> None:
        """Operations take the time they take: nothing to add."""
