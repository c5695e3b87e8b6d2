"""The bench twin: a copy of the demo model, built through MjSpec, with the faults planted.

The twin stands in for the real SO-101 on the bench. It differs from the simulated model
exactly by the faults recorded in ``simgap.demo.truth``: a softer servo loop with a
first-order lag, a heavier cube and smoother finger pads, a lit black cloth and a camera
mounted off its modelled pose. The faults that live outside the physics (the zero offset of
one joint, auto exposure, latency, the stale first frame) are applied by the helpers here and
by the recorder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgap.demo import demo_model_path
from simgap.demo.truth import TRUTH, PlantedTruth
from simgap.sim.model import load_spec
from simgap.sim.scene import Model, Spec, lag_servos, offset_camera
from simgap.units import ENCODER_RESOLUTION_RAD, JointUnit

JOINTS: tuple[str, ...] = (
    "shoulder_pan",
    "shoulder_lift",
    "elbow_flex",
    "wrist_flex",
    "wrist_roll",
    "gripper",
)
"""Model joint (and actuator) names, in recorded order."""
GRIPPER_RANGE_RAD: tuple[float, float] = (-0.174533, 1.7453292)
"""The gripper's calibrated range: 0 % and 100 % [rad]."""
CAMERA = "wrist_cam"
PADS: tuple[str, str] = ("fixed_jaw_pad", "moving_jaw_pad")


def joint_units() -> tuple[JointUnit, ...]:
    """Recorded units of the demo rig, in joint order: degrees, the gripper in percent."""
    deg = JointUnit(unit="deg")
    pct = JointUnit(unit="pct", lo_rad=GRIPPER_RANGE_RAD[0], hi_rad=GRIPPER_RANGE_RAD[1])
    return (deg,) * 5 + (pct,)


def to_recorded(q_rad: np.ndarray) -> np.ndarray:
    """Model radians -> recorded units (deg, gripper pct clipped to 0..100 as LeRobot's
    RANGE_0_100 normalisation clips); shape (..., 6)."""
    q = np.asarray(q_rad, dtype=float)
    out = np.stack([u.from_rad(q[..., i]) for i, u in enumerate(joint_units())], axis=-1)
    out[..., 5] = np.clip(out[..., 5], 0.0, 100.0)
    return out


def nominal_spec() -> Spec:
    """The simulated model as an editable spec."""
    return load_spec(demo_model_path())


def twin_spec(truth: PlantedTruth = TRUTH) -> Spec:
    """The demo model with the physical faults of ``truth`` planted (a new spec)."""
    spec = nominal_spec()
    nominal = spec.compile()
    s = truth.servo
    lag_servos(spec, JOINTS, s.kp, s.kv, s.lag_time_constant_s)
    grip = spec.actuator("gripper")
    lim = 2.94 * truth.deploy.gripper_torque_limit
    grip.forcerange = np.array([-lim, lim])
    spec.geom("cube").mass = truth.contact.object_mass_kg
    for pad in PADS:
        g = spec.geom(pad)
        fr = np.array(g.friction, dtype=float)
        fr[0] = truth.contact.pad_friction
        g.friction = fr
    cloth = truth.camera.cloth_rgb
    spec.geom("floor").rgba = np.array([cloth[0], cloth[1], cloth[2], 1.0])
    offset_camera(
        spec, nominal, CAMERA, truth.camera.mount_offset_m, truth.camera.mount_offset_euler_deg
    )
    return spec


def twin_model(truth: PlantedTruth = TRUTH) -> Model:
    """The compiled twin."""
    return twin_spec(truth).compile()


def nominal_model() -> Model:
    """The compiled simulated model."""
    return nominal_spec().compile()


@dataclass(frozen=True)
class Readout:
    """How the twin's servos read and take commands (the zero offset lives here).

    Attributes:
        offset_rad: per joint, recorded reading minus true angle [rad], shape (6,).
        quantum_rad: encoder resolution the readings are rounded to [rad].
    """

    offset_rad: np.ndarray
    quantum_rad: float = ENCODER_RESOLUTION_RAD

    @classmethod
    def of(cls, truth: PlantedTruth = TRUTH) -> Readout:
        """The readout with the truth's zero offset."""
        off = np.zeros(len(JOINTS))
        off[JOINTS.index(truth.zero_offset.joint)] = truth.zero_offset.offset_rad
        return cls(offset_rad=off)

    def read(self, q_true: np.ndarray) -> np.ndarray:
        """Recorded reading [rad, servo frame] of true angles: offset, then encoder counts."""
        raw = np.asarray(q_true, dtype=float) + self.offset_rad
        return np.round(raw / self.quantum_rad) * self.quantum_rad

    def target(self, cmd_rad: np.ndarray) -> np.ndarray:
        """The true angle a command (servo frame) drives the joint to."""
        return np.asarray(cmd_rad, dtype=float) - self.offset_rad


def auto_exposure(
    linear: np.ndarray, target: float, max_gain: float, gamma: float
) -> tuple[np.ndarray, float]:
    """What a camera left on auto exposure makes of a scene.

    The gain is chosen so that the median luma of
    ``(gain * linear) ** (1/gamma)`` reaches ``target``: a dark scene is brightened until
    its typical pixel is mid grey, so the gain depends on the scene content.

    Args:
        linear: the rendered scene read as linear radiance, uint8 shape (H, W, 3).
        target: mean brightness auto exposure aims at, in 0..1.
        max_gain: the largest gain allowed.
        gamma: the camera's tone-curve exponent.

    Returns:
        The exposed image (uint8, same shape) and the gain used.
    """
    lin = linear.astype(float) / 255.0
    # the tone curve is monotonic, so the metered median is the curve of the median luma
    # (below clipping): the gain has a closed form
    med = float(np.median(lin @ np.array([0.299, 0.587, 0.114])))
    gain = max_gain if med <= 0.0 else float(np.clip(target**gamma / med, 0.05, max_gain))
    exposed = np.clip(gain * lin, 0.0, 1.0) ** (1.0 / gamma)
    img = np.round(exposed * 255.0).astype(np.uint8)
    return img, gain
