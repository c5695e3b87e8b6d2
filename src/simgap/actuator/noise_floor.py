"""The noise floor of a joint identification: what a perfect model of the rig still misses.

Per joint, four parts in quadrature: encoder quantisation, sampling (timestamp error x joint
speed), the replay's numerical error (its step against a quarter of it) and its chaos (the
change of the replay for a change of the commands at the size of float rounding). See
``noise_floor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CHAOS_EPS_RAD = 1e-6
"""Command perturbation of the chaos floor [rad] (float32 rounding of a command is ~1e-7)."""


def noise_floor(problem: Any, encoder_rad: float) -> dict[str, dict[str, float]]:
    """Per joint: ``quantisation_rad``, ``sampling_rad``, ``numerical_rad``, ``chaos_rad``,
    ``total_rad``.

    Quantisation is one encoder count / sqrt(12); sampling the RMS speed times the RMS
    timestamp error against a uniform grid (float32 timestamps); numerical the RMS
    difference between the nominal model replayed at its step and at a quarter of it,
    times 4/3 (Richardson: for an error linear in the step, e(h) - e(h/4) = 3/4 e(h), so
    this is the replay's distance from continuous time); chaos the RMS change of the
    nominal replay when its commands move by ``CHAOS_EPS_RAD`` (Gaussian, fixed seed): a
    stiff servo at a coarse physics step is numerically chaotic, so two replays that differ
    by rounding part by this much, and no model fits the data closer than it.
    """
    import dataclasses

    from simgap.sim.replay import Replayer

    fine = Replayer.build(problem.spec, problem.all_joints, interp=problem.interp,
                          physics_dt=problem.replayer.physics_dt / 4, nthread=1,
                          source=problem.model_path, clock=problem.replayer.clock)
    try:
        num, samp, chaos = [], [], []
        rng = np.random.default_rng(0)
        for log, tgt in zip(problem.logs, problem.targets, strict=True):
            qa = problem.replayer.replay(None, log).q[0][:, problem.rows]
            qb = fine.replay(None, log).q[0][:, problem.rows]
            num.append(qa - qb)
            moved = dataclasses.replace(log, commands=np.asarray(log.commands) + CHAOS_EPS_RAD
                                        * rng.standard_normal(np.shape(log.commands)))
            qc = problem.replayer.replay(None, moved).q[0][:, problem.rows]
            chaos.append(np.where(np.isfinite(qc - qa), qc - qa, 0.0))
            n = np.arange(log.t.size)
            fit = np.polyfit(n, log.t, 1)
            terr = log.t - np.polyval(fit, n)
            speed = np.gradient(tgt[:, problem.rows], log.t, axis=0)
            samp.append(speed * float(np.sqrt(np.mean(terr ** 2))))
    finally:
        fine.close()
    dn = np.concatenate(num)
    ds = np.concatenate(samp)
    dc = np.concatenate(chaos)
    quant = encoder_rad / np.sqrt(12.0)
    out = {}
    for a, j in enumerate(problem.joints):
        n_rms = float(np.sqrt(np.mean(dn[:, a] ** 2))) * 4.0 / 3.0
        s_rms = float(np.sqrt(np.mean(ds[:, a] ** 2)))
        c_rms = float(np.sqrt(np.mean(dc[:, a] ** 2)))
        out[j] = {"quantisation_rad": float(quant), "sampling_rad": s_rms,
                  "numerical_rad": n_rms, "chaos_rad": c_rms,
                  "total_rad": float(np.sqrt(quant ** 2 + s_rms ** 2 + n_rms ** 2
                                             + c_rms ** 2))}
    return out
