"""SIMPLER's pose loss: translation error plus the half rotation angle between
quaternions."""

from __future__ import annotations

import numpy as np


def quat_half_angle_vectors(q_ref: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Half rotation vectors of ``q_ref^-1 q`` (w, x, y, z quaternions), shape (..., 3).

    The norm of each vector is theta / 2, half the geodesic angle between the two
    orientations, which equals SIMPLER's arcsin(||R1 - R2||_F / (2 sqrt 2)) exactly.
    """
    w1, v1 = q_ref[..., :1], q_ref[..., 1:]
    w2, v2 = q[..., :1], q[..., 1:]
    w = w1 * w2 + np.sum(v1 * v2, axis=-1, keepdims=True)
    v = w1 * v2 - w2 * v1 - np.cross(v1, v2)
    sign = np.where(w < 0, -1.0, 1.0)
    w, v = w * sign, v * sign
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    half = np.arctan2(n, w)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(n > 1e-15, v / np.maximum(n, 1e-300), 0.0)
    out: np.ndarray = unit * half
    return out


def simpler_loss(
    pos: np.ndarray, quat: np.ndarray, pos_ref: np.ndarray, quat_ref: np.ndarray
) -> float:
    """SIMPLER's pose loss: mean translation error [m] + mean half-angle rotation error
    [rad] (weight 1), over samples. Shapes (T, 3) and (T, 4)."""
    trans = np.linalg.norm(pos - pos_ref, axis=-1)
    rot = np.linalg.norm(quat_half_angle_vectors(quat_ref, quat), axis=-1)
    return float(np.mean(trans) + np.mean(rot))
