"""Replay recorded joint commands in ManiSkill 3 (PhysX on the CPU) with the user's agent.

ManiSkill is the simulator the policy trained in; replaying a recording there, with the
agent and controller training used, asks the same question the joint-dynamics branch asks
of the MuJoCo model: does the simulated arm, given the recorded commands, move as the real
one did? The replay keeps LeRobot's record timing: the command of frame k is sent after
frame k's joints are read and held for the control period (``sim_freq / control_freq``
physics steps, ManiSkill's default: no interpolation), and frame k + 1 is read after it.

Every controller setting goes through ManiSkill's own configuration class: the gains of a
replay are written as keyword arguments of the agent's controller config
(``PDJointPosControllerConfig`` for ``pd_joint_pos``), built by ManiSkill and applied by the
controller's own ``set_drive_property``, so what the fit replays is what an exported config
gives the user. ``mani_skill`` is imported here lazily and nowhere else in simgap but this
package (the ``maniskill`` extra).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.errors import InputError, MissingExtraError, NameNotFoundError
from simgap.series import Trajectory

EXTRA = "maniskill"
"""The extra that installs ManiSkill 3: ``pip install 'simgap[maniskill]'``."""
TORCH_FIRST = (
    "torch's CPU build (PyPI's default torch for Linux is the CUDA build: about "
    "6.4 GB with mani-skill; docs/maniskill.md)"
)
"""What to install before the extra, said by every message that names it."""
RATE_TOLERANCE = 0.05
"""A recording whose median frame period differs from the replay's control period by more
than this fraction is refused (its commands would be replayed at the wrong rate)."""


def require_maniskill(purpose: str) -> Any:
    """``gymnasium`` with ManiSkill's envs registered, or a MissingExtraError naming the
    ``maniskill`` extra."""
    try:
        import gymnasium as gym
        import mani_skill.envs  # noqa: F401  (registers the envs)
    except ImportError as e:
        raise MissingExtraError(EXTRA, "mani_skill", purpose, first=TORCH_FIRST) from e
    return gym


@dataclass(frozen=True)
class DriveGains:
    """A PD joint drive per joint, as ManiSkill's ``PDJointPosControllerConfig`` holds it.

    Attributes:
        joints: joint names, length J.
        stiffness: drive stiffness [N m/rad], length J.
        damping: drive damping [N m s/rad], length J.
        force_limit: drive force limit [N m], length J.
    """

    joints: tuple[str, ...]
    stiffness: tuple[float, ...]
    damping: tuple[float, ...]
    force_limit: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.joints)
        for name in ("stiffness", "damping", "force_limit"):
            v = getattr(self, name)
            if len(v) != n or not all(math.isfinite(x) and x >= 0 for x in v):
                raise InputError(
                    field=name,
                    expected=f"{n} finite, non-negative numbers "
                    f"(one per joint of {list(self.joints)})",
                    got=list(v),
                )

    def with_values(self, writes: Mapping[tuple[str, str], float]) -> DriveGains:
        """These gains with ``{(kind, joint): value}`` written over them (kind ``kp``,
        ``kv`` or ``force_limit``, the names of ``simgap.fit.params``)."""
        cols = {
            "kp": list(self.stiffness),
            "kv": list(self.damping),
            "force_limit": list(self.force_limit),
        }
        for (kind, joint), v in writes.items():
            cols[kind][self.joints.index(joint)] = float(v)
        return DriveGains(
            self.joints, tuple(cols["kp"]), tuple(cols["kv"]), tuple(cols["force_limit"])
        )


def _per_joint(v: Any, n: int) -> tuple[float, ...]:
    a = (
        np.broadcast_to(np.asarray(v, dtype=float).ravel(), (n,))
        if np.size(v) == 1
        else np.asarray(v, dtype=float).ravel()
    )
    return tuple(float(x) for x in a)


class ManiSkillReplayer:
    """One ManiSkill env (``Empty-v1``: the agent on a ground plane) that replays recordings.

    Args:
        control_dt_s: the recording's frame period [s] (the replay's control period).
        physics_dt_s: the physics step wanted [s]; rounded so that a whole number of steps
            fills the control period (ManiSkill needs integer rates).
        agent: the ManiSkill agent uid (``so100``) training used.
        control_mode: an absolute joint-position PD mode of that agent (``pd_joint_pos``).
        env_id: the env to build (default ``Empty-v1``).
    """

    def __init__(
        self,
        *,
        control_dt_s: float,
        physics_dt_s: float = 0.01,
        agent: str = "so100",
        control_mode: str = "pd_joint_pos",
        env_id: str = "Empty-v1",
    ) -> None:
        gym = require_maniskill("Replaying a recording in ManiSkill")
        control_hz = 1.0 / control_dt_s
        if abs(control_hz - round(control_hz)) > 1e-3 * control_hz or round(control_hz) < 1:
            raise InputError(
                field="control_dt_s",
                expected="a period of a whole number of "
                "Hz (ManiSkill's control_freq is an integer)",
                got=control_dt_s,
                fix="resample the recording to a whole-Hz rate",
            )
        self.control_freq = int(round(control_hz))
        self.substeps = max(1, int(round(control_dt_s / physics_dt_s)))
        self.sim_freq = self.substeps * self.control_freq
        self.agent_uid, self.control_mode = agent, control_mode
        try:
            self.env = gym.make(
                env_id,
                robot_uids=agent,
                control_mode=control_mode,
                sim_backend="physx_cpu",
                obs_mode="state",
                render_mode=None,
                num_envs=1,
                sim_config={"sim_freq": self.sim_freq, "control_freq": self.control_freq},
            )
        except (KeyError, AssertionError, TypeError, ValueError) as e:
            raise InputError(
                field="agent / control_mode",
                expected="a ManiSkill agent uid and one of its controller modes",
                got=f"{agent} / {control_mode}",
                fix=f"check them against ManiSkill's agent ({e})",
            ) from e
        self.env.reset(seed=0)
        u = self.env.unwrapped
        self._agent, self._robot, self._scene = u.agent, u.agent.robot, u.scene
        ctrl = self._agent.controller
        if (
            not hasattr(ctrl, "config")
            or not hasattr(ctrl.config, "stiffness")
            or getattr(ctrl.config, "use_delta", False)
            or getattr(ctrl.config, "normalize_action", False)
        ):
            raise InputError(
                field="control_mode",
                expected="an absolute, unnormalised joint-position PD controller (pd_joint_pos)",
                got=control_mode,
                fix="replay with control_mode='pd_joint_pos': its gains are the "
                "ones the delta modes use too",
            )
        self._ctrl = ctrl
        self._config = ctrl.config
        self.joints = tuple(str(j.name) for j in ctrl.joints)

    def nominal_gains(self) -> DriveGains:
        """The controller's gains as the agent ships them."""
        c, n = self._config, len(self.joints)
        return DriveGains(
            self.joints,
            _per_joint(c.stiffness, n),
            _per_joint(c.damping, n),
            _per_joint(c.force_limit, n),
        )

    def config_kwargs(self, gains: DriveGains) -> dict[str, Any]:
        """Keyword arguments of the agent's controller config class with ``gains``: the
        agent's own config, its stiffness, damping and force limit replaced (JSON-able)."""
        if gains.joints != self.joints:
            raise InputError(
                field="gains.joints",
                expected=f"the controller's joints {list(self.joints)}",
                got=list(gains.joints),
            )
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self._config):
            v = getattr(self._config, f.name)
            out[f.name] = v.tolist() if isinstance(v, np.ndarray) else v
        out.update(
            stiffness=list(gains.stiffness),
            damping=list(gains.damping),
            force_limit=list(gains.force_limit),
        )
        return out

    @property
    def config_class(self) -> str:
        """The name of the agent's controller config class."""
        return type(self._config).__name__

    def apply(self, kwargs: Mapping[str, Any]) -> None:
        """Build ManiSkill's controller config from ``kwargs`` and apply it to the agent."""
        cfg = type(self._config)(**dict(kwargs))
        self._ctrl.config = cfg
        self._ctrl.set_drive_property()

    def columns(self, traj: Trajectory) -> np.ndarray:
        """Index into ``traj``'s columns of each controller joint, shape (J,)."""
        missing = [j for j in self.joints if j not in traj.joint_names]
        if missing:
            raise NameNotFoundError(
                "joint",
                missing[0],
                list(traj.joint_names),
                file=traj.source or None,
                field="joint_names",
            )
        return np.array([traj.joint_names.index(j) for j in self.joints])

    def replay(
        self, traj: Trajectory, gains: DriveGains | Mapping[str, Any], *, delay_s: float = 0.0
    ) -> np.ndarray:
        """The replayed joint positions at the recording's frames [rad], shape (T, J) in the
        order of ``self.joints``; ``gains`` as DriveGains or config keyword arguments.

        ``delay_s`` [s] >= 0: each command acts that much later than its frame (rounded to
        whole physics steps; before the first command arrives the first one is held)."""
        import torch

        if not (np.isfinite(delay_s) and delay_s >= 0.0):
            raise InputError(field="delay_s", expected="a delay >= 0 [s]", got=delay_s)
        late = int(round(delay_s * self.sim_freq))

        dt = float(np.median(np.diff(traj.t))) if traj.t.size > 1 else 1.0 / self.control_freq
        if abs(dt * self.control_freq - 1.0) > RATE_TOLERANCE:
            raise InputError(
                file=traj.source or None,
                field="t",
                expected=f"frames every {1e3 / self.control_freq:.4g} ms (the "
                f"replay's {self.control_freq} Hz control rate)",
                got=f"a median period of {dt * 1e3:.4g} ms",
                fix="build the replayer at the recording's control period",
            )
        self.apply(self.config_kwargs(gains) if isinstance(gains, DriveGains) else gains)
        cols = self.columns(traj)
        if not np.isfinite(traj.q_cmd[:, cols]).all() or not np.isfinite(traj.q[0, cols]).all():
            raise InputError(
                file=traj.source or None,
                field="q_cmd / q[0]",
                expected="finite commands and a finite first state",
                got="NaN or inf",
                fix="drop the frames with missing values",
            )
        q_cmd = torch.as_tensor(traj.q_cmd[:, cols], dtype=torch.float32)
        qd0 = np.zeros(cols.size) if traj.qd is None else traj.qd[0, cols]
        self._robot.set_qpos(torch.as_tensor(traj.q[None, 0, cols], dtype=torch.float32))
        self._robot.set_qvel(torch.as_tensor(qd0[None], dtype=torch.float32))
        self._ctrl.reset()
        out = np.empty((traj.t.size, cols.size))
        acting = -1
        for k in range(traj.t.size):
            out[k] = self._robot.get_qpos()[0].cpu().numpy()
            for s in range(self.substeps):
                c = max(0, (k * self.substeps + s - late) // self.substeps)
                if c != acting:  # the command of frame c arrives (frame k's, with no delay)
                    self._ctrl.set_action(q_cmd[c : c + 1])  # its NaN check, done above
                    acting = c
                self._agent.before_simulation_step()
                self._scene.step()
        return out

    def close(self) -> None:
        """Close the env."""
        self.env.close()


def recorded(traj: Trajectory, joints: Sequence[str]) -> np.ndarray:
    """The measured positions of ``joints`` in ``traj`` [rad], shape (T, len(joints))."""
    return traj.q[:, [traj.joint_names.index(j) for j in joints]]
