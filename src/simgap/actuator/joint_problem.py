"""The joint identification's problem: replays of the episodes under candidate (parameters,
delay) pairs, batched, against the rig's own MJCF (``JointProblem``), and the kinds it
searches with their physical bounds. ``simgap.actuator.joint_id`` fits it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError

__all__ = ["BOUNDS", "FORCE_KIND", "KINDS", "MAX_BATCH", "JointProblem"]

KINDS: tuple[str, ...] = ("kp", "kv", "damping", "frictionloss", "armature")
"""Per-joint parameters of a position-actuated MJCF joint."""

BOUNDS: dict[str, tuple[float, float]] = {
    "kp": (0.2, 5.0),
    "kv": (0.05, 20.0),
    "damping": (0.02, 50.0),
    "frictionloss": (0.02, 50.0),
    "armature": (0.1, 10.0),
    "force_limit": (0.3, 3.0),
}
"""Physical search bounds, as multiples of the model's nominal value. The force limit's
(a servo's stall torque, from a third of the model's to three times it) spans the
STS3215's published stall torques at 6-12 V (about 1.5-3 N m against the Menagerie's
2.94) with room for a model written for another servo."""

FORCE_KIND = "force_limit"
"""The actuator's torque limit: fitted only on joints whose actuator has a force range
(``JointProblem`` refuses it elsewhere)."""

MAX_BATCH = 96
"""Most candidate models replayed in one batch: each is a copy of the compiled model (2.2 MB
for the Menagerie SO-101 without visuals), and the central Jacobian at every delay of a
grid asked for 480 at once (2.0 GB peak for diagnose on 3 x 20 s episodes). 96 keeps both
rollout threads busy (``Replayer``'s chunks) at a fifth of the memory."""


class JointProblem:
    """Replays of L episodes under candidate (parameters, delay) pairs, batched.

    Args:
        model_path: the rig's MJCF.
        joints: fitted joints (model names, the episodes' column order).
        logs: ``ReplayLog`` per episode.
        targets: measured joint positions [rad], shape (T_l, J) per episode.
        kinds: parameter kinds per joint.
        physics_dt: physics step [s] (None: the model's).
        interp: command expansion (``hold`` | ``linear``).
        fit_joints: the joints whose parameters are fitted (default all; the others stay
            at the model's values but are still replayed and scored).
        bounds: search bounds per kind as multiples of the nominal value (default
            ``BOUNDS``; a kind left out keeps its default).
        clock: the recorder's clock the replay starts with (``simgap.sim.clock.CLOCKS``).
    """

    def __init__(
        self,
        model_path: str | Path,
        joints: Sequence[str],
        logs: Sequence[Any],
        targets: Sequence[np.ndarray],
        kinds: Sequence[str] = KINDS,
        *,
        physics_dt: float | None = None,
        interp: str = "hold",
        fit_joints: Sequence[str] | None = None,
        bounds: dict[str, tuple[float, float]] | None = None,
        clock: str = "exact",
    ) -> None:
        from simgap.sim.model import get_param, load_spec, strip_visuals
        from simgap.sim.replay import Replayer

        unknown_kinds = sorted(set(bounds or {}) - set(BOUNDS))
        if unknown_kinds:
            raise InputError(
                field="bounds", expected=f"kinds among {sorted(BOUNDS)}", got=unknown_kinds
            )
        box = {**BOUNDS, **(bounds or {})}
        bad = {k: v for k, v in box.items() if not 0 < v[0] < 1 < v[1]}
        if bad:
            raise InputError(
                field="bounds",
                expected="0 < lower < 1 < upper (multiples of the nominal value)",
                got=bad,
            )
        if len(logs) != len(targets) or not logs:
            raise InputError(
                field="episodes",
                expected="one target per log, at least one",
                got=f"{len(logs)} logs, {len(targets)} targets",
            )
        self.model_path = Path(model_path)
        self.all_joints = tuple(joints)
        self.joints = tuple(fit_joints) if fit_joints is not None else self.all_joints
        unknown = [j for j in self.joints if j not in self.all_joints]
        if unknown:
            raise InputError(
                field="fit_joints", expected=f"joints among {self.all_joints}", got=unknown
            )
        self.rows = [self.all_joints.index(j) for j in self.joints]
        self.kinds = tuple(kinds)
        self.logs = list(logs)
        self.targets = [np.asarray(t, dtype=float) for t in targets]
        self.spec = strip_visuals(load_spec(self.model_path))
        self.interp = interp
        self.replayer = Replayer.build(
            self.spec,
            self.all_joints,
            interp=interp,
            physics_dt=physics_dt,
            actuator_force=True,
            source=self.model_path,
            clock=clock,
        )
        m = self.replayer.model
        from simgap.sim.model import ModelPool

        self.pool = ModelPool(m)
        self.nominal = np.array(
            [[get_param(m, kind, j) for kind in self.kinds] for j in self.joints]
        )
        if FORCE_KIND in self.kinds:
            col = self.nominal[:, self.kinds.index(FORCE_KIND)]
            unlimited = [j for j, f in zip(self.joints, col, strict=True) if not np.isfinite(f)]
            if unlimited:
                raise InputError(
                    file=self.model_path,
                    field=f"kinds: {FORCE_KIND}",
                    expected="an actuator with a force range (forcelimited, "
                    "forcerange) on every fitted joint",
                    got=f"none on {', '.join(unlimited)}",
                    fix=f"fit without {FORCE_KIND}, or give those actuators "
                    "their servo's torque limit in the MJCF",
                )
        # a kind at zero nominal is searched around a reference value (from its own lower
        # bound) so that log-multipliers stay defined
        ref = self.nominal.copy()
        for k, kind in enumerate(self.kinds):
            col = ref[:, k]
            pos = col[col > 0]
            col[col <= 0] = (float(pos.mean()) if pos.size else 1e-3) * BOUNDS[kind][0]
        self.ref = ref
        self.z0 = np.log(np.where(self.nominal > 0, self.nominal, ref) / ref).reshape(-1)
        self.lo = np.log(
            np.array([[box[kind][0] for kind in self.kinds] for _ in self.joints])
        ).reshape(-1)
        self.hi = np.log(
            np.array([[box[kind][1] for kind in self.kinds] for _ in self.joints])
        ).reshape(-1)
        self.n_evals = 0
        self.floor_replay = np.zeros(len(self.joints))
        """Per fitted joint, what no replay can tell apart [rad]: the widest of the replay's
        change when its start moves within the encoder's half count, when its commands move
        by float rounding (chaos), and the model's own floor (``noise_floor``,
        ``model_floor``)."""
        self.blocks: list[np.ndarray] = []

    @property
    def J(self) -> int:
        return len(self.joints)

    @property
    def K(self) -> int:
        return len(self.kinds)

    def values(self, z: np.ndarray) -> np.ndarray:
        """SI values of log-multipliers, shape (..., J, K)."""
        zz = np.asarray(z, dtype=float).reshape(*np.shape(z)[:-1], self.J, self.K)
        out: np.ndarray = self.ref * np.exp(zz)
        return out

    def models(self, z: np.ndarray) -> list[Any]:
        """Candidate models (pooled copies, valid until the next call)."""
        writes = []
        for row in np.atleast_2d(z):
            v = self.values(row)
            writes.append(
                {
                    (kind, j): float(v[a, k])
                    for a, j in enumerate(self.joints)
                    for k, kind in enumerate(self.kinds)
                }
            )
        out: list[Any] = self.pool.models(writes)
        return out

    def replays(self, z: np.ndarray, delays: np.ndarray) -> list[Any]:
        models = self.models(z)
        self.n_evals += len(models)
        return [self.replayer.replay(models, log, delays) for log in self.logs]

    def residuals(self, z: np.ndarray, delays: np.ndarray) -> np.ndarray:
        """Residuals (simulated - measured) of the fitted joints, shape (M, J, N) with N
        samples over episodes. More than ``MAX_BATCH`` candidates are replayed in batches of
        that many (each rollout starts cold, so the batching changes no bit)."""
        z = np.atleast_2d(z)
        delays = np.asarray(delays, dtype=float).reshape(-1)
        if z.shape[0] > MAX_BATCH:
            return np.concatenate(
                [
                    self.residuals(z[i : i + MAX_BATCH], delays[i : i + MAX_BATCH])
                    for i in range(0, z.shape[0], MAX_BATCH)
                ]
            )
        parts = [
            res.q - tgt[None]
            for res, tgt in zip(self.replays(z, delays), self.targets, strict=True)
        ]
        r = np.concatenate(parts, axis=1).transpose(0, 2, 1)[:, self.rows, :]
        out: np.ndarray = np.where(np.isfinite(r), np.clip(r, -10.0, 10.0), 10.0)
        return out

    def saturation(self, z: np.ndarray, delay: float) -> np.ndarray:
        """Per fitted joint, the fraction of samples whose actuator force is at its limit."""
        from simgap.sim.model import actuator_for_joint

        m = self.replayer.model
        res = self.replays(z[None], np.array([delay]))
        fitted = self.values(z)  # (J, K): a fitted force limit is the candidate's own
        frac = np.zeros(self.J)
        for a, j in enumerate(self.joints):
            act = actuator_for_joint(m, j)
            if not m.actuator_forcelimited[act]:
                continue
            lim = np.abs(m.actuator_forcerange[act])
            if FORCE_KIND in self.kinds:
                lim = np.full(2, fitted[a, self.kinds.index(FORCE_KIND)])
            col = self.rows[a]
            f = np.concatenate([r.force[0, :, col] for r in res])
            frac[a] = float(np.mean((f >= 0.999 * lim[1]) | (f <= -0.999 * lim[0])))
        return frac

    def close(self) -> None:
        self.replayer.close()
