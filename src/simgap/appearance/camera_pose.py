"""Where the real camera sits against the modelled one, from the robot's own body.

The gripper moves rigidly with a wrist camera, so its place in the image depends on the
camera's mounting and not on the joint angles: aligning it separates a camera offset from a
joint zero offset. We render the scene at the recorded joint angles under candidate camera
poses, and keep
the one whose image best matches the real frame over the pixels around the gripper, scored by
normalised cross-correlation (insensitive to exposure gain and to a lifted black). The
search scores renders at render resolution, box-blurred over half a policy pixel, because the
policy's own aliased 2-of-6 sampling makes the score too rugged to search; the result is
reported at the policy resolution. Candidates rotate the camera about its three axes and
shift it along x and y (near parts of the gripper move more than far ones under a shift); the
search is a coarse-to-fine compass search.

The offset is reported as the mean displacement, at the policy resolution, of the gripper's
geom centres between the modelled camera and the best candidate, and as a ratio to the
largest camera wobble training used (``camera.training_jitter_*`` in the rig).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from simgap.errors import InputError
from simgap.sim.kinematics import CameraOffset
from simgap.sim.render import SceneRenderer


@dataclass(frozen=True)
class CameraPoseFit:
    """The best-matching camera offset.

    Attributes:
        offset: the fitted camera rotation (camera frame).
        shift_px: mean displacement of the gripper (dx right, dy down) [policy px], (2,).
        shift_norm_px: its length [policy px].
        score_nominal: matching score of the modelled camera (mean NCC, -1..1).
        score_best: matching score of the best candidate.
        n_renders: renders the search used.
        depth_m: median depth of the gripper's geom centres [m] (for jitter in metres).
        shift_bracket_px: (lo, hi) of ``shift_norm_px`` [policy px] over the best offset
            and its neighbours one last search step away (``min_step_deg``): the search's
            resolution, not a confidence interval (the match score has no noise model; on
            the demo bench the planted 1.24 px came out 1.03 px).
    """

    offset: CameraOffset
    shift_px: tuple[float, float]
    shift_norm_px: float
    score_nominal: float
    score_best: float
    n_renders: int
    depth_m: float
    shift_bracket_px: tuple[float, float] | None = None


def _dilate(mask: np.ndarray, r: int) -> np.ndarray:
    out = mask.copy()
    for _ in range(r):
        m = out.copy()
        m[1:] |= out[:-1]
        m[:-1] |= out[1:]
        m[:, 1:] |= out[:, :-1]
        m[:, :-1] |= out[:, 1:]
        out = m
    return out


def _box_blur(img: np.ndarray, width: int) -> np.ndarray:
    """Mean over a ``width`` x ``width`` box (edges clamped), same shape."""
    if width <= 1:
        return img
    r = width // 2
    pad = np.pad(img, ((r, r), (r, r)) + ((0, 0),) * (img.ndim - 2), mode="edge")
    c = pad.cumsum(axis=0).cumsum(axis=1)
    c = np.pad(c, ((1, 0), (1, 0)) + ((0, 0),) * (img.ndim - 2))
    h, w = img.shape[:2]
    out: np.ndarray = (
        c[width : width + h, width : width + w]
        - c[:h, width : width + w]
        - c[width : width + h, :w]
        + c[:h, :w]
    ) / (width * width)
    return out


def _ncc(a: np.ndarray, b: np.ndarray) -> float:
    """Mean over channels of the normalised cross-correlation of two pixel lists (n, 3)."""
    vals = []
    for c in range(a.shape[1]):
        x = a[:, c] - a[:, c].mean()
        y = b[:, c] - b[:, c].mean()
        den = float(np.sqrt((x @ x) * (y @ y)))
        vals.append(float(x @ y) / den if den > 1e-9 else 0.0)
    return float(np.mean(vals))


def body_shift_px(
    renderer: SceneRenderer, q: npt.ArrayLike, body_ids: Sequence[int], offset: CameraOffset
) -> tuple[np.ndarray, float]:
    """Mean image displacement [policy px] of the body's geom centres under ``offset``.

    Returns:
        (dx, dy) and the median depth [m] of the centres in view.
    """
    kin = renderer.kin
    size = renderer.policy_resolution
    kin.set_q(q)
    pts = kin.geom_positions(body_ids)
    p0 = kin.to_camera(pts, q)
    p1 = kin.to_camera(pts, q, offset)
    uv0 = kin.project(p0, size)
    uv1 = kin.project(p1, size)
    inview = (
        (p0[:, 2] < -1e-3)
        & (uv0[:, 0] >= 0)
        & (uv0[:, 0] <= size[1])
        & (uv0[:, 1] >= 0)
        & (uv0[:, 1] <= size[0])
    )
    if not inview.any():
        inview = p0[:, 2] < -1e-3
    if not inview.any():
        return np.zeros(2), float("nan")
    d = (uv1 - uv0)[inview].mean(axis=0)
    return d, float(np.median(-p0[inview, 2]))


def estimate_camera_offset(
    renderer: SceneRenderer,
    q: Sequence[npt.ArrayLike],
    real: Sequence[npt.ArrayLike],
    body_ids: Sequence[int],
    *,
    step_deg: float = 2.0,
    min_step_deg: float = 0.5,
    max_deg: float = 20.0,
    margin_px: int = 1,
    shift_mm_per_deg: float = 1.0,
) -> CameraPoseFit:
    """Align renders of the gripper with real frames over candidate camera rotations.

    Args:
        renderer: renders the rig's camera.
        q: joint angles [rad] of each frame, each shape (J,).
        real: the real frames at render resolution, each (H, W, 3) uint8.
        body_ids: geom ids of the robot's own body in view (the gripper).
        step_deg: first search step [deg]; halved until ``min_step_deg``.
        max_deg: the search does not go further than this from the modelled camera [deg]
            (and ``max_deg * shift_mm_per_deg`` [mm] in position).
        shift_mm_per_deg: position step [mm] searched per degree of rotation step.
        margin_px: pixels [policy px] around the gripper also compared.
    """
    if len(q) != len(real) or not q:
        raise InputError(
            field="frames",
            expected="one joint-angle row per frame (at least 1)",
            got=f"{len(real)} frames, {len(q)} rows",
        )
    size = renderer.policy_resolution
    ratio = max(1, round(renderer.resolution[0] / size[0]))
    width = max(1, ratio // 2) | 1
    real_p = [_box_blur(np.asarray(r, dtype=float), width) for r in real]
    pixel_sets = []
    for qi in q:
        seg = renderer.render(qi).seg
        pixel_sets.append(_dilate(np.isin(seg, list(body_ids)), margin_px * ratio))
    if not any(s.any() for s in pixel_sets):
        raise InputError(
            field="camera",
            expected="the gripper in view of the camera",
            got="no gripper pixel in the rendered frames",
            fix="use frames where the camera sees the gripper (the start pose)",
        )
    cache: dict[tuple[float, ...], float] = {}

    def offset_of(x: Sequence[float]) -> CameraOffset:
        return CameraOffset(
            pos_m=(x[3] * 1e-3, x[4] * 1e-3, 0.0),
            rot_rad=(float(np.deg2rad(x[0])), float(np.deg2rad(x[1])), float(np.deg2rad(x[2]))),
        )

    def score(x: Sequence[float]) -> float:
        key = tuple(round(v, 9) for v in x)
        if key not in cache:
            off = offset_of(x)
            vals = []
            for qi, rp, sel in zip(q, real_p, pixel_sets, strict=True):
                if not sel.any():
                    continue
                sim = _box_blur(
                    renderer.render(qi, camera_offset=off, segmentation=False).rgb.astype(float),
                    width,
                )
                vals.append(_ncc(sim[sel], rp[sel]))
            cache[key] = float(np.mean(vals))
        return cache[key]

    # compass search over (rot x, rot y, rot z [deg], shift x, shift y [mm])
    best = [0.0] * 5
    best_s = nominal = score(best)
    scale = np.array([1.0, 1.0, 1.0, shift_mm_per_deg, shift_mm_per_deg])
    limit = np.array([max_deg] * 3 + [max_deg * shift_mm_per_deg] * 2)
    step = step_deg
    while step >= min_step_deg - 1e-12:
        moved = False
        for k in range(5):
            for sign in (1.0, -1.0):
                cand = list(best)
                cand[k] += sign * step * scale[k]
                if abs(cand[k]) > limit[k]:
                    continue
                s = score(cand)
                if s > best_s + 1e-9:
                    best, best_s, moved = cand, s, True
                    break
        if not moved:
            step /= 2.0
    off = offset_of(best)
    d, depths = _mean_shift(renderer, q, body_ids, off)
    norm = float(np.hypot(d[0], d[1]))
    return CameraPoseFit(
        offset=off,
        shift_px=(float(d[0]), float(d[1])),
        shift_norm_px=norm,
        score_nominal=nominal,
        score_best=best_s,
        n_renders=len(cache) * len(q) + len(q),
        depth_m=_median_depth(depths),
        shift_bracket_px=_bracket(
            best,
            norm,
            min_step_deg,
            scale,
            lambda x: float(np.hypot(*_mean_shift(renderer, q, body_ids, offset_of(x))[0])),
        ),
    )


def _mean_shift(
    renderer: SceneRenderer, q: Sequence[npt.ArrayLike], body_ids: Sequence[int], off: CameraOffset
) -> tuple[np.ndarray, list[float]]:
    """The gripper's mean displacement over the frames under ``off`` [policy px], (2,),
    and each frame's median depth [m] (``body_shift_px``)."""
    per = [body_shift_px(renderer, qi, body_ids, off) for qi in q]
    return np.mean([d for d, _ in per], axis=0), [z for _, z in per]


def _median_depth(depths: Sequence[float]) -> float:
    """The median of the frames' gripper depths [m] that were measured, NaN when none was
    (no geom centre in front of the camera): never numpy's all-NaN warning."""
    d = [z for z in depths if np.isfinite(z)]
    return float(np.median(d)) if d else float("nan")


def _bracket(
    best: Sequence[float],
    best_norm: float,
    step: float,
    scale: np.ndarray,
    shift_of: Callable[[Sequence[float]], float],
) -> tuple[float, float]:
    """The shift lengths of ``best`` and its ten neighbours one ``step`` away (geometry
    only, no rendering): the search's resolution [policy px]."""
    norms = [best_norm]
    for k in range(len(best)):
        for sign in (1.0, -1.0):
            cand = list(best)
            cand[k] += sign * step * float(scale[k])
            norms.append(shift_of(cand))
    return float(min(norms)), float(max(norms))


def jitter_px(
    policy_height: int,
    fovy_deg: float,
    depth_m: float,
    *,
    jitter_px: float | None = None,
    jitter_m: float | None = None,
    jitter_deg: float | None = None,
) -> float | None:
    """Training's largest camera wobble in policy pixels.

    ``jitter_px`` is taken as is. Otherwise a rotation jitter moves the image by
    ``f * tan(deg)`` and a position jitter by ``f * m / depth`` (at the gripper's depth),
    with ``f`` the focal length in policy pixels; when both are given they add (the worst
    case). None when the rig names no jitter.
    """
    if jitter_px is not None:
        return float(jitter_px)
    if jitter_m is None and jitter_deg is None:
        return None
    f = policy_height / 2.0 / np.tan(np.deg2rad(fovy_deg) / 2.0)
    total = 0.0
    if jitter_deg is not None:
        total += f * np.tan(np.deg2rad(jitter_deg))
    if jitter_m is not None and np.isfinite(depth_m) and depth_m > 0:
        total += f * jitter_m / depth_m
    return float(total)
