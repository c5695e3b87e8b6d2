"""Where the model measures positions from, against a reference the user measures from.

A MuJoCo model measures every position from its world origin. A user placing objects by hand
measures from something physical, often the base's rotation axis. In the SO-101 model the
world origin sits 3.88 cm behind that axis, so a cube placed "21 cm from the axis" is at
x = 0.2488 m in the model. This module states the offset and converts placements.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError


@dataclass(frozen=True)
class FrameOrigin:
    """The model's origin against the user's declared reference.

    Attributes:
        reference_m: the declared reference point in model coordinates [m], shape (3,).
        reference_name: its label (e.g. "base rotation axis").
        offset_xy_m: horizontal distance from the model's origin to the reference [m].
        base_axis_m: the model's first joint anchor (the base rotation axis) [m], shape (3,).
        base_axis_joint: that joint's name.
        reference_to_axis_m: horizontal distance from the reference to that axis [m].
    """

    reference_m: np.ndarray
    reference_name: str
    offset_xy_m: float
    base_axis_m: np.ndarray
    base_axis_joint: str
    reference_to_axis_m: float

    def to_model(self, placements: npt.ArrayLike) -> np.ndarray:
        """Placements measured from the reference (same axes) -> model coordinates [m].

        Args:
            placements: shape (N, 2) (x, y) or (N, 3) (x, y, yaw); yaw passes through.
        """
        p = np.array(placements, dtype=float, ndmin=2)
        if p.shape[1] not in (2, 3):
            raise InputError(
                field="placements", expected="rows of (x, y) or (x, y, yaw)", got=f"shape {p.shape}"
            )
        p[:, 0] += self.reference_m[0]
        p[:, 1] += self.reference_m[1]
        return p

    def from_model(self, positions: npt.ArrayLike) -> np.ndarray:
        """Model coordinates -> distances measured from the reference (inverse of to_model)."""
        p = np.array(positions, dtype=float, ndmin=2)
        p[:, 0] -= self.reference_m[0]
        p[:, 1] -= self.reference_m[1]
        return p


def frame_origin(
    reference_m: npt.ArrayLike,
    reference_name: str | None,
    base_axis_m: npt.ArrayLike,
    base_axis_joint: str,
) -> FrameOrigin:
    """Compare the declared reference with the model's origin and its base rotation axis."""
    ref = np.asarray(reference_m, dtype=float).reshape(3)
    axis = np.asarray(base_axis_m, dtype=float).reshape(3)
    return FrameOrigin(
        reference_m=ref,
        reference_name=reference_name or "declared reference",
        offset_xy_m=float(np.hypot(ref[0], ref[1])),
        base_axis_m=axis,
        base_axis_joint=base_axis_joint,
        reference_to_axis_m=float(np.hypot(*(ref[:2] - axis[:2]))),
    )
