"""Proof of a model patch: replay the nominal and the patched model on held-out episodes.

A patch simgap tells the user to apply must be stable (finite, never diverging) and must
replay the held-out recordings better than the nominal model did. ``prove_patch`` runs both
models open loop on the same recorded commands, the way a user's simulation would run them:
the model's own timestep and dynamics (its native actuator ``delay`` and filters included),
the control written once per physics step as the average of the recorded command held over
that step (a command that arrives inside a step counts for the part of the step after it),
the state started at the first recorded position at rest. The error is the RMS over frames of
replayed minus recorded position, per joint.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simgap.errors import InputError
from simgap.series import Trajectory
from simgap.sim.actuator_patch import ActuatorSettings, patch_notes, write_actuator_patch
from simgap.sim.model import actuator_for_joint, compile_spec, load_spec, object_id, strip_visuals

DIVERGED_RAD = 1.0
"""Replay error [rad] beyond which a joint counts as diverged (no servo error on a working
arm reaches a radian when the nominal model tracks it)."""
_FILTERS = (int(mujoco.mjtDyn.mjDYN_FILTER), int(mujoco.mjtDyn.mjDYN_FILTEREXACT))
GAIN_MIN = 0.05
"""The patched total RMS must be at least 5 % (or half an encoder count) below nominal."""
WORSE_TOLERANCE = 0.10
"""A patched joint may replay at most 10 % worse than nominal (or one encoder count, if
larger) while the whole arm replays better."""


@dataclass(frozen=True)
class PatchProof:
    """The verdict on a patch and its numbers.

    Attributes:
        stable: every replay of the patched model stayed finite and within ``DIVERGED_RAD``.
        better: the patched model's total RMS is below the nominal's by ``GAIN_MIN`` (or
            half an encoder count) and no joint is worse than ``WORSE_TOLERANCE`` allows.
        nominal_rms_rad: joint -> RMS replay error of the nominal model [rad].
        patched_rms_rad: joint -> RMS replay error of the patched model [rad] (nan where the
            replay diverged).
        nominal_total_rad: RMS over every joint and frame, nominal [rad].
        patched_total_rad: the same, patched [rad].
        diverged_at_s: time into the first episode where the patched replay diverged [s],
            or None.
        n_episodes: held-out episodes replayed.
        reason: one sentence, the numbers behind the verdict.
    """

    stable: bool
    better: bool
    nominal_rms_rad: Mapping[str, float]
    patched_rms_rad: Mapping[str, float]
    nominal_total_rad: float
    patched_total_rad: float
    diverged_at_s: float | None
    n_episodes: int
    reason: str

    @property
    def passed(self) -> bool:
        """Stable and better: only then may the patch be offered."""
        return self.stable and self.better

    def to_dict(self) -> dict[str, Any]:
        """JSON form (non-finite numbers as None)."""

        def f(x: float) -> float | None:
            return float(x) if math.isfinite(x) else None

        return {
            "passed": self.passed,
            "stable": self.stable,
            "better": self.better,
            "nominal_rms_rad": {k: f(v) for k, v in self.nominal_rms_rad.items()},
            "patched_rms_rad": {k: f(v) for k, v in self.patched_rms_rad.items()},
            "nominal_total_rad": f(self.nominal_total_rad),
            "patched_total_rad": f(self.patched_total_rad),
            "diverged_at_s": self.diverged_at_s,
            "n_episodes": self.n_episodes,
            "reason": self.reason,
        }


def step_controls(t: np.ndarray, q_cmd: np.ndarray, dt: float, n_steps: int) -> np.ndarray:
    """Per physics step [k dt, (k+1) dt), the average of the held command over it, (N, J).

    Commands hold from their own time ``t[i]`` until ``t[i+1]``; before ``t[0]`` the first
    command holds.
    """
    edges = np.arange(n_steps + 1) * dt + float(t[0])
    # integral of the held command from t[0] to each edge, per joint
    seg = np.diff(t)
    cum = np.concatenate(
        [np.zeros((1, q_cmd.shape[1])), np.cumsum(q_cmd[:-1] * seg[:, None], axis=0)]
    )
    idx = np.clip(np.searchsorted(t, edges, side="right") - 1, 0, len(t) - 1)
    integral = cum[idx] + q_cmd[idx] * (edges - t[idx])[:, None]
    return np.diff(integral, axis=0) / dt


def _hold_history(m: mujoco.MjModel, d: mujoco.MjData) -> None:
    """Start each delayed actuator's control history and each filter's state at its
    current control (the arm held its first goal before the episode), not at MuJoCo's
    zeros."""
    for a in range(m.nu):
        n = int(m.actuator_history[a, 0])
        if n > 0:
            mujoco.mj_initCtrlHistory(m, d, a, None, np.full((n, 1), d.ctrl[a]))
        if m.actuator_dyntype[a] in _FILTERS and m.actuator_actadr[a] >= 0:
            d.act[m.actuator_actadr[a]] = d.ctrl[a]


def replay(
    model: mujoco.MjModel,
    episode: Trajectory,
    clock: str = "exact",
) -> tuple[np.ndarray, float | None]:
    """Replay one episode open loop; returns (q at the recorded frames (T, J) [rad], the
    time [s] into the episode where it diverged, or None). A diverged replay is nan from
    there on. ``clock`` (``simgap.sim.clock.CLOCKS``): ``step`` reads each frame and applies
    its command on the first physics step at or after its stamp."""
    from simgap.sim.clock import check_clock

    m = copy.copy(model)
    dt = float(m.opt.timestep)
    names = list(episode.joint_names)
    qadr = [int(m.jnt_qposadr[object_id(m, "joint", j)]) for j in names]
    acts = [actuator_for_joint(m, j) for j in names]
    t = np.asarray(episode.t, dtype=float)
    if check_clock(clock) == "step":
        steps = (t - t[0]) / dt
        near = np.abs(steps - np.rint(steps)) < 1e-6
        t = t[0] + np.ceil(np.where(near, np.rint(steps), steps)) * dt
        if np.any(np.diff(t) <= 0):
            raise InputError(
                field="clock",
                expected="frames longer than the physics step under the 'step' clock",
                got=f"physics step {dt:g} s",
                fix='set [control] clock = "exact" in rig.toml',
            )
    rel = t - t[0]
    n_steps = int(math.ceil(rel[-1] / dt)) + 1
    ctrl = step_controls(t, np.asarray(episode.q_cmd, dtype=float), dt, n_steps)
    d = mujoco.MjData(m)
    d.qpos[qadr] = episode.q[0]
    d.ctrl[acts] = ctrl[0]
    _hold_history(m, d)
    mujoco.mj_forward(m, d)
    step_times = np.arange(n_steps + 1) * dt
    traj = np.empty((n_steps + 1, len(names)))
    traj[0] = d.qpos[qadr]
    diverged = None
    for k in range(n_steps):
        d.ctrl[acts] = ctrl[k]
        mujoco.mj_step(m, d)
        traj[k + 1] = d.qpos[qadr]
        if not np.all(np.isfinite(d.qpos)) or not np.all(np.isfinite(d.qvel)):
            traj[k + 1 :] = np.nan
            diverged = float(step_times[k + 1])
            break
    out = np.stack([np.interp(rel, step_times, traj[:, i]) for i in range(len(names))], axis=1)
    if diverged is None:
        bad = np.nonzero(np.abs(out - episode.q).max(axis=1) > DIVERGED_RAD)[0]
        if bad.size:
            diverged = float(rel[bad[0]])
    return out, diverged


def _rms(errs: Sequence[np.ndarray]) -> tuple[np.ndarray, float]:
    e = np.concatenate(errs, axis=0)
    return np.sqrt(np.mean(e**2, axis=0)), float(np.sqrt(np.mean(e**2)))


def prove_patch(
    nominal_model: mujoco.MjModel,
    patched_model: mujoco.MjModel,
    held_out_episodes: Sequence[Trajectory],
    *,
    encoder_rad: float = 2 * math.pi / 4096,
    scored_from_s: Sequence[float] | None = None,
    clock: str = "exact",
) -> PatchProof:
    """Replay both models on held-out episodes; see ``PatchProof`` for the verdict.

    Args:
        nominal_model: the rig's model as given.
        patched_model: the model with the patch applied.
        held_out_episodes: episodes (or stretches of episodes) the fit did not use, joints
            named as in the models.
        encoder_rad: one encoder count [rad], the smallest difference that counts.
        scored_from_s: per episode, the seconds from its first frame before which frames
            are replayed but not scored (default 0): a stretch cut out of a moving episode
            starts at rest, and its first second lets that start settle (a divergence
            counts wherever it happens).
        clock: the recorder's clock both models replay with (``replay``).
    """
    if not held_out_episodes:
        raise InputError(
            field="held_out_episodes",
            expected="at least one held-out episode",
            got="none",
            fix="hold out an episode from the fit to prove the patch",
        )
    names = list(held_out_episodes[0].joint_names)
    e_nom, e_pat = [], []
    diverged_at: float | None = None
    skip = list(scored_from_s) if scored_from_s is not None else [0.0] * len(held_out_episodes)
    if len(skip) != len(held_out_episodes):
        raise InputError(
            field="scored_from_s",
            expected=f"{len(held_out_episodes)} values (one per episode)",
            got=f"{len(skip)}",
        )
    for ep, s0 in zip(held_out_episodes, skip, strict=True):
        qn, _ = replay(nominal_model, ep, clock)
        qp, div = replay(patched_model, ep, clock)
        if div is not None and diverged_at is None:
            diverged_at = div
        keep = np.asarray(ep.t, dtype=float) - float(ep.t[0]) >= s0 - 1e-9
        e_nom.append((qn - ep.q)[keep])
        e_pat.append((qp - ep.q)[keep])
    rn, tn = _rms(e_nom)
    rp, tp = _rms(e_pat)
    scored = sum(
        float(ep.t[-1] - ep.t[0]) - s0 for ep, s0 in zip(held_out_episodes, skip, strict=True)
    )
    held = f"{len(held_out_episodes)} held-out stretch(es), {scored:.0f} s scored"
    stable = diverged_at is None
    allow = np.maximum(rn * (1 + WORSE_TOLERANCE), rn + encoder_rad)
    worse = [j for j, a, b in zip(names, rp, allow, strict=True) if not a <= b]
    margin = max(GAIN_MIN * tn, 0.5 * encoder_rad)
    better = stable and tp < tn - margin and not worse
    if not stable:
        reason = (
            f"the patched model diverges {diverged_at:.2f} s into a held-out episode "
            f"(nominal replays at {tn * 1e3:.3g} mrad RMS)"
        )
    elif not tp < tn - margin:
        reason = (
            f"the patched model replays {held} at {tp * 1e3:.3g} mrad "
            f"RMS, not better than the nominal {tn * 1e3:.3g} mrad by the "
            f"{margin * 1e3:.2g} mrad a real improvement needs"
        )
    elif worse:
        reason = (
            f"better overall ({tp * 1e3:.3g} vs {tn * 1e3:.3g} mrad RMS) but worse on "
            + ", ".join(
                f"{j} ({rp[names.index(j)] * 1e3:.3g} vs {rn[names.index(j)] * 1e3:.3g} mrad)"
                for j in worse
            )
        )
    else:
        reason = (
            f"stable and better on {held}: "
            f"{tp * 1e3:.3g} mrad RMS against the nominal {tn * 1e3:.3g} mrad"
        )
    return PatchProof(
        stable=stable,
        better=better,
        nominal_rms_rad=dict(zip(names, rn.tolist(), strict=True)),
        patched_rms_rad=dict(zip(names, rp.tolist(), strict=True)),
        nominal_total_rad=tn,
        patched_total_rad=tp,
        diverged_at_s=diverged_at,
        n_episodes=len(held_out_episodes),
        reason=reason,
    )


@dataclass(frozen=True)
class PatchOffer:
    """A written patch and its proof; ``path`` is None when the proof failed (the file is
    then removed, so nothing unproven is left to apply).

    Attributes:
        path: the patched MJCF, or None.
        proof: the replay verdict and its numbers.
        notes: what the patch left out (a filter faster than the physics step, nan values).
    """

    path: Path | None
    proof: PatchProof
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "path": None if self.path is None else str(self.path),
            "proof": self.proof.to_dict(),
            "notes": list(self.notes),
        }


DYNAMICS = ("kp", "kv", "lag_s", "force_limit", "damping", "frictionloss", "armature")
"""The settings that make a joint's change one a held-out replay must confirm (a joint
patched with its delay alone is proven with the whole patch)."""


def offer_patch(
    original: str | Path,
    out_path: str | Path,
    settings: Mapping[str, ActuatorSettings],
    held_out_episodes: Sequence[Trajectory],
    *,
    encoder_rad: float = 2 * math.pi / 4096,
    scored_from_s: Sequence[float] | None = None,
    clock: str = "exact",
    unidentified: Mapping[str, Mapping[str, str]] | None = None,
) -> PatchOffer:
    """Write the patch, prove it on held-out episodes, keep it only if the proof passes.

    ``unidentified`` (joint -> {kind: reason}, the fit's ``not_identifiable``) goes to the
    patch's header, which names each value baked though the fit did not identify it.

    Every joint must earn its own change: a joint whose dynamics the patch changes and
    whose held-out replay is not better than the nominal model's by half an encoder count
    is left exactly as the model has it (its delay too), and the patch of the remaining
    joints is written and proven again; where that one fails and the whole patch passed,
    the whole patch is offered. A value can be right and still not help: a joint whose
    damping is identified but whose kv is not (a force clamp masks it) may replay worse
    with the right damping than with the nominal one, whose errors partly cancel, and a
    joint given the arm's true delay but left with the wrong gains may replay worse than
    with neither. The notes name each joint left out, with its numbers.
    """
    nominal = compile_spec(strip_visuals(load_spec(original)), original)
    notes = list(patch_notes(settings, float(nominal.opt.timestep)))

    def write_and_prove(chosen: Mapping[str, ActuatorSettings]) -> tuple[Path, PatchProof]:
        out = write_actuator_patch(original, out_path, chosen, unidentified)
        proof = prove_patch(
            nominal,
            compile_spec(strip_visuals(load_spec(out)), out),
            held_out_episodes,
            encoder_rad=encoder_rad,
            scored_from_s=scored_from_s,
            clock=clock,
        )
        return out, proof

    out, proof = write_and_prove(settings)
    unearned = [
        j
        for j, s in settings.items()
        if _changes_dynamics(s)
        and j in proof.nominal_rms_rad
        and proof.stable
        and not proof.patched_rms_rad[j] < proof.nominal_rms_rad[j] - 0.5 * encoder_rad
    ]
    if unearned:
        kept = {j: s for j, s in settings.items() if j not in unearned}
        said = [
            f"{j} {proof.patched_rms_rad[j] * 1e3:.3g} mrad RMS patched against "
            f"{proof.nominal_rms_rad[j] * 1e3:.3g} nominal"
            for j in unearned
        ]
        reduced = None
        if kept:
            out, reduced = write_and_prove(kept)
        if reduced is not None and reduced.passed:
            notes.append(
                "left as the model has them: "
                + ", ".join(unearned)
                + ": on the held-out episodes "
                + "; ".join(said)
                + " (a joint's "
                f"change must gain half an encoder count, "
                f"{0.5 * encoder_rad * 1e3:.2g} mrad)"
            )
            proof = reduced
        elif proof.passed:  # the whole patch passed and the reduced one does not
            out = write_actuator_patch(original, out_path, settings, unidentified)
            notes.append(
                "offered whole: without the changes of "
                + ", ".join(unearned)
                + " ("
                + "; ".join(said)
                + ") the patch does not pass ("
                + (reduced.reason if reduced is not None else "nothing left")
                + ")"
            )
        else:
            proof = reduced if reduced is not None else proof
    if not proof.passed:
        out.unlink(missing_ok=True)
        return PatchOffer(path=None, proof=proof, notes=tuple(notes))
    return PatchOffer(path=out, proof=proof, notes=tuple(notes))


def _changes_dynamics(s: ActuatorSettings) -> bool:
    return any(getattr(s, k) is not None for k in DYNAMICS)
