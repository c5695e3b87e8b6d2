"""Open-loop replay of logged commands, batched across candidate parameter sets.

A ``Replayer`` is built once per (model, log layout): it adds the sensors it reads (joint
positions, the end-effector frame, the object frame) to the spec, compiles it once, and
keeps a persistent ``mujoco.rollout.Rollout`` thread pool. ``replay(models, log)`` then
rolls the log's commands out from the log's start state under every candidate model in
ONE batched ``rollout`` call and returns the trajectories sampled at the log's times.

Commands arrive at the control rate and are expanded to the physics step, held
(zero-order) or linearly interpolated as the rig's ``command_interp`` says, optionally
delayed by a transport delay ``delay_s`` (the command logged at ``t`` acts at ``t + delay``;
before the first logged command acts, the actuators hold the start state).

Timing follows a LeRobot record loop: the observation of frame k is read at ``t[k]`` and
the action of frame k is sent after it, so the state sampled at ``t[k]`` has not felt
command k yet. Held commands act at their own times, not at the nearest physics step: a
physics step that a command onset (``t[k] + delay``) falls inside applies the time average
of the commands over the step (exact for the impulse of a position actuator, whose force
is linear in its control), and the state at a sample time between two physics steps is
interpolated linearly between them. A physics step that does not divide the control period
(5 ms against 30 fps) is therefore handled, and a delay is a continuous quantity.

That is one clock among those a recorder may keep (``CLOCKS``). A simulated rig that steps its
physics on a fixed grid and reads and commands between steps does both on the first physics
step at or after the frame's stamp (``step``: a read late by 0, 1.67, 3.33 ms, cycling, for
5 ms against 30 fps); a real loop reads and commands somewhere inside the frame with jitter,
which no replay reproduces and the noise floor carries. Which clock a recording kept is
identified (``simgap.actuator.joint_id``) or set in the rig, never assumed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import mujoco.rollout
import numpy as np

from simgap.errors import InputError, NameNotFoundError
from simgap.sim.clock import check_clock, expand_commands, sample_weights
from simgap.sim.model import (
    actuator_for_joint,
    compile_spec,
    joint_qpos_index,
    names,
    object_id,
)


@dataclass(frozen=True)
class ReplayLog:
    """One logged command sequence and the state it starts from.

    Attributes:
        t: log sample times [s], shape (T,), strictly increasing (the control ticks).
        commands: joint position targets [rad], shape (T, J), in ``joints`` order.
        joints: model joint names, length J.
        q0: the start joint state [rad], shape (J,).
        obj_pose0: the object's start pose (x, y, z, qw, qx, qy, qz) [m], or None.
        source: where the log came from (for messages).
        hold_before: the command the actuators hold before the first logged one acts
            [rad], shape (J,); None holds the start state ``q0``.
    """

    t: np.ndarray
    commands: np.ndarray
    joints: tuple[str, ...]
    q0: np.ndarray
    obj_pose0: np.ndarray | None = None
    source: str = ""
    hold_before: np.ndarray | None = None

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        c = np.asarray(self.commands, dtype=float)
        if t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
            raise InputError(
                file=self.source,
                field="t",
                expected="at least 2 strictly increasing sample times",
                got=f"{t.size} samples",
            )
        if c.shape != (t.size, len(self.joints)):
            raise InputError(
                file=self.source,
                field="commands",
                expected=f"shape ({t.size}, {len(self.joints)})",
                got=f"shape {c.shape}",
            )
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "commands", c)
        object.__setattr__(self, "q0", np.asarray(self.q0, dtype=float))
        if self.obj_pose0 is not None:
            object.__setattr__(self, "obj_pose0", np.asarray(self.obj_pose0, dtype=float))


@dataclass(frozen=True)
class ReplayResult:
    """Simulated trajectories at the log's sample times, one per candidate model.

    Attributes:
        t: sample times [s], shape (T,).
        q: joint positions [rad], shape (B, T, J).
        ee_pos: end-effector position [m], shape (B, T, 3), or None.
        ee_quat: end-effector orientation (w, x, y, z), shape (B, T, 4), or None.
        obj_pos: object position [m], shape (B, T, 3), or None.
        obj_quat: object orientation (w, x, y, z), shape (B, T, 4), or None.
        force: actuator force of each joint's actuator [N m], shape (B, T, J), or None
            (built with ``actuator_force=True``).
    """

    t: np.ndarray
    q: np.ndarray
    ee_pos: np.ndarray | None = None
    ee_quat: np.ndarray | None = None
    obj_pos: np.ndarray | None = None
    obj_quat: np.ndarray | None = None
    force: np.ndarray | None = None


@dataclass
class Replayer:
    """Batched open-loop replay of one model with a persistent rollout thread pool.

    Build it with ``Replayer.build(spec, joints, ...)``; use as a context manager or call
    ``close()`` to end the thread pool.

    Attributes:
        model: the compiled base model (with the replay's sensors added).
        joints: the logged joints, in log order.
        interp: ``hold`` or ``linear`` command expansion.
        delay_s: command transport delay [s].
        nthread: rollout threads (default: one per core).
        clock: when reads and command arrivals happen against the physics steps
            (``CLOCKS``); may be changed between replays.
    """

    model: mujoco.MjModel
    joints: tuple[str, ...]
    interp: str = "hold"
    delay_s: float = 0.0
    nthread: int = 0
    ee_site: str | None = None
    object_body: str | None = None
    source: str | None = None
    actuator_force: bool = False
    clock: str = "exact"
    _pool: mujoco.rollout.Rollout | None = field(default=None, repr=False)
    _datas: list[mujoco.MjData] = field(default_factory=list, repr=False)
    _inputs: dict[int, tuple[ReplayLog, np.ndarray]] = field(default_factory=dict, repr=False)
    _ctrl: dict[tuple[int, float, str], np.ndarray] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls,
        spec: mujoco.MjSpec,
        joints: Sequence[str],
        *,
        ee_site: str | None = None,
        object_body: str | None = None,
        interp: str = "hold",
        delay_s: float = 0.0,
        physics_dt: float | None = None,
        nthread: int | None = None,
        source: str | Path | None = None,
        actuator_force: bool = False,
        clock: str = "exact",
    ) -> Replayer:
        """Add the replay's sensors to a copy of ``spec`` and compile it once.

        Raises:
            InputError: the model does not compile (MuJoCo's message, with ``source``), a
                joint/site/body is not in the model (valid names listed), or a joint has
                no actuator.
        """
        spec = spec.copy()
        probe = compile_spec(spec.copy(), source)
        for j in joints:
            object_id(probe, "joint", j, source)
            actuator_for_joint(probe, j)
        for j in joints:
            spec.add_sensor(
                name=f"_simgap_q_{j}",
                type=mujoco.mjtSensor.mjSENS_JOINTPOS,
                objtype=mujoco.mjtObj.mjOBJ_JOINT,
                objname=j,
            )
        if ee_site is not None:
            kind = mujoco.mjtObj.mjOBJ_SITE
            if mujoco.mj_name2id(probe, kind, ee_site) < 0:
                if mujoco.mj_name2id(probe, mujoco.mjtObj.mjOBJ_BODY, ee_site) < 0:
                    raise NameNotFoundError(
                        "site or body",
                        ee_site,
                        names(probe, "site") + names(probe, "body"),
                        file=source,
                        field="model.ee_site",
                    )
                kind = mujoco.mjtObj.mjOBJ_XBODY
            spec.add_sensor(
                name="_simgap_ee_pos",
                type=mujoco.mjtSensor.mjSENS_FRAMEPOS,
                objtype=kind,
                objname=ee_site,
            )
            spec.add_sensor(
                name="_simgap_ee_quat",
                type=mujoco.mjtSensor.mjSENS_FRAMEQUAT,
                objtype=kind,
                objname=ee_site,
            )
        if object_body is not None:
            object_id(probe, "body", object_body, source)
            for nm, typ in (
                ("pos", mujoco.mjtSensor.mjSENS_FRAMEPOS),
                ("quat", mujoco.mjtSensor.mjSENS_FRAMEQUAT),
            ):
                spec.add_sensor(
                    name=f"_simgap_obj_{nm}",
                    type=typ,
                    objtype=mujoco.mjtObj.mjOBJ_XBODY,
                    objname=object_body,
                )
        if actuator_force:
            for j in joints:
                act = mujoco.mj_id2name(
                    probe, mujoco.mjtObj.mjOBJ_ACTUATOR, actuator_for_joint(probe, j)
                )
                spec.add_sensor(
                    name=f"_simgap_f_{j}",
                    type=mujoco.mjtSensor.mjSENS_ACTUATORFRC,
                    objtype=mujoco.mjtObj.mjOBJ_ACTUATOR,
                    objname=act,
                )
        if physics_dt is not None:
            spec.option.timestep = physics_dt
        model = compile_spec(spec, source)
        return cls(
            model=model,
            joints=tuple(joints),
            interp=interp,
            delay_s=delay_s,
            nthread=nthread or (os.cpu_count() or 1),
            ee_site=ee_site,
            object_body=object_body,
            source=None if source is None else str(source),
            actuator_force=actuator_force,
            clock=check_clock(clock),
        )

    @property
    def _sensor_col(self) -> int:
        sid = object_id(self.model, "sensor", f"_simgap_q_{self.joints[0]}")
        return int(self.model.sensor_adr[sid])

    # -- thread pool -------------------------------------------------------------------
    def _ensure_pool(self) -> mujoco.rollout.Rollout:
        if self._pool is None:
            self._pool = mujoco.rollout.Rollout(nthread=self.nthread)
            self._datas = [mujoco.MjData(self.model) for _ in range(self.nthread)]
        return self._pool

    def close(self) -> None:
        """End the thread pool (a later replay starts a new one)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Replayer:
        self._ensure_pool()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- inputs ------------------------------------------------------------------------
    @property
    def physics_dt(self) -> float:
        """The physics step [s]."""
        return float(self.model.opt.timestep)

    def sample_steps(self, log: ReplayLog) -> np.ndarray:
        """Physics-step index of each log sample (the step at or before it), shape (T,)."""
        return sample_weights(log.t, self.physics_dt, self.clock)[0]

    def initial_state(self, log: ReplayLog) -> np.ndarray:
        """The full physics state at the log's start, shape (nstate,).

        Raises:
            InputError: the log's joints do not match the replayer's, or a start joint
                value lies outside its joint range.
        """
        m = self.model
        if tuple(log.joints) != self.joints:
            missing = [j for j in log.joints if j not in names(m, "joint")]
            raise InputError(
                file=log.source,
                field="joints",
                expected=f"the joints {list(self.joints)}",
                got=list(log.joints),
                fix=(f"not in the model: {missing}; " if missing else "")
                + f"the model's joints are {names(m, 'joint')}",
            )
        d = mujoco.MjData(m)
        d.qpos[:] = m.qpos0
        for k, j in enumerate(self.joints):
            jid = object_id(m, "joint", j)
            v = float(log.q0[k])
            if m.jnt_limited[jid]:
                lo, hi = m.jnt_range[jid]
                tol = 1e-3
                if not lo - tol <= v <= hi + tol:
                    raise InputError(
                        file=log.source,
                        field=f"start state of joint '{j}'",
                        expected=f"a value inside the joint range [{lo:.4g}, {hi:.4g}] rad",
                        got=f"{v:.4g} rad",
                        fix="check the joint map (unit, sign, offset) in "
                        "rig.toml, or the log's first row",
                    )
            d.qpos[joint_qpos_index(m, j)] = v
        if log.obj_pose0 is not None and self.object_body is not None:
            b = object_id(m, "body", self.object_body)
            jnt = int(m.body_jntadr[b])
            if jnt < 0 or m.jnt_type[jnt] != mujoco.mjtJoint.mjJNT_FREE:
                raise InputError(
                    file=self.source,
                    field="model.object_body",
                    expected="a body with a free joint",
                    got=self.object_body,
                )
            a = int(m.jnt_qposadr[jnt])
            pose = np.asarray(log.obj_pose0, dtype=float)
            d.qpos[a : a + 3] = pose[:3]
            if pose.size == 7:
                d.qpos[a + 3 : a + 7] = pose[3:] / np.linalg.norm(pose[3:])
        d.ctrl[:] = 0.0
        for k, j in enumerate(self.joints):
            d.ctrl[actuator_for_joint(m, j)] = log.q0[k]
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        state = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, d, state, spec)
        return state

    def controls(self, log: ReplayLog, delay_s: float | None = None) -> np.ndarray:
        """Actuator controls at every physics step, shape (nstep, nu); the steps cover
        the last sample time and one step beyond it (for the interpolation).

        Raises:
            InputError: the log is not longer than the command delay.
        """
        delay = self.delay_s if delay_s is None else float(delay_s)
        span = float(log.t[-1] - log.t[0])
        if span <= delay:
            raise InputError(
                file=log.source,
                field="t",
                expected=f"a log longer than the command delay ({delay:.4g} s)",
                got=f"{span:.4g} s",
                fix="replay a longer log or check the delay",
            )
        nstep = int(self.sample_steps(log)[-1]) + 2
        hold = log.q0 if log.hold_before is None else np.asarray(log.hold_before, float)
        cmds = expand_commands(
            log.t,
            log.commands,
            self.physics_dt,
            nstep,
            self.interp,
            delay,
            hold_before=hold,
            clock=self.clock,
        )
        ctrl = np.zeros((nstep, self.model.nu))
        for k, j in enumerate(self.joints):
            ctrl[:, actuator_for_joint(self.model, j)] = cmds[:, k]
        return ctrl

    def _controls_cached(self, log: ReplayLog, delay_s: float) -> np.ndarray:
        key = (id(log), round(float(delay_s), 12), self.clock)
        c = self._ctrl.get(key)
        if c is None:
            if len(self._ctrl) > 256:
                self._ctrl.clear()
            c = self.controls(log, delay_s)
            self._ctrl[key] = c
        return c

    # -- the replay --------------------------------------------------------------------
    def replay(
        self,
        models: Sequence[mujoco.MjModel] | None,
        log: ReplayLog,
        delays: Sequence[float] | np.ndarray | None = None,
    ) -> ReplayResult:
        """Roll ``log`` out under each model (same size signature as ``self.model``).

        Args:
            models: candidate models (e.g. from ``with_params(self.model, ...)``); None
                replays the base model once.
            log: the logged commands and start state.
            delays: one command delay [s] per model (default: ``self.delay_s`` for all);
                candidates with different delays still run in ONE batched call.

        Returns:
            The trajectories at the log's sample times, batch axis first.
        """
        models = [self.model] if models is None else list(models)
        nb = len(models)
        cached = self._inputs.get(id(log))
        if cached is None or cached[0] is not log:  # a fit replays one log many times
            cached = (log, self.initial_state(log)[None, :])
            self._inputs[id(log)] = cached
        _, state0 = cached
        if delays is None:
            ctrl = self._controls_cached(log, self.delay_s)[None, :, :]
        else:
            dl = np.asarray(delays, dtype=float).reshape(-1)
            if dl.size != nb:
                raise InputError(
                    field="delays", expected=f"{nb} delays (one per model)", got=dl.size
                )
            uniq = sorted(set(dl.tolist()))
            if len(uniq) == 1:
                ctrl = self._controls_cached(log, uniq[0])[None, :, :]
            else:
                table = {d: self._controls_cached(log, d) for d in uniq}
                ctrl = np.stack([table[d] for d in dl.tolist()])
        idx, w = sample_weights(log.t, self.physics_dt, self.clock)
        pool = self._ensure_pool()
        # a zero warm start for every rollout: results then do not depend on which
        # rollouts shared an MjData before (bit-identical across batchings and backends)
        warm = np.zeros((1, self.model.nv))
        _, sens = pool.rollout(
            models,
            self._datas,
            state0,
            ctrl,
            initial_warmstart=warm,
            chunk_size=max(1, nb // (2 * self.nthread)) if nb > 1 else 1,
        )
        ww = w[None, :, None]
        s = (1.0 - ww) * sens[:, idx, :] + ww * sens[:, np.minimum(idx + 1, sens.shape[1] - 1), :]
        nj = len(self.joints)
        out: dict[str, np.ndarray | None] = {
            "ee_pos": None,
            "ee_quat": None,
            "obj_pos": None,
            "obj_quat": None,
            "force": None,
        }
        col = self._sensor_col
        q = s[..., col : col + nj]
        col += nj
        if self.ee_site is not None:
            quat = s[..., col + 3 : col + 7]
            out["ee_pos"] = s[..., col : col + 3]
            out["ee_quat"] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
            col += 7
        if self.object_body is not None:
            quat = s[..., col + 3 : col + 7]
            out["obj_pos"] = s[..., col : col + 3]
            out["obj_quat"] = quat / np.linalg.norm(quat, axis=-1, keepdims=True)
            col += 7
        if self.actuator_force:
            out["force"] = s[..., col : col + nj]
        return ReplayResult(t=log.t, q=q, **out)
