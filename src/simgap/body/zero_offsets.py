"""Joint zero offsets from a static object seen from several poses.

Model: the real joint angle is the recorded one plus an offset, ``q_model = q_rec + delta``
(the correction to add to ``offset_rad`` in rig.toml). One static object at an unknown world
position ``p`` is measured in the camera frame at each pose; we solve by least squares
through the model's forward kinematics for ``p``, the camera's mounting error (6 numbers,
camera frame) and the offsets of the joints that carry the camera.

Not every offset is observable from one object of unknown position: an offset of a joint
whose rotation moves the whole scene rigidly (the base pan about a vertical axis) is the same
as moving the object, and the offset of the joint that carries the camera directly is the
same as a mounting error. The fit keeps a parameter only when it adds rank to the Jacobian
(columns normalised), and reports the others as not identifiable. The offsets come back as
an ``Estimate`` (``simgap.fit.estimate``: the one interval rule's Student-t intervals, the
reason for each joint it cannot separate, the RMS residual in metres).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.optimize import least_squares

from simgap.errors import InputError
from simgap.fit.estimate import Estimate, ParamEstimate
from simgap.fit.intervals import jacobian_intervals
from simgap.sim.kinematics import CameraOffset, Kinematics

RANK_TOL = 1e-5
"""Relative singular value below which a column adds no information."""

NO_RANK_REASON = (
    "its offset adds no rank to the sightings' Jacobian: from one static object it is the "
    "same as moving the object or the camera's mount (not fitted)"
)
"""Why a chain joint's offset is not identifiable from one static object."""


@dataclass(frozen=True)
class ZeroOffsetFit:
    """Estimated joint zero offsets.

    Attributes:
        estimate: each chain joint's offset [rad], with its 95 % interval or the reason it
            is not identifiable (value NaN: not fitted); the RMS camera-frame residual
            after the fit [m]; no noise floor (the sightings' noise is not stated).
        offset_rad: joint -> offset [rad] for the fitted joints (add to ``offset_rad``):
            the body figures' form of the estimate's values.
        ci95_rad: joint -> half-width of the 95% interval [rad] (the estimate's interval
            is the offset +- it), as the body figures state it.
        unidentifiable: chain joints whose offset this data cannot separate.
        object_world_m: fitted world position of the object [m], shape (3,).
        camera_mount: fitted mounting error of the camera (None when not fitted).
        residual_rms_before_m: RMS residual with no offsets and no mounting error [m].
        n_poses: number of poses used.
    """

    estimate: Estimate
    offset_rad: dict[str, float]
    ci95_rad: dict[str, float]
    unidentifiable: tuple[str, ...]
    object_world_m: np.ndarray
    camera_mount: CameraOffset | None
    residual_rms_before_m: float
    n_poses: int


class _Problem:
    def __init__(
        self,
        kin: Kinematics,
        q: np.ndarray,
        p_cam: np.ndarray,
        joints: Sequence[str],
        fit_mount: bool,
    ) -> None:
        self.kin, self.q, self.p_cam = kin, q, p_cam
        self.joints = list(joints)
        self.cols = [kin.joint_names.index(j) for j in self.joints]
        self.fit_mount = fit_mount

    def unpack(self, theta: np.ndarray) -> tuple[np.ndarray, CameraOffset | None, np.ndarray]:
        p = theta[:3]
        k = 3
        mount = None
        if self.fit_mount:
            mount = CameraOffset.from_vector(theta[3:9])
            k = 9
        return p, mount, theta[k:]

    def residual(self, theta: np.ndarray) -> np.ndarray:
        p, mount, delta = self.unpack(theta)
        out = np.empty_like(self.p_cam)
        for i in range(self.q.shape[0]):
            qi = self.q[i].copy()
            qi[self.cols] += delta
            out[i] = self.kin.to_camera(p, qi, mount)
        r: np.ndarray = (out - self.p_cam).reshape(-1)
        return r

    def jacobian(self, theta: np.ndarray, h: float = 1e-6) -> np.ndarray:
        r0 = self.residual(theta)
        jac = np.empty((r0.size, theta.size))
        for k in range(theta.size):
            t = theta.copy()
            t[k] += h
            jac[:, k] = (self.residual(t) - r0) / h
        return jac


def _adds_rank(jac: np.ndarray, keep: list[int], k: int) -> bool:
    cols = jac[:, keep + [k]]
    norms = np.linalg.norm(cols, axis=0)
    if norms[-1] < 1e-12:
        return False
    s = np.linalg.svd(cols / np.where(norms > 0, norms, 1.0), compute_uv=False)
    return bool(s[-1] / s[0] > RANK_TOL)


def fit_zero_offsets(
    kin: Kinematics,
    q: npt.ArrayLike,
    p_cam: npt.ArrayLike,
    *,
    joints: Sequence[str] | None = None,
    fit_mount: bool = True,
    source: str = "",
) -> ZeroOffsetFit:
    """Least-squares joint zero offsets from camera-frame sightings of one static object.

    Args:
        kin: kinematics of the rig's model and camera (joint order = the columns of ``q``).
        q: recorded joint angles [rad], shape (N, J).
        p_cam: the object in the camera frame [m], shape (N, 3).
        joints: candidate joints (default: every joint between the world and the camera).
        fit_mount: also fit the camera's mounting error (6 numbers).
        source: file named in errors.
    """
    qa = np.asarray(q, dtype=float)
    pa = np.asarray(p_cam, dtype=float)
    if qa.ndim != 2 or pa.shape != (qa.shape[0], 3):
        raise InputError(
            file=source,
            expected="q shape (N, J) and p_cam shape (N, 3)",
            got=f"{qa.shape} and {pa.shape}",
        )
    cand = list(joints) if joints is not None else kin.chain_joints()
    # initial object position: each sighting mapped to the world with the nominal model
    pw = []
    for i in range(qa.shape[0]):
        pos, rot = kin.camera_pose(qa[i])
        pw.append(pos + rot @ pa[i])
    p0 = np.mean(pw, axis=0)
    base = [0, 1, 2] + ([3, 4, 5, 6, 7, 8] if fit_mount else [])
    full = _Problem(kin, qa, pa, cand, fit_mount)
    theta0 = np.concatenate([p0, np.zeros(6 if fit_mount else 0), np.zeros(len(cand))])
    jac = full.jacobian(theta0)
    keep = list(range(3))
    for k in base[3:] + list(range(len(base), len(base) + len(cand))):
        if _adds_rank(jac, keep, k):
            keep.append(k)
    if fit_mount and not all(k in keep for k in base):
        fit_mount = False  # the poses cannot separate a mounting error: fit without it
        keep = [k for k in keep if k < 3 or k >= 9]
    joints_kept = [cand[k - len(base)] for k in keep if k >= len(base)]
    prob = _Problem(kin, qa, pa, joints_kept, fit_mount)
    n_par = 3 + (6 if fit_mount else 0) + len(joints_kept)
    if qa.shape[0] * 3 <= n_par:
        raise InputError(
            file=source,
            expected=f"more than {n_par // 3 + 1} poses",
            got=f"{qa.shape[0]} poses",
            fix="record the object from more poses",
        )
    th0 = np.concatenate([p0, np.zeros(n_par - 3)])
    before = float(np.sqrt(np.mean(prob.residual(th0) ** 2)))
    sol = least_squares(
        prob.residual, th0, jac=lambda t: prob.jacobian(t), method="lm", xtol=1e-12, ftol=1e-12
    )
    r = sol.fun
    iv = jacobian_intervals(prob.jacobian(sol.x), r)
    half = iv.half_width
    p, mount, delta = prob.unpack(sol.x)
    k0 = n_par - len(joints_kept)
    unidentifiable = tuple(j for j in cand if j not in joints_kept)
    fitted = Estimate.from_intervals(
        joints_kept,
        ["rad"] * len(joints_kept),
        delta,
        iv,
        index=range(k0, n_par),
        residual=float(np.sqrt(np.mean(r**2))),
        residual_unit="m",
        evaluations=int(sol.nfev),
    )
    estimate = Estimate(
        fitted.params
        + tuple(
            ParamEstimate(j, "rad", float("nan"), None, NO_RANK_REASON) for j in unidentifiable
        ),
        fitted.residual,
        "m",
        evaluations=fitted.evaluations,
    )
    return ZeroOffsetFit(
        estimate=estimate,
        offset_rad={j: float(d) for j, d in zip(joints_kept, delta, strict=True)},
        ci95_rad={j: float(half[k0 + i]) for i, j in enumerate(joints_kept)},
        unidentifiable=unidentifiable,
        object_world_m=np.asarray(p),
        camera_mount=mount,
        residual_rms_before_m=before,
        n_poses=int(qa.shape[0]),
    )
