"""The noise floor of a joint identification: what a perfect model of the rig still misses
because of the instrument that logged it.

Per joint, in quadrature: encoder quantisation, sampling (timestamp error x joint speed),
the timing jitter of reads inside a frame where the rig states it (jitter x joint speed),
and the start state (the replay's change when its start moves within the encoder's half
count: the recorded first position is all a replay starts from, and a stiff servo at a
coarse physics step carries that error on, or amplifies it). Two properties of the model are
reported beside it and never added to it, since every candidate model shares them: the
discretisation (the replay at its step against a quarter of it) and the chaos (the replay's
change for a change of the commands at the size of float rounding). See ``noise_floor``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

CHAOS_EPS_RAD = 1e-6
"""Command perturbation of the chaos probe [rad] (float32 rounding of a command is ~1e-7)."""

START_DRAWS = 4
"""Start states drawn per episode within the encoder's half count (fixed seed)."""


def noise_floor(
    problem: Any,
    encoder_rad: float,
    jitter_s: float = 0.0,
) -> dict[str, dict[str, float]]:
    """Per joint: ``quantisation_rad``, ``sampling_rad``, ``jitter_rad``,
    ``start_state_rad`` and their ``total_rad`` (the floor); ``discretisation_rad`` and
    ``chaos_rad`` (properties of the model, not in the total).

    Quantisation is one encoder count / sqrt(12); sampling the RMS speed times the RMS
    timestamp error against a uniform grid (float32 timestamps); jitter the RMS speed times
    ``jitter_s`` / sqrt(12) (reads spread uniformly over ``jitter_s`` inside a frame, as the
    rig states); start state the RMS change of the nominal replay over ``START_DRAWS`` start
    positions drawn uniformly within half an encoder count of the recorded one (fixed
    seed). Discretisation is the RMS difference between the nominal model replayed at its
    step and at a quarter of it, times 4/3 (Richardson: for an error linear in the step,
    e(h) - e(h/4) = 3/4 e(h)); chaos the RMS change of the nominal replay when its commands
    move by ``CHAOS_EPS_RAD`` (Gaussian, fixed seed). A recording made at the model's own step
    (a simulated rig) is replayed exactly by the true model whatever the discretisation, so
    that term says how far the model is from continuous time, not how closely a fit can
    come to the data.
    """
    from simgap.sim.replay import Replayer

    fine = Replayer.build(
        problem.spec,
        problem.all_joints,
        interp=problem.interp,
        physics_dt=problem.replayer.physics_dt / 4,
        nthread=1,
        source=problem.model_path,
        clock=problem.replayer.clock,
    )
    rows = problem.rows
    try:
        num, samp, chaos, start, speed_all = [], [], [], [], []
        rng = np.random.default_rng(0)
        for log, tgt in zip(problem.logs, problem.targets, strict=True):
            qa = problem.replayer.replay(None, log).q[0][:, rows]
            qb = fine.replay(None, log).q[0][:, rows]
            num.append(qa - qb)
            moved = dataclasses.replace(
                log,
                commands=np.asarray(log.commands)
                + CHAOS_EPS_RAD * rng.standard_normal(np.shape(log.commands)),
            )
            qc = problem.replayer.replay(None, moved).q[0][:, rows]
            chaos.append(np.where(np.isfinite(qc - qa), qc - qa, 0.0))
            for _ in range(START_DRAWS):
                q0 = np.asarray(log.q0) + rng.uniform(-0.5, 0.5, np.shape(log.q0)) * encoder_rad
                qs = problem.replayer.replay(None, dataclasses.replace(log, q0=q0)).q[0][:, rows]
                start.append(np.where(np.isfinite(qs - qa), qs - qa, 0.0))
            n = np.arange(log.t.size)
            fit = np.polyfit(n, log.t, 1)
            terr = log.t - np.polyval(fit, n)
            speed = np.gradient(tgt[:, rows], log.t, axis=0)
            speed_all.append(speed)
            samp.append(speed * float(np.sqrt(np.mean(terr**2))))
    finally:
        fine.close()

    def rms(parts: list[np.ndarray]) -> np.ndarray:
        out: np.ndarray = np.sqrt(np.mean(np.concatenate(parts) ** 2, axis=0))
        return out

    dn, ds, dc, d0 = rms(num) * 4.0 / 3.0, rms(samp), rms(chaos), rms(start)
    dj = rms(speed_all) * float(jitter_s) / np.sqrt(12.0)
    quant = encoder_rad / np.sqrt(12.0)
    out = {}
    for a, j in enumerate(problem.joints):
        out[j] = {
            "quantisation_rad": float(quant),
            "sampling_rad": float(ds[a]),
            "jitter_rad": float(dj[a]),
            "start_state_rad": float(d0[a]),
            "discretisation_rad": float(dn[a]),
            "chaos_rad": float(dc[a]),
            "total_rad": float(np.sqrt(quant**2 + ds[a] ** 2 + dj[a] ** 2 + d0[a] ** 2)),
        }
    return out
