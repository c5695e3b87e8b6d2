"""The plumbing audit's figures: one record per check of a deployment trace.

Encoder positions are in raw ticks (4096 a turn); gripper commands in LeRobot's 0..100
interface units; temperatures in degrees Celsius.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite

TICKS = "tick"
"""An encoder position step: 1/4096 of a turn."""
DEG_C = "degC"
"""A temperature, degrees Celsius."""


@dataclass(frozen=True)
class TorqueJumpFigures(Record):
    """Torque enabled while goal and present differ: how far each joint jumps."""

    branch = "plumbing"
    kind = "torque_jump"

    max_distance_ticks: float = figure(TICKS, "the worst joint's goal - present")
    max_distance_deg: float = figure("deg", "the same, in degrees")
    min_distance_ticks: float = figure(TICKS, "the closest joint's goal - present")
    joints_far: int = figure(UNITLESS, "joints farther than the jump threshold")
    distance_ticks: Mapping[str, float] = figure(TICKS, "motor -> goal - present")
    distance_deg: Mapping[str, float] = figure("deg", "motor -> goal - present")
    source: str = figure(TEXT, "'registers' (bus writes and reads) or 'first_action'")


@dataclass(frozen=True)
class GripperUnitFigures(Record):
    """Gripper commands against LeRobot's 0..100 interface."""

    branch = "plumbing"
    kind = "gripper_unit"

    requested_min: float = figure(UNITLESS, "the smallest gripper command [interface units]")
    requested_max: float = figure(UNITLESS, "the largest gripper command [interface units]")
    requested_span: float = figure(UNITLESS, "largest - smallest [interface units]")
    clipped_ticks: int = figure(UNITLESS, "commands outside 0..100")
    clipped_fraction: float = figure(UNITLESS, "share of commands outside 0..100")
    longest_pinned_run_ticks: int = figure(UNITLESS, "longest run of commands outside 0..100")
    looks_like: str = figure(TEXT, "'radians', 'out_of_range' or '0..100'")


@dataclass(frozen=True)
class StaleFirstFrameFigures(Record):
    """Episodes whose first image was taken before their reset, or repeats the last one."""

    branch = "plumbing"
    kind = "stale_first_frame"

    stale_episodes: int = figure(UNITLESS, "episodes that started from a stale image")
    episodes_checked: int = figure(UNITLESS, "episodes with an image")
    before_reset_episodes: int = figure(UNITLESS, "first images taken before the reset")
    repeated_image_episodes: int = figure(UNITLESS, "first images identical to the last one")
    max_taken_before_reset_s: float = figure("s", "how long before the reset, at most")
    resets_logged: int = figure(UNITLESS, "episodes with a reset event")

    def headline(self) -> Headline | None:
        """The stale episodes against none expected."""
        stale, checked = finite(self.stale_episodes), finite(self.episodes_checked)
        if stale is None or checked is None:
            return None
        return Headline(
            f"{stale:.0f} of {checked:.0f} episodes start from a stale camera frame (0 expected)",
            stale,
            0.0,
        )


@dataclass(frozen=True)
class StaleEpisode(Record):
    """One episode's first image against its reset."""

    episode: int = figure(UNITLESS, "the episode")
    tick: int = figure(UNITLESS, "the tick of its first image")
    image_t: float | None = figure("s", "the image's capture time (trace clock)")
    reset_t: float | None = figure("s", "the reset event's time (None: none logged)")
    taken_before_reset_s: float | None = figure("s", "reset - capture (positive: before)")
    before_reset: bool = figure(TEXT, "taken before the reset")
    same_as_previous_last: bool = figure(TEXT, "identical to the previous episode's last")


@dataclass(frozen=True)
class StaleFirstFrameDetails(Record):
    """Each episode's first image, for the Rerun timeline."""

    branch = "plumbing"
    kind = "stale_first_frame"

    episodes: tuple[StaleEpisode, ...] = figure(TEXT, "each episode checked", default=())


@dataclass(frozen=True)
class JointLimitRow(Record):
    """One body joint's actions against its limits (a count absent: not checked)."""

    ticks_outside: int | None = figure(UNITLESS, "actions past a limit", default=None)
    max_excess: float | None = figure(
        UNITLESS, "the largest excess [the joint's unit]", default=None
    )
    ticks_clipped: int | None = figure(
        UNITLESS, "actions changed on the way to the motor", default=None
    )


@dataclass(frozen=True)
class JointLimitsFigures(Record):
    """Body-joint actions past the joint limits or clipped on the way to the motors."""

    branch = "plumbing"
    kind = "joint_limits"

    ticks_outside: int = figure(UNITLESS, "actions past a joint limit, all joints")
    ticks_clipped: int = figure(UNITLESS, "actions clipped on the way, all joints")
    max_excess: float = figure(UNITLESS, "the worst joint's largest excess [its unit]")
    worst_joint: str = figure(TEXT, "that joint's feature")
    per_joint: Mapping[str, JointLimitRow] = figure(TEXT, "feature -> its counts")


@dataclass(frozen=True)
class ControlRateFigures(Record):
    """The deployment's control period against the rig's."""

    branch = "plumbing"
    kind = "control_rate"

    median_dt_s: float = figure("s", "median period between actions")
    expected_dt_s: float = figure("s", "the rig's period")
    rate_hz: float | None = figure("Hz", "1 / the median period")
    expected_rate_hz: float = figure("Hz", "the rig's rate")
    period_ratio: float = figure(UNITLESS, "median period over the rig's")
    late_fraction: float = figure(UNITLESS, "share of periods over 1.5 x the rig's")
    ticks: int = figure(UNITLESS, "periods measured")


@dataclass(frozen=True)
class CheckpointFigures(Record):
    """Whether the deployed checkpoint loads on a machine without CUDA."""

    branch = "plumbing"
    kind = "checkpoint"

    checkpoint: str = figure(TEXT, "the checkpoint file")
    storage_locations: tuple[str, ...] = figure(TEXT, "its storages' device tags")
    cuda_storage_locations: int = figure(UNITLESS, "storages tagged cuda")
    loads_without_map_location: bool = figure(TEXT, "torch.load works without map_location")
    loads_with_map_location_cpu: bool = figure(TEXT, "torch.load works with map_location=cpu")
    cuda_available_here: bool = figure(TEXT, "the probing machine has CUDA")
    probe: str = figure(
        TEXT,
        "what the probe found: 'ok', 'cuda', 'not_a_checkpoint', 'unsafe_pickle' or 'unreadable'",
    )


@dataclass(frozen=True)
class CheckpointDetails(Record):
    """The loaders' errors."""

    branch = "plumbing"
    kind = "checkpoint"

    plain_error: str | None = figure(TEXT, "torch.load's error without map_location", default=None)
    cpu_error: str | None = figure(TEXT, "its error with map_location=cpu", default=None)


@dataclass(frozen=True)
class TemperatureDriftFigures(Record):
    """Motor temperatures from the first to the last episode."""

    branch = "plumbing"
    kind = "temperature_drift"

    max_drift_c: float = figure(DEG_C, "the worst motor's last - first episode mean")
    worst_motor: str = figure(TEXT, "that motor")
    drift_c: Mapping[str, float] = figure(DEG_C, "motor -> last - first episode mean")
    episodes: int = figure(UNITLESS, "episodes")
    episode_mean_c: Mapping[str, tuple[float | None, ...]] = figure(
        DEG_C, "motor -> mean per episode (None: not read)"
    )


@dataclass(frozen=True)
class PolicyServerFigures(Record):
    """The policy server's address: loopback or reachable from the network."""

    branch = "plumbing"
    kind = "policy_server"

    address: str = figure(TEXT, "the address as given")
    host: str = figure(TEXT, "its host")
    loopback: bool = figure(TEXT, "the host is loopback")
    all_interfaces: bool = figure(TEXT, "the host is every interface (0.0.0.0, ::)")
    source: str = figure(TEXT, "'trace' (its meta) or 'rig' (deploy.policy_server)")


PLUMBING_FIGURES: tuple[type[Record], ...] = (
    TorqueJumpFigures,
    GripperUnitFigures,
    StaleFirstFrameFigures,
    JointLimitsFigures,
    ControlRateFigures,
    CheckpointFigures,
    TemperatureDriftFigures,
    PolicyServerFigures,
)
"""Every check's figures, in the audit's order."""
PLUMBING_DETAILS: tuple[type[Record], ...] = (StaleFirstFrameDetails, CheckpointDetails)
"""The checks whose details are typed."""
