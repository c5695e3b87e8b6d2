"""The planted truth of the demo bench: every fault built into the twin, with its true value.

The demo bench is synthetic: a twin of the simulated arm (``simgap.demo.twin``) into which
the faults below are planted on purpose, each one a failure reported in the seeds. The
values here are the ground truth a diagnosis of the demo is checked against; the recorder
also writes them, with the figures that can only be computed from the recording (latency
percentiles, camera shift in pixels), to ``truth.json`` in the demo folder.

Values are SI (s, kg, rad, m) unless the name says otherwise (``_deg``, ``_pct``, ``_px``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

NOMINAL_KP = 998.22
"""Simulated position-actuator stiffness [N m/rad] (Menagerie SO-101, servo P = 16)."""
NOMINAL_KV = 2.731
"""Simulated position-actuator damping [N m s/rad]."""


@dataclass(frozen=True)
class LatencyFault:
    """(1) Command latency with jitter that overruns the control period.

    The per-tick stage durations are those of the timing log (``simgap.demo.timing``); the
    twin applies each tick's total as the delay between the observation and the command
    reaching the servos, and the next tick starts when the slower of the period and the
    loop ends. ``truth.json`` adds the p50/p95 of the total and the overrun fraction.
    """

    control_dt_s: float = 1.0 / 15.0
    network_rate_per_s_range: tuple[float, float] = (60.0, 160.0)
    network_base_s: float = 0.006


@dataclass(frozen=True)
class ServoFault:
    """(2) A softer servo loop than simulated, plus a first-order lag, on every joint.

    Attributes:
        kp_scale: firmware P gain on the bench / the P gain the simulation assumes.
        kp: the twin's position stiffness [N m/rad] (``kp_scale * NOMINAL_KP``).
        kv: the twin's damping [N m s/rad] (kept at the simulated value).
        lag_time_constant_s: first-order lag on the servo target (MuJoCo ``filterexact``).
        delay_s: pure transport delay inside the servo (none planted).
    """

    kp_scale: float = 0.5
    kp: float = 0.5 * NOMINAL_KP
    kv: float = NOMINAL_KV
    lag_time_constant_s: float = 0.04
    delay_s: float = 0.0


@dataclass(frozen=True)
class ContactFault:
    """(3) A heavier cube and smoother finger pads than simulated."""

    object_mass_kg: float = 0.030
    sim_object_mass_kg: float = 0.003
    pad_friction: float = 0.5
    sim_pad_friction: float = 2.0

    @property
    def mass_ratio(self) -> float:
        """Bench mass / simulated mass (10)."""
        return self.object_mass_kg / self.sim_object_mass_kg


@dataclass(frozen=True)
class CameraFault:
    """(4) Auto exposure left on, a lit black cloth, and the camera mounted off its model pose.

    Attributes:
        exposure_target: per recording, the median luma (0..1, after the response
            curve) auto exposure drives the image to; the gain therefore varies with the
            scene and between the two recordings.
        max_gain: the largest gain auto exposure may use.
        cloth_rgb: reflectance of the black cloth (linear 0..1); the simulator's is 0.
        response_gamma: the camera's tone curve, ``out = (gain * linear) ** (1/gamma)``.
        mount_offset_m: camera position error in the camera's own frame [m].
        mount_offset_euler_deg: camera rotation error (x, y, z, intrinsic) [deg].
    """

    exposure_target: dict[str, float] = field(
        default_factory=lambda: {"session_a": 0.50, "session_b": 0.40}
    )
    max_gain: float = 8.0
    cloth_rgb: tuple[float, float, float] = (0.09, 0.018, 0.0)
    response_gamma: float = 2.2
    mount_offset_m: tuple[float, float, float] = (0.002, 0.002, 0.002)
    mount_offset_euler_deg: tuple[float, float, float] = (3.0, -2.0, 0.0)


@dataclass(frozen=True)
class ZeroOffsetFault:
    """(5) One joint's zero is off: the recorded reading = true angle + offset.

    The servo holds its own (offset) zero, so commands are in the same shifted frame:
    a command ``c`` drives the true joint to ``c - offset``.
    """

    joint: str = "wrist_flex"
    offset_deg: float = -4.0

    @property
    def offset_rad(self) -> float:
        """The offset [rad]."""
        return math.radians(self.offset_deg)

    @property
    def correction_rad(self) -> float:
        """The rig's ``offset_rad`` that undoes it (model = recorded + correction) [rad]."""
        return -self.offset_rad


@dataclass(frozen=True)
class StaleFrameFault:
    """(6) The first frame of each episode is taken before the scene was reset.

    The first image of episode ``e`` is the last image of episode ``e - 1`` (for the
    first episode: the scene before the cube was placed), with its older timestamp.
    """

    first_frame_is_previous_last: bool = True
    episodes_affected: str = "all"


@dataclass(frozen=True)
class DeclaredFrame:
    """Declared, not hidden: the user measures placements from the shoulder-pan axis, which
    sits this far in front of the model origin (``[frame] origin_reference_m``); the
    manifests' initial states are in the model frame."""

    origin_reference_m: tuple[float, float, float] = (0.0388353, 0.0, 0.0)


@dataclass(frozen=True)
class DeploySettings:
    """Declared deployment settings (in ``rig.toml`` ``[deploy]``), not hidden faults."""

    servo_p_gain: float = 16.0
    training_servo_p_gain: float = 32.0
    gripper_torque_limit: float = 0.5
    action_scale: float = 0.15
    policy_server: str = "127.0.0.1:8080"


@dataclass(frozen=True)
class PlantedTruth:
    """Every planted fault of the demo bench."""

    latency: LatencyFault = field(default_factory=LatencyFault)
    servo: ServoFault = field(default_factory=ServoFault)
    contact: ContactFault = field(default_factory=ContactFault)
    camera: CameraFault = field(default_factory=CameraFault)
    zero_offset: ZeroOffsetFault = field(default_factory=ZeroOffsetFault)
    stale_frame: StaleFrameFault = field(default_factory=StaleFrameFault)
    deploy: DeploySettings = field(default_factory=DeploySettings)
    frame: DeclaredFrame = field(default_factory=DeclaredFrame)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of every planted value."""
        d = asdict(self)
        d["contact"]["mass_ratio"] = self.contact.mass_ratio
        d["zero_offset"]["offset_rad"] = self.zero_offset.offset_rad
        d["zero_offset"]["correction_rad"] = self.zero_offset.correction_rad
        return d


TRUTH = PlantedTruth()
"""The demo bench's planted faults."""

NOT_PLANTED: tuple[str, ...] = (
    "comparability: the simulated and the real evaluation share checkpoint, initial states, "
    "predicate and judge",
    "plumbing other than the stale first frame: goal = present before torque on, gripper in "
    "0..100, degrees throughout, policy server on loopback",
    "kinematics other than the zero offset: the twin's link lengths, inertias and joint "
    "damping equal the simulation's",
)
"""What the demo does NOT plant (a diagnosis implicating these is wrong)."""
