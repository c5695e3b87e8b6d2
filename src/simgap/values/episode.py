"""One recorded episode reduced to what phase segmentation reads, and the phase names (built
by ``evidence.episodes_io``, segmented by ``episodes/``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgap.errors import InputError

PHASES: tuple[str, ...] = (
    "approach",
    "contact",
    "grasp",
    "lift_and_carry",
    "place",
    "after_success",
)
"""Every phase name, in the order an episode passes through them."""


NO_GRIPPER_MESSAGE = (
    "without the gripper's command and measured opening, contact, grasp, lift_and_carry and "
    "place cannot be told apart (only approach vs. the rest, from the end effector and the "
    "object)"
)


@dataclass(frozen=True)
class EpisodeRecord:
    """One recorded episode, reduced to what segmentation reads. SI units.

    Attributes:
        t: sample times [s], shape (T,).
        gripper_cmd: commanded gripper angle [rad], shape (T,).
        gripper: measured gripper angle [rad], shape (T,).
        gripper_range: (closed, open) model angles [rad] of the gripper.
        ee: end-effector world positions [m], shape (T, 3), or None.
        obj: object world positions [m], shape (T, 3), or None.
        episode: episode index in the source.
        source: where it was read from.
    """

    t: np.ndarray
    gripper_cmd: np.ndarray
    gripper: np.ndarray
    gripper_range: tuple[float, float]
    ee: np.ndarray | None = None
    obj: np.ndarray | None = None
    episode: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        n = np.asarray(self.t).shape[0]
        for name in ("gripper_cmd", "gripper"):
            a = np.asarray(getattr(self, name), dtype=float)
            if a.shape != (n,):
                raise InputError(
                    file=self.source,
                    field=name,
                    expected=f"shape ({n},)",
                    got=f"shape {a.shape}",
                    fix=NO_GRIPPER_MESSAGE,
                )
            object.__setattr__(self, name, a)
        for name in ("ee", "obj"):
            v = getattr(self, name)
            if v is not None and np.asarray(v).shape != (n, 3):
                raise InputError(
                    file=self.source,
                    field=name,
                    expected=f"shape ({n}, 3)",
                    got=f"shape {np.asarray(v).shape}",
                )
        lo, hi = self.gripper_range
        if not hi > lo:
            raise InputError(
                file=self.source,
                field="gripper_range",
                expected="(closed, open) with open > closed",
                got=(lo, hi),
            )
