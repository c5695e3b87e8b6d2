"""FakeSO101: a MuJoCo-backed SO-101 follower that speaks LeRobot's robot interface.

``connect(calibrate=...)``, ``is_connected``, ``get_observation()``, ``send_action(dict)``,
``disconnect()``, ``observation_features``, ``action_features``, with LeRobot's feature
names (``shoulder_pan.pos`` ... ``gripper.pos``) and units: body joints in degrees
(``use_degrees=True``) or -100..100, the gripper always 0..100. Like LeRobot's ``SOFollower``
its ``name`` is ``"so_follower"`` (the name since LeRobot 0.4.3).

Like the real servos, every ``Goal_Position`` register reads 0 at power-up; like LeRobot's
``configure()``, ``connect`` re-enables torque without writing goal = present first, so the
arm drives toward tick 0, unless ``write_goal_before_torque=True``. Everything sent and
received is recorded as a deployment trace (``robot.recorder``; saved on ``disconnect``
when ``trace_path`` is set).

``send_action`` returns what was actually sent after LeRobot's clip (normalised modes to
-100..100 / 0..100; degrees are not clipped), where LeRobot returns the values before it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, NameNotFoundError
from simgap.fakearm.bus import FakeBus
from simgap.fakearm.calibration import (
    MOTORS,
    TICKS_PER_REV,
    MotorCalibration,
    bounds,
    clip_normalized,
    default_calibration,
    load_calibration,
    normalize,
    unnormalize,
)
from simgap.fakearm.camera import CameraStream
from simgap.fakearm.clock import Clock, RealClock, VirtualClock
from simgap.fakearm.recorder import TraceRecorder
from simgap.values.calibration import norm_mode

BUS_READ_S = 0.003
"""Time one sync read of six motors costs on the virtual clock [s]."""
BUS_WRITE_S = 0.001
"""Time one sync write costs on the virtual clock [s]."""


@dataclass(frozen=True)
class FakeCameraConfig:
    """The simulated wrist camera.

    Attributes:
        sim_camera: the MJCF camera rendered.
        fps: capture rate [1/s]; frames are captured at multiples of ``1 / fps``.
        height: image height [px] (keep small).
        width: image width [px].
        background: render on a thread of its own, so ``get_observation`` only takes the
            latest frame; None: on the real clock (``realtime=True``) only. On the virtual
            clock frames are rendered when asked for, on the caller's thread.
        mesh_cell_m: cell [m] the camera's meshes are simplified to (None: as modelled).
    """

    sim_camera: str = "wrist_cam"
    fps: float = 30.0
    height: int = 64
    width: int = 64
    background: bool | None = None
    mesh_cell_m: float | None = 0.002


@dataclass(frozen=True)
class FakeSO101Config:
    """Options of the fake arm (LeRobot's follower options where they exist).

    Attributes:
        id: the robot id (names the calibration).
        use_degrees: body joints in degrees (True) or -100..100 (False).
        cameras: camera key -> camera (LeRobot's ``cameras``); empty renders nothing.
        model_path: MJCF of the arm (default: the bundled demo SO-101).
        keyframe: keyframe the arm powers up in (``rest`` in the demo model; none: qpos0).
        object_body: free body that ``reset_scene`` moves (``cube`` in the demo model).
        calibration_path: a LeRobot calibration JSON; default: ranges from the model. The
            arm's encoders stay its own (homed at the model ranges' centres): a file whose
            range sits elsewhere, or with another drive mode, is read through as LeRobot
            would, so its offsets and flips show in what is recorded.
        max_relative_target: per-step clip against the present position (normalised units).
        disable_torque_on_disconnect: as LeRobot.
        write_goal_before_torque: write Goal_Position = Present_Position before enabling
            torque (LeRobot does not).
        realtime: follow the wall clock; False runs on a virtual clock, as fast as called.
        control_dt_s: the period the script means to run at [s] (trace meta only).
        log_temperature: read Present_Temperature of every motor with each observation.
        trace_path: where ``disconnect`` writes the trace (JSON Lines); None keeps it in
            memory (``robot.recorder``).
        object_region_m: (x_lo, x_hi, y_lo, y_hi) [m] where ``reset_scene`` puts the object.
        seed: seed of the object placements.
        observation_delay_s: extra time every ``get_observation`` takes before it reads
            the bus [s] (on the arm's clock), as a slow camera or bus read does on a real
            arm: a ``lerobot-record`` loop then runs slower than its fps label (0: none).
    """

    id: str = "fake"
    use_degrees: bool = True
    cameras: Mapping[str, FakeCameraConfig] = field(default_factory=dict)
    model_path: str | Path | None = None
    keyframe: str | None = "rest"
    object_body: str | None = "cube"
    calibration_path: str | Path | None = None
    max_relative_target: float | None = None
    disable_torque_on_disconnect: bool = True
    write_goal_before_torque: bool = False
    realtime: bool = False
    control_dt_s: float | None = None
    log_temperature: bool = False
    trace_path: str | Path | None = None
    object_region_m: tuple[float, float, float, float] = (0.18, 0.28, -0.08, 0.08)
    seed: int = 0
    observation_delay_s: float = 0.0

    def __post_init__(self) -> None:
        d = self.observation_delay_s
        if not (isinstance(d, (int, float)) and math.isfinite(d) and 0.0 <= d < 60.0):
            raise InputError(
                field="observation_delay_s",
                expected="seconds each observation takes, >= 0 and below 60",
                got=d,
                fix="e.g. observation_delay_s=0.45 for a ~2 Hz loop",
            )


class FakeSO101:
    """The fake SO-101 follower (see the module docstring)."""

    name = "so_follower"

    def __init__(self, config: FakeSO101Config | None = None) -> None:
        self.config = config or FakeSO101Config()
        if len(self.config.cameras) > 1:
            raise InputError(
                field="cameras",
                expected="at most one camera (the wrist camera)",
                got=sorted(self.config.cameras),
            )
        self.robot_type = self.name
        self.id = self.config.id
        self.clock: Clock = RealClock() if self.config.realtime else VirtualClock()
        self.recorder = TraceRecorder()
        self.bus: FakeBus | None = None
        self.calibration: dict[str, MotorCalibration] = {}
        self._sim: Any = None
        self._center: np.ndarray = np.zeros(len(MOTORS))
        self._home_ticks: np.ndarray = np.zeros(len(MOTORS))  # the encoders at _center
        self._lock = threading.RLock()  # physics is advanced by the camera thread too
        self.camera: CameraStream | None = None
        """The camera's frame stream while connected (None without a camera)."""
        self._rng = np.random.default_rng(self.config.seed)
        self._connected = False
        self.frame_age_s: float | None = None
        """Age [s] of the image the last ``get_observation`` returned (None: no camera)."""

    # ---- LeRobot's Robot interface -------------------------------------------------------
    @property
    def observation_features(self) -> dict[str, Any]:
        """Feature -> type or image shape (H, W, 3), as LeRobot's follower."""
        feats: dict[str, Any] = {f"{m}.pos": float for m in MOTORS}
        for key, cam in self.config.cameras.items():
            feats[key] = (cam.height, cam.width, 3)
        return feats

    @property
    def action_features(self) -> dict[str, type]:
        """Feature -> type."""
        return {f"{m}.pos": float for m in MOTORS}

    @property
    def is_connected(self) -> bool:
        """Whether ``connect`` ran and ``disconnect`` did not."""
        return self._connected

    @property
    def is_calibrated(self) -> bool:
        """Whether a calibration is loaded."""
        return bool(self.calibration)

    def connect(self, calibrate: bool = True) -> None:
        """Power up the simulated arm, load the calibration and configure like LeRobot."""
        if self._connected:
            raise InputError(
                field="connect",
                expected="a robot that is not connected yet",
                got="already connected",
                fix="call disconnect() first",
            )
        from simgap.sim.fake_arm import ArmSim, SimCamera

        cam = None
        if self.config.cameras:
            c = next(iter(self.config.cameras.values()))
            cam = SimCamera(
                name=c.sim_camera, height=c.height, width=c.width, mesh_cell_m=c.mesh_cell_m
            )
        if self.config.model_path is None:
            from simgap.demo import demo_model_path

            model_path: str | Path = demo_model_path()
        else:
            model_path = self.config.model_path
        self._sim = ArmSim(
            model_path,
            camera=cam,
            keyframe=self.config.keyframe,
            object_body=self.config.object_body,
        )
        if tuple(self._sim.joint_names) != MOTORS:
            raise InputError(
                file=model_path,
                field="actuators",
                expected=f"position actuators on {', '.join(MOTORS)} in this order",
                got=self._sim.joint_names,
            )
        ranges = {m: self._sim.joint_range(i) for i, m in enumerate(MOTORS)}
        self._center = np.array([(lo + hi) / 2.0 for lo, hi in ranges.values()])
        self.bus = FakeBus(
            MOTORS,
            self._present_ticks,
            self._on_goal,
            self._sim_torque,
            listener=self.recorder.access,
            before=self._sync,
        )
        self._connected = True
        home = default_calibration(ranges)
        self._home_ticks = np.array([home[m].mid for m in MOTORS])
        if self.config.calibration_path is not None:
            self.calibration = load_calibration(self.config.calibration_path)
        elif calibrate or not self.calibration:
            self.calibration = default_calibration(ranges)
        self._write_meta()
        self.recorder.event("connect", self.clock.now())
        self.bus.sync_read("Present_Position")  # where the joints sat at power-up
        if self.config.cameras:
            # before torque is enabled: the GL context and first render take 0.1-1.5 s of the
            # real clock, which would otherwise pass with the servos driving (the first
            # observation would find the arm already at the end of its power-up jump)
            try:
                self._start_camera()
            except BaseException:  # no GL context, say: leave the arm as before connect
                self._sim.close()
                self._connected = False
                raise
        self.configure()

    def calibrate(self) -> None:
        """Set the calibration from the model's joint ranges (no interactive steps)."""
        ranges = {m: self._sim.joint_range(i) for i, m in enumerate(MOTORS)}
        self.calibration = default_calibration(ranges)

    def configure(self) -> None:
        """LeRobot's configure: torque off, set up, torque back on (goal not seeded)."""
        bus = self._bus()
        self._sync()
        bus.sync_write("Torque_Enable", {m: 0 for m in MOTORS})
        if self.config.write_goal_before_torque:
            present = bus.sync_read("Present_Position")
            bus.sync_write("Goal_Position", present)
        bus.sync_write("Torque_Enable", {m: 1 for m in MOTORS})
        self.recorder.event("torque_enabled", self.clock.now())
        self.clock.spend(BUS_WRITE_S)

    def get_observation(self) -> dict[str, Any]:
        """Joint positions in LeRobot's units, and the latest camera frame."""
        bus = self._bus()
        if self.config.observation_delay_s:
            self.clock.sleep(self.config.observation_delay_s)  # a slow read, then the bus
        self._sync()
        raw = bus.sync_read("Present_Position")
        obs: dict[str, Any] = {}
        for m in MOTORS:
            obs[f"{m}.pos"] = normalize(
                raw[m], self.calibration[m], norm_mode(m, self.config.use_degrees)
            )
        if self.config.log_temperature:
            bus.sync_read("Present_Temperature")
        self.clock.spend(BUS_READ_S)
        stamp: dict[str, Any] = {}
        if self.config.cameras:
            key = next(iter(self.config.cameras))
            t_img, image, sha = self._latest_frame()
            obs[key] = image.copy()
            stamp = {"image_t": t_img, "image_age_s": self.clock.now() - t_img, "image_sha1": sha}
            self.frame_age_s = stamp["image_age_s"]
        self.recorder.observation({**{k: v for k, v in obs.items() if k.endswith(".pos")}, **stamp})
        return obs

    def send_action(self, action: Mapping[str, float]) -> dict[str, float]:
        """Write goal positions; returns what was sent after LeRobot's clip."""
        bus = self._bus()
        for key in action:
            if key not in self.action_features:
                raise NameNotFoundError("action feature", key, self.action_features)
        self._sync()
        sent: dict[str, float] = {}
        goals: dict[str, float] = {}
        present = None
        for key, value in action.items():
            m = key.removesuffix(".pos")
            mode = norm_mode(m, self.config.use_degrees)
            v = float(value)
            if self.config.max_relative_target is not None:
                if present is None:
                    present = bus.sync_read("Present_Position")
                cur = normalize(present[m], self.calibration[m], mode)
                step = self.config.max_relative_target
                v = min(max(v, cur - step), cur + step)
            v = clip_normalized(v, mode)
            sent[key] = v
            goals[m] = unnormalize(v, self.calibration[m], mode)
        bus.sync_write("Goal_Position", goals)
        self.clock.spend(BUS_WRITE_S)
        self.recorder.tick(self.clock.now(), {k: float(v) for k, v in action.items()}, sent)
        return sent

    def disconnect(self) -> None:
        """Torque off (if configured), save the trace, free the renderer."""
        bus = self._bus()
        self._sync()
        if self.config.disable_torque_on_disconnect:
            bus.sync_write("Torque_Enable", {m: 0 for m in MOTORS})
        self.recorder.event("disconnect", self.clock.now())
        if self.recorder.pending():
            self.recorder.tick(self.clock.now(), {}, {})
        if self.camera is not None:
            self.camera.stop()
        if self.config.trace_path is not None:
            self.recorder.save(self.config.trace_path)
        self._sim.close()
        self._connected = False

    # ---- fake-arm extras ------------------------------------------------------------------
    def reset_scene(self, xy: tuple[float, float] | None = None) -> tuple[float, float]:
        """Start a new episode: move the object to ``xy`` [m] (random when None) and
        record a ``reset`` event. Returns the placement."""
        self._bus()
        self._sync()
        if self.config.cameras:
            self._latest_frame()  # a frame captured before the reset shows the old scene
        if xy is None:
            x0, x1, y0, y1 = self.config.object_region_m
            xy = (float(self._rng.uniform(x0, x1)), float(self._rng.uniform(y0, y1)))
        with self._lock:
            self._sim.place_object(*xy)
        self.recorder.new_episode()
        self.recorder.event("reset", self.clock.now())
        return xy

    def joint_limits(self) -> dict[str, tuple[float, float]]:
        """Each feature's calibrated range in its own unit."""
        return {
            f"{m}.pos": bounds(self.calibration[m], norm_mode(m, self.config.use_degrees))
            for m in MOTORS
        }

    def temperatures(self) -> dict[str, float]:
        """Motor temperatures [deg C] (not recorded; use ``log_temperature`` for that)."""
        return {m: float(t) for m, t in zip(MOTORS, self._bus().temperature, strict=True)}

    def present_ticks(self) -> dict[str, int]:
        """Present positions [ticks], not recorded."""
        self._sync()
        return {m: int(v) for m, v in zip(MOTORS, self._present_ticks(), strict=True)}

    # ---- internals -------------------------------------------------------------------------
    def _bus(self) -> FakeBus:
        if not self._connected or self.bus is None:
            raise InputError(
                field="robot",
                expected="a connected robot",
                got="not connected",
                fix="call robot.connect() first",
            )
        return self.bus

    def _write_meta(self) -> None:
        units = {
            f"{m}.pos": {"degrees": "deg", "range_m100_100": "m100", "range_0_100": "pct"}[
                norm_mode(m, self.config.use_degrees)
            ]
            for m in MOTORS
        }
        meta: dict[str, Any] = {
            "robot_type": self.name,
            "robot_class": "simgap.fakearm.FakeSO101",
            "use_degrees": self.config.use_degrees,
            "units": units,
            "joint_limits": {k: list(v) for k, v in self.joint_limits().items()},
            "calibration": {m: vars(c) for m, c in self.calibration.items()},
            "power_up_goal_ticks": 0,
            "clock": "monotonic" if self.config.realtime else "virtual",
        }
        if self.config.control_dt_s is not None:
            meta["control_dt_s"] = self.config.control_dt_s
        if self.config.cameras:
            key, c = next(iter(self.config.cameras.items()))
            meta["camera"] = {"key": key, "fps": c.fps, "height": c.height, "width": c.width}
        self.recorder.annotate(**meta)

    def _present_ticks(self) -> np.ndarray:
        q = self._sim.qpos()
        return np.round(self._home_ticks + (q - self._center) * TICKS_PER_REV / (2.0 * math.pi))

    def _on_goal(self, i: int, ticks: float) -> None:
        home = self._home_ticks[i]
        self._sim.set_target(i, self._center[i] + (ticks - home) * 2.0 * math.pi / TICKS_PER_REV)

    def _sim_torque(self, i: int, on: bool) -> None:
        self._sim.set_torque(i, on)

    def _sync(self) -> None:
        """Advance physics (and heat the motors) to the clock's time."""
        with self._lock:
            t0 = self._sim.time
            if self.clock.now() - t0 < self._sim.timestep:
                return
            self._sim.advance_to(self.clock.now())
            frac = self._sim.actuator_force() / self._sim.force_limit()
            if self.bus is not None:
                self.bus.heat(frac, self._sim.time - t0)

    def _start_camera(self) -> None:
        key, c = next(iter(self.config.cameras.items()))
        realtime = isinstance(self.clock, RealClock)
        background = realtime if c.background is None else c.background
        if background and not realtime:
            raise InputError(
                field=f"cameras.{key}.background",
                expected="False on the virtual clock (frames are rendered when "
                "asked for, in simulated time)",
                got=True,
                fix="set realtime=True, or leave background unset",
            )
        self.camera = CameraStream(
            key,
            c.fps,
            (c.height, c.width),
            self.clock.now,
            self._sim,
            self._sync,
            self._lock,
            background=background,
            realtime=realtime,
        )
        self.camera.start()

    def camera_frame(self) -> tuple[float, np.ndarray]:
        """(capture time [s], image (H, W, 3) uint8) of the wrist camera's latest frame.

        The same frame ``get_observation`` returns at this instant (what LeRobot's
        ``Camera.read_latest`` gives a follower).

        Raises:
            InputError: the arm is not connected, or has no camera.
        """
        if not self._connected or not self.config.cameras:
            raise InputError(
                field="cameras",
                expected="a connected arm with a camera",
                got="not connected" if not self._connected else "no camera",
                fix="configure a camera and call connect() first",
            )
        t_img, image, _ = self._latest_frame()
        return t_img, image.copy()

    def _latest_frame(self) -> tuple[float, np.ndarray, str]:
        """The frame of the latest capture instant (see ``simgap.fakearm.camera``)."""
        if self.camera is None:
            raise InputError(
                field="cameras",
                expected="a connected arm with a camera",
                got="not connected",
                fix="call connect() first",
            )
        return self.camera.latest()
