"""Compare real frames with renders at the same joint angles, region by region.

This is the appearance analysis end to end, on values: frames in, figures and flags out.
Steps: pick the frames to compare (every recording and pose label represented); estimate the
camera's offset from the gripper; render each frame at its joint angles with that offset; at
the policy resolution, compare regions (jaws, object, background) on pure pixels; raise the
flags; measure the reach of view from the start pose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from simgap.appearance.camera_pose import CameraPoseFit, estimate_camera_offset, jitter_px
from simgap.appearance.flags import (
    Flag,
    background_flag,
    bright_fraction,
    drift_flag,
    mismatch_flag,
    rest_pose_flag,
)
from simgap.appearance.regions import RegionStats, compare_regions, pure_masks
from simgap.sim.kinematics import CameraOffset
from simgap.sim.render import SceneRenderer
from simgap.sim.resample import resize_bilinear
from simgap.values.frames import FrameSet


@dataclass(frozen=True)
class FrameComparison:
    """One real frame against its render.

    Attributes:
        index: the frame's index in the frame set.
        recording: its recording name.
        pose_label: ``rest``, ``start`` or ``""``.
        regions: region -> stats at policy resolution.
        background_level: median over pure background pixels of the brightest channel.
        bright_fraction: fraction of the real policy image brighter than 128.
        real: real frame at policy resolution (h, w, 3), float 0..255.
        sim: simulated frame at policy resolution.
        spread: standard deviation of the real frame's brightness at render resolution
            (0..255): near 0, the frame shows no scene (``FLAT_SPREAD``).
    """

    index: int
    recording: str
    pose_label: str
    regions: Mapping[str, RegionStats]
    background_level: float
    bright_fraction: float
    real: np.ndarray
    sim: np.ndarray
    spread: float = float("nan")


FLAT_SPREAD = 2.0
"""A real frame whose brightness varies less than this (standard deviation, 0..255) shows no
scene: flat grey, black or white, as a covered, disconnected or unexposed camera gives.
Nothing about the scene (a gain, a background level, a pose shift) is measured on it."""


@dataclass(frozen=True)
class AppearanceResult:
    """What the appearance analysis found.

    Attributes:
        comparisons: one per compared frame.
        camera: the camera-offset fit (None when no frame shows the gripper).
        jitter_px: training's camera wobble [policy px] (None when the rig names none).
        flags: every flag, raised or not.
    """

    comparisons: tuple[FrameComparison, ...]
    camera: CameraPoseFit | None
    jitter_px: float | None
    flags: tuple[Flag, ...]

    @property
    def flat(self) -> bool:
        """Whether every compared real frame is flat (``FLAT_SPREAD``): no scene to measure."""
        return bool(self.comparisons) and all(
            np.isfinite(c.spread) and c.spread < FLAT_SPREAD for c in self.comparisons
        )

    @property
    def largest_spread(self) -> float | None:
        """The largest brightness spread of a compared real frame (0..255)."""
        s = [c.spread for c in self.comparisons if np.isfinite(c.spread)]
        return float(max(s)) if s else None

    def flag(self, name: str) -> Flag:
        """The flag called ``name``."""
        return next(f for f in self.flags if f.name == name)

    def gains(self, region: str = "jaws") -> np.ndarray:
        """Per-compared-frame real/sim brightness ratio of a region (NaN when undefined)."""
        return np.array(
            [
                np.nan if c.regions[region].gain is None else c.regions[region].gain
                for c in self.comparisons
            ],
            dtype=float,
        )


def select_frames(fs: FrameSet, max_frames: int) -> list[int]:
    """Up to ``max_frames`` frame indices, round-robin over (recording, pose label) groups."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i in range(fs.n_frames):
        groups.setdefault((fs.recording[i], fs.pose_label[i]), []).append(i)
    out: list[int] = []
    k = 0
    while len(out) < min(max_frames, fs.n_frames):
        for idx in groups.values():
            if k < len(idx) and len(out) < max_frames:
                out.append(idx[k])
        k += 1
    return sorted(out)


def _median(values: Sequence[float | None]) -> float | None:
    v = [x for x in values if x is not None and np.isfinite(x)]
    return float(np.median(v)) if v else None


def analyse(
    renderer: SceneRenderer,
    fs: FrameSet,
    groups: Mapping[str, Sequence[int]],
    *,
    training_background_max: float | None = None,
    jitter: Mapping[str, float | None] | None = None,
    max_frames: int = 12,
    camera_frames: int = 2,
    fit_camera: bool = True,
) -> AppearanceResult:
    """Compare a frame set with renders and raise the appearance flags.

    Args:
        renderer: renders the rig's camera at render resolution = the frames' size.
        fs: the real frames with their joint angles.
        groups: region -> geom ids (``sim.render.region_ids``).
        training_background_max: brightest background training showed (0..255); None
            when the rig does not say (the background flag is then not measured).
        jitter: ``{"px", "m", "deg"}``: training's camera wobble (any may be None).
        max_frames: frames compared at most.
        camera_frames: frames used for the camera-offset search.
        fit_camera: estimate the camera offset (else assume the modelled camera).
    """
    size = renderer.policy_resolution
    chosen = select_frames(fs, max_frames)
    imgs, q = fs.frames.images, fs.frames.q
    cam: CameraPoseFit | None = None
    offset: CameraOffset | None = None
    structured = [i for i in chosen if _spread(imgs[i]) >= FLAT_SPREAD]
    if fit_camera and structured:  # a pose shift is not measurable on a frame with no scene
        order = sorted(structured, key=lambda i: {"start": 0, "": 1, "rest": 2}[fs.pose_label[i]])
        use = []
        for i in order:
            seg = renderer.render(q[i]).seg
            if np.isin(seg, list(groups["jaws"])).sum() > 0:
                use.append(i)
            if len(use) >= camera_frames:
                break
        if use:
            cam = estimate_camera_offset(
                renderer, [q[i] for i in use], [imgs[i] for i in use], groups["jaws"]
            )
            offset = cam.offset
    comps = []
    for i in chosen:
        full = renderer.render(q[i], camera_offset=offset)
        sim = resize_bilinear(full.rgb, size)
        real = resize_bilinear(imgs[i], size)
        masks = pure_masks(full.seg, groups, renderer.n_geoms, size, str(renderer.source))
        stats = compare_regions(real, sim, masks)
        bg = masks["background"]
        level = float(np.median(real[bg].max(axis=1))) if bg.any() else float("nan")
        comps.append(
            FrameComparison(
                i,
                fs.recording[i],
                fs.pose_label[i],
                stats,
                level,
                bright_fraction(real),
                real,
                sim,
                _spread(imgs[i]),
            )
        )
    jit = dict(jitter or {})
    jpx = jitter_px(
        size[0],
        renderer.kin.fovy_deg,
        cam.depth_m if cam else float("nan"),
        jitter_px=jit.get("px"),
        jitter_m=jit.get("m"),
        jitter_deg=jit.get("deg"),
    )
    flags = _flags(comps, training_background_max)
    return AppearanceResult(tuple(comps), cam, jpx, tuple(flags))


def _spread(image: np.ndarray) -> float:
    """Standard deviation of an image's brightness (0..255)."""
    from simgap.appearance.regions import luma

    return float(np.std(luma(image)))


def _flags(comps: Sequence[FrameComparison], training_max: float | None) -> list[Flag]:
    not_rest = [c for c in comps if c.pose_label != "rest"]
    rest = [c for c in comps if c.pose_label == "rest"]
    start = [c for c in comps if c.pose_label == "start"]
    use = not_rest or list(comps)
    flags = [background_flag([c.background_level for c in use], training_max)]
    by_rec: dict[str, list[float | None]] = {}
    for c in use:
        by_rec.setdefault(c.recording, []).append(c.regions["jaws"].gain)
    rec_gain = {r: _median(v) for r, v in by_rec.items()}
    worst = max(
        (g for g in rec_gain.values() if g is not None), key=lambda g: abs(g - 1.0), default=None
    )
    clipped = [c.regions["jaws"].clipped_fraction for c in use if c.regions["jaws"].n_pixels]
    mm = mismatch_flag(
        worst,
        "jaws",
        by_recording=rec_gain,
        clipped_fraction=float(np.median(clipped)) if clipped else 0.0,
    )
    mm.values["gain_by_recording"] = rec_gain
    flags.append(mm)
    flags.append(
        drift_flag(
            [np.nan if c.regions["jaws"].gain is None else c.regions["jaws"].gain for c in use],
            [c.bright_fraction for c in use],
            [c.recording for c in use],
        )
    )
    g_rest = _median([c.regions["jaws"].gain for c in rest])
    g_start = _median([c.regions["jaws"].gain for c in start])
    if rest and start:  # compare within one recording when possible
        common = {c.recording for c in rest} & {c.recording for c in start}
        if common:
            r0 = sorted(common)[0]
            g_rest = _median([c.regions["jaws"].gain for c in rest if c.recording == r0])
            g_start = _median([c.regions["jaws"].gain for c in start if c.recording == r0])
    flags.append(rest_pose_flag(g_rest, g_start, bool(rest), bool(start)))
    return flags
