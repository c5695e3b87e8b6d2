"""One bench episode simulated: wide-band excitation targets, the physics sub-steps a
recorder's clock gives, the episode under per-joint command delays, and the encoder's
whole counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simgap.demo.twin import JOINTS
from simgap.errors import InputError
from simgap.sim.scene import Model, forward, name_id, new_data, position_actuators, step
from simgap.units import ENCODER_RESOLUTION_RAD

SETTLE_S = 1.0


RECORDER_CLOCKS: tuple[str, ...] = ("exact", "step", "jitter")
"""How a bench's recorder places each frame's read and command against the physics steps
(``make_so101_bench``); the replay must not share the bench's convention by construction."""


_EPS_T = 1e-9


def excitation(
    rng: np.random.Generator,
    t: np.ndarray,
    lo: float,
    hi: float,
    gripper: bool,
    amplitude: float = 1.0,
    max_hz: float = 4.0,
) -> np.ndarray:
    """Wide-band targets [rad] at times ``t`` inside [lo, hi]: a random-phase multisine of
    12 log-spaced frequencies (0.08-4 Hz, amplitude ~ 1/sqrt(f)) plus holds that step to a new
    level every 1-3 s. Body joints use 70% of their range around its middle, the gripper
    10-90%. ``amplitude`` scales that span and ``max_hz`` caps the frequencies (a gentler
    motion: less of the servo's time at its force limit)."""
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    span = amplitude * (0.8 * half if gripper else 0.7 * half)
    f = np.exp(np.linspace(np.log(0.08), np.log(max_hz), 12)) * rng.uniform(0.9, 1.1, 12)
    amp = 1.0 / np.sqrt(f)
    ph = rng.uniform(0, 2 * np.pi, 12)
    sines = (amp[None, :] * np.sin(2 * np.pi * f[None, :] * t[:, None] + ph[None, :])).sum(1)
    sines /= np.abs(sines).max()
    steps = np.zeros_like(t)
    edge = 0.0
    while edge < t[-1]:
        nxt = edge + rng.uniform(1.0, 3.0)
        steps[(t >= edge) & (t < nxt)] = rng.uniform(-1, 1)
        edge = nxt
    return mid + span * np.clip(0.6 * sines + 0.4 * steps, -1, 1)


def schedule(
    n_frames: int,
    fps: float,
    dt: float,
    delays: np.ndarray,
    clock: str = "exact",
    offsets: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Physics sub-steps of one episode: (step length [s], command frame per joint in force
    during the step (-1: the first goal, before any arrival), frame read at the step's
    start or -1).

    ``clock`` (``RECORDER_CLOCKS``): ``exact`` splits a step at each read and arrival;
    ``step`` moves both up to the next physics step (a simulator stepped on its grid);
    ``jitter`` reads frame k at ``k / fps + offsets[k]`` and splits there."""
    t_obs = np.arange(n_frames) / fps
    if offsets is not None:
        t_obs = t_obs + offsets
    t_end = n_frames / fps
    grid = np.arange(-SETTLE_S, t_end + dt / 2, dt)
    arrivals = t_obs[:, None] + delays[None, :]
    if clock == "step":

        def snap(x: np.ndarray) -> np.ndarray:
            i = np.ceil((x - grid[0]) / dt - 1e-6).astype(int)
            return np.where(i < grid.size, grid[np.minimum(i, grid.size - 1)], grid[0] + i * dt)

        t_obs, arrivals = snap(t_obs), snap(arrivals)
    flat = arrivals.ravel()
    pts = np.unique(np.concatenate([grid, t_obs, flat[flat < t_end]]))
    keep = np.concatenate([[True], np.diff(pts) > _EPS_T])
    pts = pts[keep]
    starts, ends = pts[:-1], pts[1:]
    cmd = np.stack(
        [
            np.searchsorted(arrivals[:, j], starts + _EPS_T, side="right") - 1
            for j in range(delays.size)
        ],
        axis=1,
    )
    at = np.clip(np.searchsorted(starts, t_obs - _EPS_T), 0, starts.size - 1)
    obs = np.full(starts.size, -1)
    hit = np.abs(starts[at] - t_obs) < 2 * _EPS_T
    obs[at[hit]] = np.arange(n_frames)[hit]
    return ends - starts, cmd, obs


def simulate(
    m: Model,
    targets: np.ndarray,
    fps: float,
    delays: np.ndarray,
    clock: str = "exact",
    offsets: np.ndarray | None = None,
    joints: Sequence[str] = JOINTS,
    relative_bound: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """Run one episode; returns (q at every frame's read (T, J) [rad], contact fraction).

    ``targets`` (T, J) [rad] are the goals sent at each frame to ``joints`` (any model whose
    joints have position actuators: the SO-101's by default), held; joint j receives them
    ``delays[j]`` seconds late; ``clock`` and ``offsets`` as ``schedule``. The episode
    starts at the first goal, held for ``SETTLE_S`` before t = 0. ``relative_bound`` (J,)
    [rad]: each goal is clipped to the present reading (whole counts) +- it when the frame
    is read, before it is sent (LeRobot's ``max_relative_target``); ``targets`` is not
    changed.
    """
    targets = np.array(targets, dtype=float)
    acts, dofs = position_actuators(m, joints)
    qadr = [int(m.jnt_qposadr[name_id(m, "joint", j)]) for j in joints]
    d = new_data(m)
    d.qpos[qadr] = targets[0]
    forward(m, d)
    h, cmd, obs = schedule(len(targets), fps, m.opt.timestep, delays, clock, offsets)
    if np.unique(obs[obs >= 0]).size != len(targets):
        raise InputError(
            field="clock",
            expected="one physics step start per frame read",
            got=f"{np.unique(obs[obs >= 0]).size} of {len(targets)} frames",
            fix="use a physics step shorter than the frame period",
        )
    out = np.empty_like(targets)
    nominal_dt = m.opt.timestep
    contacts = 0
    cols = np.arange(len(joints))
    try:
        for i in range(len(h)):
            if obs[i] >= 0:
                out[obs[i]] = d.qpos[qadr]
                if relative_bound is not None:  # the follower clips against what it reads
                    now = quantise(out[obs[i]])
                    targets[obs[i]] = quantise(
                        now + np.clip(targets[obs[i]] - now, -relative_bound, relative_bound)
                    )
            d.ctrl[acts] = targets[np.maximum(cmd[i], 0), cols]
            m.opt.timestep = h[i]
            step(m, d)
            contacts += d.ncon > 0
    finally:
        m.opt.timestep = nominal_dt
    if not np.all(np.isfinite(out)):
        raise InputError(
            field="simulation",
            expected="a finite state",
            got="nan/inf",
            fix="the fault multipliers make the model unstable; narrow them",
        )
    return out, contacts / len(h)


def quantise(q: np.ndarray, resolution_rad: float = ENCODER_RESOLUTION_RAD) -> np.ndarray:
    """Whole encoder counts of ``resolution_rad`` (default one STS3215 count, 4096 per
    turn) [rad]."""
    return np.rint(q / resolution_rad) * resolution_rad
