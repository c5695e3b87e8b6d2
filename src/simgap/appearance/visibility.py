"""What the camera sees of the workspace from the start pose.

The object is placed on a grid of positions in front of the arm (distance from the base
rotation axis along the arm's heading, and sideways), the camera is rendered at the start
pose, and a position counts as seen when the object owns at least one pixel of the policy's
image (weighted majority of the source pixels the policy's resampling reads). The reach of
view is the farthest distance from the axis at which the object is seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.render import SceneRenderer
from simgap.sim.resample import resize_labels


@dataclass(frozen=True)
class Visibility:
    """The object's visibility over a grid, from one arm pose.

    Attributes:
        distances_m: distances from the base axis along the heading [m], shape (K,).
        lateral_m: sideways offsets [m], shape (L,).
        policy_pixels: object pixels in the policy image, shape (K, L).
        reach_m: farthest distance at which the object is seen [m] (NaN when never).
        nearest_m: nearest distance at which it is seen [m] (NaN when never).
        heading: unit horizontal direction of the arm (2,).
    """

    distances_m: np.ndarray
    lateral_m: np.ndarray
    policy_pixels: np.ndarray
    reach_m: float
    nearest_m: float
    heading: np.ndarray

    @property
    def seen(self) -> np.ndarray:
        """Boolean (K, L): the object is in the first frame."""
        out: np.ndarray = self.policy_pixels > 0
        return out


def reach_of_view(
    renderer: SceneRenderer,
    q_start: npt.ArrayLike,
    object_id: int,
    axis_m: npt.ArrayLike,
    object_z_m: float,
    *,
    distances_m: npt.ArrayLike | None = None,
    lateral_m: npt.ArrayLike = (0.0,),
) -> Visibility:
    """Render the object over a grid and report how far the camera sees.

    Args:
        renderer: renders the rig's camera (with ``object_body`` set).
        q_start: the start pose [rad], shape (J,).
        object_id: the object's geom id (in the segmentation).
        axis_m: the base rotation axis position [m] (3,).
        object_z_m: height of the object's centre when it rests on the table [m].
        distances_m: distances to try (default 0.10 .. 0.40 m every 2 cm).
        lateral_m: sideways offsets to try [m].
    """
    d = (
        np.arange(0.10, 0.4001, 0.02)
        if distances_m is None
        else np.asarray(distances_m, dtype=float)
    )
    lat = np.asarray(lateral_m, dtype=float)
    if d.size == 0 or lat.size == 0:
        raise InputError(
            field="grid",
            expected="at least one distance and one offset",
            got=f"{d.size} x {lat.size}",
        )
    axis = np.asarray(axis_m, dtype=float)
    kin = renderer.kin
    pos, _ = kin.camera_pose(q_start)
    h = pos[:2] - axis[:2]
    heading = h / np.linalg.norm(h) if np.linalg.norm(h) > 1e-6 else np.array([1.0, 0.0])
    side = np.array([-heading[1], heading[0]])
    px = np.zeros((d.size, lat.size), dtype=np.int64)
    for i, r in enumerate(d):
        for j, s in enumerate(lat):
            xy = axis[:2] + r * heading + s * side
            seg = renderer.render(q_start, object_pos=(xy[0], xy[1], object_z_m)).seg
            lab = resize_labels(seg, renderer.policy_resolution)
            px[i, j] = int((lab == object_id).sum())
    seen = (px > 0).any(axis=1)
    reach = float(d[seen].max()) if seen.any() else float("nan")
    near = float(d[seen].min()) if seen.any() else float("nan")
    return Visibility(
        distances_m=d,
        lateral_m=lat,
        policy_pixels=px,
        reach_m=reach,
        nearest_m=near,
        heading=heading,
    )


def inside_workspace(
    states: npt.ArrayLike, x_range_m: tuple[float, float], y_range_m: tuple[float, float]
) -> np.ndarray:
    """Whether each initial state (x, y[, yaw]) lies inside training's workspace, (N,) bool."""
    s = np.array(states, dtype=float, ndmin=2)
    if s.shape[1] < 2:
        raise InputError(
            field="initial_states", expected="rows of (x, y[, yaw])", got=f"shape {s.shape}"
        )
    out: np.ndarray = (
        (s[:, 0] >= x_range_m[0])
        & (s[:, 0] <= x_range_m[1])
        & (s[:, 1] >= y_range_m[0])
        & (s[:, 1] <= y_range_m[1])
    )
    return out
