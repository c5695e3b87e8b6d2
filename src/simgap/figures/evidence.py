"""The evidence gate's figures: the recording's time base, its excitation, the command as it
reached the servo, and the figures of a branch the gate kept from running."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Record, figure


@dataclass(frozen=True)
class TimeBaseFigures(Record):
    """Whether the dataset's stamps are the times its motion happened at (fastest joint step
    against the servo's speed limit, stale frames, gaps, float32 resolution)."""

    branch = "evidence"
    kind = "time_base"

    refused: bool = figure(TEXT, "the time base is refused: nothing reads its stamps as time")
    labelled_fps: float = figure("Hz", "the rate the dataset is labelled with")
    labelled_period_s: float = figure("s", "the labelled period 1 / fps")
    episodes: int = figure(UNITLESS, "episodes checked")
    frames: int = figure(UNITLESS, "frames checked, over every episode")
    peak_speed_rad_s: float = figure("rad/s", "the fastest body-joint step at the labelled rate")
    peak_speed_joint: str = figure(TEXT, "the joint of that step")
    peak_speed_episode: int = figure(UNITLESS, "the episode of that step")
    peak_speed_frame: int = figure(UNITLESS, "the frame that step ends on")
    speed_limit_rad_s: float = figure("rad/s", "the servo's speed limit the step is held against")
    speed_limit_from: str = figure(TEXT, "where the speed limit comes from")
    speed_margin: float = figure(UNITLESS, "peak / limit above which the time base is refused")
    peak_to_limit_ratio: float = figure(UNITLESS, "the fastest step over the speed limit")
    impossible_frames: int = figure(UNITLESS, "frames a body joint moved faster than possible")
    detectable_slowdown_ratio: float = figure(
        UNITLESS, "how many times slower than its label the loop must run to show"
    )
    min_real_period_s: float = figure("s", "the shortest period the fastest step allows")
    peak_speed_per_joint_rad_s: Mapping[str, float] = figure("rad/s", "each joint's fastest step")
    peak_command_speed_per_joint_rad_s: Mapping[str, float | None] = figure(
        "rad/s", "each joint's fastest commanded step (None: no commands)"
    )
    stale_fraction: float = figure(UNITLESS, "share of mid-motion frames repeating the last")
    stale_frames: int = figure(UNITLESS, "mid-motion frames repeating the previous reading")
    moving_frames: int = figure(UNITLESS, "mid-motion frames")
    gaps: int = figure(UNITLESS, "steps longer than a few periods")
    largest_step_s: float = figure("s", "the longest step between stamps")
    stamp_resolution_s: float = figure("s", "float32 spacing at the longest episode's end")
    stamp_resolution_fraction: float = figure(UNITLESS, "that spacing over the period")
    longest_episode_s: float = figure("s", "the longest episode's last stamp")
    provenance: Mapping[str, str] = figure(
        TEXT, "rig key -> given, guessed or default", default_factory=dict
    )


@dataclass(frozen=True)
class TimeBaseDetails(Record):
    """Why the time base was refused."""

    branch = "evidence"
    kind = "time_base"

    reasons: tuple[str, ...] = figure(TEXT, "each reason the stamps are refused", default=())


@dataclass(frozen=True)
class JointExcitation(Record):
    """One fitted joint's commands: how far, how fast, how often they turned, how wide."""

    span_counts: float = figure(UNITLESS, "the command's peak-to-peak span [encoder counts]")
    rms_speed_rad_s: float = figure("rad/s", "RMS of the commanded speed")
    reversals: int = figure(UNITLESS, "reversals of the commanded direction")
    band_hz: float = figure("Hz", "frequency below which 95 % of the command's power lies")
    excited: bool = figure(TEXT, "the joint moved enough to be fitted")
    unseen: Mapping[str, str] = figure(
        TEXT, "parameter (or delay, all) -> why the commands cannot show it", default_factory=dict
    )


@dataclass(frozen=True)
class ExcitationFigures(Record):
    """Whether the recording can answer the joint fit: seconds to fit and to prove on, and
    each joint's excitation against the thresholds."""

    branch = "evidence"
    kind = "excitation"

    fitted_s: float = figure("s", "seconds of motion the fit replays")
    proof_s: float = figure("s", "seconds the fit never saw that a patch is proven on")
    fitted_episodes: int = figure(UNITLESS, "episodes fitted")
    fitted_frames: int = figure(UNITLESS, "frames fitted")
    min_fit_s: float = figure("s", "seconds a joint finding needs to implicate")
    min_proof_s: float = figure("s", "seconds of proof a joint finding needs")
    thin: str = figure(TEXT, "why the data are too little ('' when enough)")
    min_span_counts: float = figure(UNITLESS, "span a joint must cover [encoder counts]")
    min_reversals: int = figure(UNITLESS, "reversals a joint must make")
    min_band_hz: float = figure("Hz", "band a joint's commands must reach")
    joints: Mapping[str, JointExcitation] = figure(TEXT, "each fitted joint", default_factory=dict)


@dataclass(frozen=True)
class ClipJoint(Record):
    """One joint of the clip search (bounds in the joint's recorded unit)."""

    unit: str = figure(TEXT, "the joint's recorded unit (the bounds')")
    bound: float | None = figure(
        UNITLESS, "the bound the replay prefers [recorded unit], None where no clip shows"
    )
    piled_bound: float | None = figure(
        UNITLESS, "the bound the recorded gap piles up at [recorded unit]"
    )
    replay_rms_unclipped_rad: float = figure("rad", "replay RMS of the action as recorded")
    replay_rms_clipped_rad: float = figure("rad", "replay RMS with the action clipped")
    clipped_fraction: float = figure(UNITLESS, "share of goals the bound changes")
    best_bound: float = figure(UNITLESS, "the grid's best bound [recorded unit]")


@dataclass(frozen=True)
class ClipSearchFigures(Record):
    """The search for a clip of the goal against the present position."""

    joints: Mapping[str, ClipJoint] = figure(TEXT, "each joint")
    replayed_s: float = figure("s", "seconds replayed in all")
    min_gain_fraction: float = figure(UNITLESS, "replay RMS a clip must remove to show")
    min_clipped_fraction: float = figure(UNITLESS, "share of goals a clip must change")
    bound_grid: tuple[float, ...] = figure(UNITLESS, "the bounds tried [recorded unit]", default=())
    delay_grid_s: tuple[float, ...] = figure("s", "the delays tried", default=())


@dataclass(frozen=True)
class Disagreement(Record):
    """A joint whose data prefer another bound than the rig states."""

    found: float = figure(UNITLESS, "the bound the data prefer [recorded unit]")
    stated: float = figure(UNITLESS, "the rig's bound [recorded unit]")


@dataclass(frozen=True)
class CommandShapingFigures(Record):
    """What reached the servo: a clip of the goal the rig does not state, or how much of the
    replay's residual the stated shaping explains."""

    branch = "evidence"
    kind = "command_shaping"

    clip_search: ClipSearchFigures = figure(TEXT, "the clip search")
    provenance: Mapping[str, str] = figure(
        TEXT, "rig key -> given, guessed or default", default_factory=dict
    )
    stated_max_relative_target: tuple[float, ...] | None = figure(
        UNITLESS, "the rig's max_relative_target per joint [recorded unit]", default=None
    )
    stated_goal_speed_rad_s: float | None = figure("rad/s", "the rig's goal speed", default=None)
    best_clip_gain_fraction: float = figure(
        UNITLESS,
        "the most replay RMS a clip removes from a joint (rig states none)",
        default=math.nan,
    )
    bound_found: Mapping[str, float] = figure(
        UNITLESS, "joint -> the clip found [recorded unit]", default_factory=dict
    )
    rig_line: str = figure(TEXT, "the [deploy] line to set", default="")
    replay_rms_unshaped_rad: Mapping[str, float] = figure(
        "rad", "joint -> replay RMS of the action as recorded", default_factory=dict
    )
    replay_rms_shaped_rad: Mapping[str, float] = figure(
        "rad", "joint -> replay RMS of the command as shaped", default_factory=dict
    )
    explained_fraction: Mapping[str, float] = figure(
        UNITLESS, "joint -> share of the replay RMS the shaping explains", default_factory=dict
    )
    median_explained_fraction: float = figure(
        UNITLESS, "the median of those shares (rig states a shaping)", default=math.nan
    )
    disagree: Mapping[str, Disagreement] = figure(
        TEXT, "joints whose data prefer another bound", default_factory=dict
    )


@dataclass(frozen=True)
class NotRunFigures(Record):
    """A branch the evidence gate kept from running: the dataset's time base is refused."""

    kind = "not_run"

    not_run: bool = figure(TEXT, "the branch did not run")
    refused_by: str = figure(TEXT, "the finding that refused the time base")
    labelled_fps: float = figure("Hz", "the dataset's labelled rate")
    peak_to_limit_ratio: float = figure(UNITLESS, "its fastest step over the servo's limit")

    @classmethod
    def of(cls, branch: str) -> type[NotRunFigures]:
        """The not-run figures of ``branch`` (``evidence``, ``actuator``, ``controller``)."""
        return _NOT_RUN[branch]


@dataclass(frozen=True)
class EvidenceNotRun(NotRunFigures):
    """The command-shaping check, not run: the time base is refused."""

    branch = "evidence"


@dataclass(frozen=True)
class ActuatorNotRun(NotRunFigures):
    """The actuator fit, not run: the time base is refused."""

    branch = "actuator"


@dataclass(frozen=True)
class ControllerNotRun(NotRunFigures):
    """The controller fit, not run: the time base is refused."""

    branch = "controller"


_NOT_RUN: dict[str, type[NotRunFigures]] = {
    c.branch: c for c in (EvidenceNotRun, ActuatorNotRun, ControllerNotRun)
}
