"""Rig: a frozen description of one setup (model, joint map, timing, camera, evidence).

The value types of a loaded rig; ``simgap.rig.load`` builds them from ``rig.toml``.
A rig is written by the user as ``rig.toml``. Every key is validated on load: unknown keys
and missing required keys are errors that name the key, relative paths are resolved
against the rig file's folder. Every name the rig gives from the model (joints, sites,
bodies, geoms, the camera) is looked up in it by ``simgap.sim.rig_names.load_checked_rig``,
which the commands load a rig with, so that a typo is refused before any branch runs. A
value marked ``# guessed`` (what ``simgap init`` inferred) is recorded as a guess:
no verdict may rest on it alone. The format is documented in ``docs/rig.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from simgap.errors import NameNotFoundError
from simgap.rig.schema import PATH_KEYS
from simgap.units import ENCODER_RESOLUTION_RAD, JointUnit

ActionSpace = Literal["joint_position", "ee_delta"]
CommandInterp = Literal["hold", "linear"]


@dataclass(frozen=True)
class JointMap:
    """One model joint and how its recorded channel maps to it.

    Attributes:
        name: the model joint name (MJCF).
        recorded: the recorded feature name (e.g. ``shoulder_pan.pos``).
        unit: conversion from the recorded unit to radians.
        gripper: True for the gripper channel.
    """

    name: str
    recorded: str
    unit: JointUnit
    gripper: bool = False


@dataclass(frozen=True)
class Camera:
    """The policy camera.

    Attributes:
        name: MJCF camera name.
        policy_resolution: (height, width) the policy sees [px].
        render_resolution: (height, width) rendered before resizing [px].
        training_jitter_px: largest camera wobble used in training, at policy resolution [px].
        training_jitter_m: largest camera position jitter in training [m].
        training_jitter_deg: largest camera rotation jitter in training [deg].
        training_background_max: brightest background value seen in training (0..255);
            None when the rig does not say (the background check is then not measured,
            never held against a black nobody stated).
        recorded: feature key of the camera in a LeRobot dataset.
        training_mount: the link training mounted the camera on (ManiSkill's name).
        training_pose_m: the training camera's position in its mount [m].
        training_pose_q_wxyz: its orientation in the mount (unit quaternion w, x, y, z; SAPIEN's
            camera frame: x forward, y left, z up).
        training_fov_deg: the training camera's vertical field of view [deg].
        training_resolution: (height, width) training rendered [px].
    """

    name: str
    policy_resolution: tuple[int, int] = (16, 16)
    render_resolution: tuple[int, int] = (96, 96)
    training_jitter_px: float | None = None
    training_jitter_m: float | None = None
    training_jitter_deg: float | None = None
    training_background_max: float | None = None
    recorded: str | None = None
    training_mount: str | None = None
    training_pose_m: tuple[float, float, float] | None = None
    training_pose_q_wxyz: tuple[float, float, float, float] | None = None
    training_fov_deg: float | None = None
    training_resolution: tuple[int, int] | None = None


@dataclass(frozen=True)
class Training:
    """What training showed the policy (for the envelope checks). SI units."""

    control_dt_s: float | None = None
    obs_noise_std_rad: float | None = None
    action_scale: float = 1.0
    top_speed_rad_s: float | None = None
    workspace_x_m: tuple[float, float] | None = None
    workspace_y_m: tuple[float, float] | None = None
    servo_p_gain: float | None = None
    object_mass_kg: float | None = None
    finger_friction: float | None = None
    env_id: str | None = None
    """ManiSkill's env id (``SO100GraspCube-v1``); the keys below are what
    ``simgap init --maniskill-config`` reads from it (``simgap.plumbing.training``)."""
    agent: str | None = None
    robot_description: str | None = None
    physics_dt_s: float | None = None
    controller: str | None = None
    pd_stiffness_nm_rad: float | None = None
    pd_damping_nms_rad: float | None = None
    pd_force_limit_nm: float | None = None
    action_delta_limit_rad: float | None = None
    """The largest arm joint step one action may command [rad] (a delta controller's bound
    at action 1)."""
    object_size_m: float | None = None
    origin_from_pan_axis_m: tuple[float, ...] | None = None
    """Training's world origin from the base's pan axis, in the base frame [m]."""


@dataclass(frozen=True)
class Deploy:
    """How the real deployment runs."""

    policy_server: str | None = None
    servo_p_gain: float | None = None
    gripper_torque_limit: float | None = None
    action_scale: float = 1.0
    servo_model: str | None = None
    """The servos' model (``sts3215`` on the SO-101): the actuator branch's servo family."""
    max_relative_target: tuple[float, ...] | None = None
    """LeRobot's ``max_relative_target`` per rig joint, in rig order, in that joint's
    recorded unit (degrees; -100..100 or 0..100 for a normalised joint): each goal is
    clipped to the present position +- it before it is sent. None: no clip (LeRobot's
    default). ``simgap.episodes.command_shaping`` applies it."""
    goal_speed_rad_s: float | None = None
    """The servo's goal-speed limit [rad/s] (a Feetech ``Goal_Velocity`` of v steps/s is
    v * 2 pi / 4096 rad/s; LeRobot leaves it at 0, the servo's own top speed): the goal is
    rate-limited to it. None: not limited beyond the servo model."""
    robot_name: str | None = None
    """LeRobot's ``robot.name`` of the follower (``so101_follower``)."""
    bridge: str | None = None
    """What drives the real arm from the policy (``LeRobotRealAgent``: ManiSkill's)."""
    finger_friction: float | None = None
    """The real fingers' friction coefficient against the object, measured."""
    object_mass_kg: float | None = None
    """The real object's mass [kg], weighed."""


@dataclass(frozen=True)
class Evidence:
    """Paths to what the rig recorded, resolved against the rig file. All optional."""

    timing_logs: tuple[Path, ...] = ()
    client_logs: tuple[Path, ...] = ()
    server_logs: tuple[Path, ...] = ()
    dataset: Path | None = None
    sim_dataset: Path | None = None
    actuator_logs: tuple[Path, ...] = ()
    actuator_format: str = "lerobot"
    sim_manifest: Path | None = None
    real_manifest: Path | None = None
    frames: Path | None = None
    trace: Path | None = None
    push_logs: tuple[Path, ...] = ()
    checkpoints: Path | None = None
    static_object_poses: Path | None = None
    ros2_bags: tuple[Path, ...] = ()
    """ROS 2 bags (MCAP files or ``ros2 bag record`` folders), one episode each: the
    recording of record instead of ``dataset`` (``simgap.evidence.ros2_bag``)."""
    ros2_state_topic: str = "/joint_states"
    """The bags' ``sensor_msgs/msg/JointState`` topic: the measured joints."""
    ros2_command_topic: str | None = None
    """The bags' command topic (``trajectory_msgs/msg/JointTrajectory`` or
    ``std_msgs/msg/Float64MultiArray``); required with ``ros2_bags``."""
    ros2_command_joints: tuple[str, ...] = ()
    """The joint (recorded) names of a Float64MultiArray command, in its order; empty: the
    rig's joints in rig order."""

    @property
    def recording(self) -> Path | tuple[Path, ...] | None:
        """The recording of record: ``dataset``, else the ROS 2 bags, else None."""
        return self.dataset if self.dataset is not None else (self.ros2_bags or None)

    def paths(self) -> list[tuple[str, Path]]:
        """Every named path, as (key, path) pairs, for existence checks."""
        out: list[tuple[str, Path]] = []
        for key in sorted(PATH_KEYS):
            val = getattr(self, key)
            if isinstance(val, tuple):
                out.extend((key, p) for p in val)
            elif isinstance(val, Path):
                out.append((key, val))
        return out

    def missing(self) -> list[tuple[str, Path]]:
        """Every named path that does not exist (all at once, not the first)."""
        return [(k, p) for k, p in self.paths() if not p.exists()]


@dataclass(frozen=True)
class Rig:
    """A frozen description of one setup.

    Attributes:
        name: a label for the rig; findings carry it so they cannot be mixed across rigs.
        source: the rig file this was loaded from (None when built in code).
        model_path: the MJCF model of the rig.
        joints: the joint map, in recorded order.
        control_dt_s: the simulated control period [s]; NaN for a rig whose evidence is
            camera frames alone (nothing it holds runs against the period).
        physics_dt_s: the physics step [s]; None means take it from the model.
        action_space: ``joint_position`` or ``ee_delta``.
        command_interp: how commands are held between control ticks (``hold`` | ``linear``).
        clock: when the recorder read each frame and its command took effect against the
            physics steps (``auto``: identified from the recording; ``exact`` | ``step``:
            ``simgap.sim.clock.CLOCKS``).
        real_dt_s: the deployed decision period [s], when it differs from ``control_dt_s``.
        ee_site: site or body whose pose is the end effector.
        encoder_rad: encoder resolution [rad]: the default noise floor.
        torque_nm: torque sensor resolution [N m], when torque is logged.
        clock_jitter_s: the spread of the reads inside a frame [s] (uniform; 0: none stated),
            a part of the joint identification's noise floor.
        camera: the policy camera, if any.
        training: what training showed the policy.
        deploy: how the real deployment runs.
        origin_reference_m: a declared reference point in model coordinates [m].
        evidence: what was recorded.
        seed: seed for anything random done on this rig's behalf.
        tracker_noise_m, tracker_noise_rad: the object tracker's noise, 1 sigma per axis
            [m] / [rad] (``[contact]``; None: the contact branch's defaults).
        support_geoms: what the object rests on (``[contact]``; None: found from the
            contacts at each push's start).
        compute_backend: where the identification's candidate batches run: ``local``
            (threads) or ``ray`` (``[compute] backend``).
        compute_address: the Ray cluster address (``[compute] address``; None or
            ``local`` starts one on this machine).
        guessed: the dotted keys rig.toml marks ``# guessed`` (``control.dt_s`` as
            ``simgap init`` writes it: 1 / fps of the recording): values nobody stated,
            until the user checks them and removes the mark. A check whose comparison
            would rest on one reports it not measured instead (``stated``).
        from_maniskill: the dotted keys rig.toml marks ``# from ManiSkill`` (read from the
            training environment: stated, shown as their provenance).
        given: the dotted keys the rig file writes (None: built in code, every value the
            caller's); a key it leaves out has its default (``provenance``).
    """

    name: str
    model_path: Path
    joints: tuple[JointMap, ...]
    control_dt_s: float
    source: Path | None = None
    physics_dt_s: float | None = None
    action_space: ActionSpace = "joint_position"
    command_interp: CommandInterp = "hold"
    clock: str = "auto"
    real_dt_s: float | None = None
    ee_site: str | None = None
    object_body: str | None = None
    object_geom: str | None = None
    gripper_geoms: tuple[str, ...] = ()
    encoder_rad: float = ENCODER_RESOLUTION_RAD
    torque_nm: float | None = None
    clock_jitter_s: float = 0.0
    camera: Camera | None = None
    training: Training = field(default_factory=Training)
    deploy: Deploy = field(default_factory=Deploy)
    origin_reference_m: tuple[float, float, float] | None = None
    origin_reference_name: str | None = None
    evidence: Evidence = field(default_factory=Evidence)
    seed: int = 0
    tracker_noise_m: float | None = None
    tracker_noise_rad: float | None = None
    support_geoms: tuple[str, ...] | None = None
    compute_backend: str = "local"
    compute_address: str | None = None
    guessed: frozenset[str] = frozenset()
    given: frozenset[str] | None = None
    from_maniskill: frozenset[str] = frozenset()

    def provenance(self, key: str) -> str:
        """Where the dotted rig key's value comes from: ``given`` (the user wrote it),
        ``guessed`` (marked ``# guessed``: ``simgap init`` inferred it), ``from ManiSkill``
        (marked so: read from the training environment by ``simgap init
        --maniskill-config``; stated, like ``given``) or ``default`` (the file leaves it
        out). Findings show it beside each value they compare against."""
        if key in self.guessed:
            return "guessed"
        if key in self.from_maniskill:
            return "from ManiSkill"
        if self.given is None or key in self.given:
            return "given"
        return "default"

    def stated(self, key: str) -> bool:
        """Whether the dotted rig key's value is the user's, not a ``# guessed`` one (a key
        the file leaves out has its default, which the caller tells by its None)."""
        return key not in self.guessed

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Model joint names in recorded order."""
        return tuple(j.name for j in self.joints)

    def joint(
        self, name: str, *, file: str | Path | None = None, field: str | None = None
    ) -> JointMap:
        """Look a joint up by model name or recorded name; a miss lists the valid names.

        Args:
            name: the model or recorded joint name.
            file: the file the name was read from (an input log, not the rig); None: the
                name came from the rig itself, and the error names ``rig.toml``.
            field: where in ``file`` the name stood (a column, a key), named in the error.

        Raises:
            NameNotFoundError: ``name`` is neither a model nor a recorded name of the rig;
                the message names ``file`` and ``field`` (else the rig), the valid names
                and, for an input file, that the name is to be corrected there.
        """
        for j in self.joints:
            if name in (j.name, j.recorded):
                return j
        raise NameNotFoundError(
            "joint",
            name,
            [j.name for j in self.joints] + [j.recorded for j in self.joints],
            file=self.source if file is None else file,
            field=field,
            where=None
            if file is None
            else f"{file}, or map it as a joint's 'recorded' name in {self.source}",
        )

    @property
    def gripper(self) -> JointMap | None:
        """The gripper joint, if the rig declares one."""
        for j in self.joints:
            if j.gripper:
                return j
        return None
