"""One identification problem, picklable (``ReplayProblem``): the model, the logs to
replay, what to score against which targets, and the parameters searched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from simgap.errors import InputError
from simgap.fit.params import ParamSet
from simgap.fit.pose_loss import quat_half_angle_vectors

ScoreKind = Literal["joints", "ee", "object"]


@dataclass(frozen=True)
class ReplayProblem:
    """One identification problem (picklable).

    Attributes:
        model: an MJCF file path, or MJCF text when ``model_is_xml``.
        joints: the logged joints (model names).
        logs: the logged command sequences (``simgap.sim.replay.ReplayLog``).
        targets: per log, what the robot did: joint positions (T, J) [rad] for
            ``joints``; (T, 7) position + quaternion for ``ee``; (T, 3) positions [m] for
            ``object``.
        params: the parameters searched.
        score: what is compared: ``joints``, ``ee`` or ``object``.
        ee_site: the end-effector site/body (``ee``).
        object_body: the object body (``object``).
        interp: command expansion, ``hold`` or ``linear``.
        delay_s: command transport delay [s].
        physics_dt: physics step [s]; None keeps the model's.
        strip: strip visual-only geoms and unused meshes before compiling.
        rot_weight: weight of the rotation residual against translation (``ee``).
    """

    model: str
    joints: tuple[str, ...]
    logs: tuple[Any, ...]
    targets: tuple[np.ndarray, ...]
    params: ParamSet
    score: ScoreKind = "joints"
    model_is_xml: bool = False
    ee_site: str | None = None
    object_body: str | None = None
    interp: str = "hold"
    delay_s: float = 0.0
    physics_dt: float | None = None
    strip: bool = True
    rot_weight: float = 1.0

    def __post_init__(self) -> None:
        if len(self.logs) != len(self.targets):
            raise InputError(
                field="targets", expected=f"{len(self.logs)} target arrays", got=len(self.targets)
            )
        if self.score == "ee" and self.ee_site is None:
            raise InputError(
                field="model.ee_site",
                expected="an end-effector site or body",
                got="nothing",
                fix="set model.ee_site in rig.toml",
            )
        if self.score == "object" and self.object_body is None:
            raise InputError(
                field="model.object_body",
                expected="the pushed object's body",
                got="nothing",
                fix="set model.object_body in rig.toml",
            )

    def residual(self, result: Any, target: np.ndarray) -> np.ndarray:
        """Residuals of a batch of replays against one target, shape (B, m)."""
        if self.score == "joints":
            r = result.q - target[None]
        elif self.score == "ee":
            dp = result.ee_pos - target[None, :, :3]
            dr = (
                quat_half_angle_vectors(
                    np.broadcast_to(target[None, :, 3:], result.ee_quat.shape), result.ee_quat
                )
                * self.rot_weight
            )
            r = np.concatenate([dp, dr], axis=-1)
        else:
            r = result.obj_pos - target[None, :, :3]
        out: np.ndarray = r.reshape(r.shape[0], -1)
        return out
