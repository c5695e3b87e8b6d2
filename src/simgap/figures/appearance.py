"""The appearance branch's figures: exposure and background, the camera's pose, and the reach
of view from the start pose. Brightness levels are 8-bit pixel values (0..255), written as
unitless; gains are real / rendered brightness (1 = match)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, JSONValue, Record, figure, finite, sig

_Pair = tuple[float, float]


@dataclass(frozen=True)
class Region(Record):
    """One region (jaws, object, background) over the compared frames."""

    real_rgb: tuple[float | None, ...] | None = figure(
        UNITLESS, "mean real colour, 0..255 per channel (null: no pixel)", default=None
    )
    sim_rgb: tuple[float | None, ...] | None = figure(
        UNITLESS, "mean rendered colour, 0..255 per channel (null: no pixel)", default=None
    )
    pixels: int = figure(UNITLESS, "the region's pixels over the frames", default=0)
    measured: bool = figure(TEXT, "the region had pixels", default=False)
    note: str | None = figure(TEXT, "why it was not measured", default=None)


@dataclass(frozen=True)
class ExposureFigures(Record):
    """Real against rendered brightness per region, the background's level, exposure drift
    and the rest-pose match."""

    branch = "appearance"
    kind = "exposure"

    jaw_gain: float | None = figure(UNITLESS, "median real / rendered jaw brightness", default=None)
    jaw_gain_interval: _Pair | None = figure(
        UNITLESS, "the median's distribution-free interval over the frames", default=None
    )
    jaw_gain_interval_coverage: float | None = figure(
        UNITLESS, "that interval's coverage", default=None
    )
    jaw_gain_by_recording: Mapping[str, float | None] = figure(
        UNITLESS, "the jaw gain per recording", default_factory=dict
    )
    jaw_gain_worst_recording: float | None = figure(
        UNITLESS,
        "the recording furthest from a match (what the exposure flag holds against 1)",
        default=None,
    )
    jaw_clipped_fraction: float | None = figure(
        UNITLESS, "share of jaw pixels clipped at 255", default=None
    )
    jaw_gain_is_lower_bound: bool = figure(
        TEXT, "clipping makes the gain a lower bound", default=False
    )
    object_gain: float | None = figure(
        UNITLESS, "median real / rendered object brightness", default=None
    )
    background_level: float | None = figure(
        UNITLESS, "the real background's level (0..255)", default=None
    )
    training_background_max: float | None = figure(
        UNITLESS, "the brightest background training showed (0..255)", default=None
    )
    exposure_drift_spread_fraction: float | None = figure(
        UNITLESS, "spread of the jaw gain over frames, over its median", default=None
    )
    exposure_between_recordings_fraction: float | None = figure(
        UNITLESS, "relative change of the jaw gain between recordings", default=None
    )
    gain_vs_bright_r: float | None = figure(
        UNITLESS, "correlation of the jaw gain with the scene's brightness", default=None
    )
    rest_pose_gain: float | None = figure(UNITLESS, "jaw gain at the rest pose", default=None)
    start_pose_gain: float | None = figure(UNITLESS, "jaw gain at the start pose", default=None)
    regions: Mapping[str, Region] = figure(TEXT, "each region's mean colours", default_factory=dict)
    flags: Mapping[str, bool] = figure(
        TEXT, "each exposure check, raised or not", default_factory=dict
    )
    n_frames: int | None = figure(UNITLESS, "frames compared", default=None)
    real_brightness_spread: float | None = figure(
        UNITLESS,
        "the largest brightness spread in a real frame (0..255; flat: no scene)",
        default=None,
    )
    provenance: Mapping[str, str] = figure(
        TEXT, "where each value held against came from", default_factory=dict
    )

    def headline(self) -> Headline | None:
        """The jaws' real / rendered brightness per recording, against 1 (a match)."""
        if not self.jaw_gain_by_recording:
            return None
        gains = ", ".join(
            f"{k} {sig(v)}"
            for k, v in self.jaw_gain_by_recording.items()
            if v is not None and not math.isnan(v)
        )
        return Headline(
            f"real jaws / rendered jaws brightness per recording: {gains} (1 = match)",
            finite(self.jaw_gain),
            1.0,
        )


@dataclass(frozen=True)
class Images(Record):
    """One compared frame: real, rendered at the same joint angles, and their difference."""

    real: JSONValue = figure(TEXT, "the real frame, rows of RGB pixels (0..255)", default=None)
    sim: JSONValue = figure(TEXT, "the render, rows of RGB pixels (0..255)", default=None)
    diff: JSONValue = figure(TEXT, "the difference, grey 128 = equal", default=None)
    frame: int | None = figure(UNITLESS, "the frame's index", default=None)
    recording: str | None = figure(TEXT, "its recording", default=None)
    pose_label: str | None = figure(TEXT, "'rest', 'start' or ''", default=None)


@dataclass(frozen=True)
class ExposureDetails(Record):
    """What the appearance report plots: one frame's images and the jaw gain per frame."""

    branch = "appearance"
    kind = "exposure"

    images: Images | None = figure(TEXT, "the start-pose frame (else the first)", default=None)
    jaw_gain_per_frame: tuple[float, ...] = figure(
        UNITLESS, "the jaw gain of each frame", default=()
    )
    flag_messages: Mapping[str, str] = figure(
        TEXT, "each exposure check's sentence", default_factory=dict
    )


@dataclass(frozen=True)
class CameraFigures(Record):
    """The real camera's offset from the modelled camera, in policy pixels and against
    training's camera jitter."""

    branch = "appearance"
    kind = "camera"

    camera_offset_px: float | None = figure(
        "px",
        "where the real camera sees the gripper, from the model's (the figure of record)",
        default=None,
    )
    camera_offset_resolution_px: _Pair | None = figure(
        "px", "one search step either way (the search's resolution, not an interval)", default=None
    )
    camera_offset_dx_px: float | None = figure("px", "the offset's horizontal part", default=None)
    camera_offset_dy_px: float | None = figure("px", "the offset's vertical part", default=None)
    training_jitter_px: float | None = figure(
        "px", "training's largest camera jitter", default=None
    )
    camera_offset_ratio_to_jitter: float | None = figure(
        UNITLESS, "offset over that jitter", default=None
    )
    camera_rotation_deg: tuple[float, ...] | None = figure(
        "deg",
        "the fitted mount rotation about the camera's x, y, z (a direction only)",
        default=None,
    )
    match_score_modelled: float | None = figure(
        UNITLESS, "match score (mean NCC, -1..1) of the modelled camera", default=None
    )
    match_score_best: float | None = figure(
        UNITLESS, "the best candidate's match score", default=None
    )
    match_score_min: float | None = figure(
        UNITLESS, "the best score a shift is measured from", default=None
    )
    renders: int | None = figure(UNITLESS, "candidate poses rendered", default=None)
    real_brightness_spread: float | None = figure(
        UNITLESS,
        "the largest brightness spread in a real frame (0..255; flat: no scene)",
        default=None,
    )
    provenance: Mapping[str, str] = figure(
        TEXT, "where each jitter value came from", default_factory=dict
    )

    def headline(self) -> Headline | None:
        """The camera view's shift against training's jitter."""
        off, jitter = finite(self.camera_offset_px), finite(self.training_jitter_px)
        if off is None:
            return None
        thr = f" against training's jitter {sig(jitter)} px" if jitter is not None else ""
        return Headline(f"camera view shifted {sig(off)} px{thr}", off, jitter)


@dataclass(frozen=True)
class ReachFigures(Record):
    """How far from the base axis the camera sees the object from the start pose, and the
    evaluation's initial states against training's workspace."""

    branch = "appearance"
    kind = "reach_of_view"

    reach_of_view_m: float = figure(
        "m",
        "farthest distance from the base axis where the object is seen (null: nowhere)",
        default=math.nan,
    )
    nearest_visible_m: float = figure("m", "nearest distance where it is seen", default=math.nan)
    grid_distances_m: tuple[float, ...] = figure(
        "m", "the grid's distances from the axis", default=()
    )
    grid_seen: tuple[tuple[bool, ...], ...] = figure(
        TEXT, "per distance, whether the object is seen at each grid point", default=()
    )
    initial_states: int | None = figure(UNITLESS, "evaluation initial states", default=None)
    initial_states_outside: int | None = figure(
        UNITLESS, "initial states outside training's workspace", default=None
    )
    initial_states_outside_fraction: float | None = figure(UNITLESS, "their share", default=None)
