"""The recorded episodes against ManiSkill: replay, fit the controller's gains, export if proven.

One call for ``simgap maniskill replay``: the episodes but the last are fitted
(``simgap.maniskill.fit``; the command delay is profiled at the fitted gains, and while its
interval excludes the delay they were fitted at, they are refitted at its best), the last is
held out to prove the exported controller config (``simgap.maniskill.export``), and the
verdict is the one rule of ``simgap.fit.verdict`` on the worst joint.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.maniskill.export import export_controller
from simgap.maniskill.fit import fit_gains, profile_delay, verdict
from simgap.maniskill.replay import ManiSkillReplayer
from simgap.series import Trajectory

MAX_DELAY_ROUNDS = 5
"""Gain refits at most, each at the best delay the last one's profile gave."""


def _inside(x: float, interval: tuple[float, float]) -> bool:
    return interval[0] - 1e-12 <= x <= interval[1] + 1e-12


def check_in_maniskill(
    trajs: Sequence[Trajectory],
    *,
    agent: str,
    encoder_rad: float,
    physics_dt_s: float,
    out: Path,
    max_fit: int = 2,
) -> dict[str, Any]:
    """Replay ``trajs`` in ManiSkill with ``agent``'s ``pd_joint_pos`` controller, fit its
    gains on up to ``max_fit`` episodes, prove the fit on the last and write
    ``out / maniskill_controller.json`` when it replays better.

    Args:
        trajs: recorded episodes (model joint names, radians), two or more.
        agent: the ManiSkill agent uid.
        encoder_rad: one encoder count [rad] (the floor is a count / sqrt 12).
        physics_dt_s: the physics step of the replay [s].
        out: the folder written into.

    Returns:
        A JSON-able result: verdict, per-joint figures, the identified gains with their
        95 % intervals, the proof and the export (path or the reason it was not offered).
    """
    if len(trajs) < 2:
        raise InputError(
            file=trajs[0].source if trajs else None,
            field="episodes",
            expected="two or more episodes (one is held out to prove the fit)",
            got=len(trajs),
            fix="record another episode",
        )
    dt = float(np.median(np.diff(trajs[0].t)))
    replayer = ManiSkillReplayer(control_dt_s=dt, physics_dt_s=physics_dt_s, agent=agent)
    try:
        fitted, held = list(trajs[:-1])[:max_fit], [trajs[-1]]
        fit = fit_gains(replayer, fitted, encoder_rad=encoder_rad)
        # the command delay, profiled at the fitted gains; while its interval excludes the
        # delay the gains were fitted at, they are refitted at its best (a late arm otherwise
        # passes for a slow drive, and a drive fitted at no delay hides part of it: a planted
        # 50 ms went 0 -> 30 -> 40 ms over the first two rounds)
        delay = profile_delay(replayer, fitted, fit.fitted, encoder_rad=encoder_rad)
        rounds = 0
        while not _inside(fit.delay_s, delay.interval_s) and rounds < MAX_DELAY_ROUNDS:
            fit = fit_gains(replayer, fitted, encoder_rad=encoder_rad, delay_s=delay.best_s)
            delay = profile_delay(replayer, fitted, fit.fitted, encoder_rad=encoder_rad)
            rounds += 1
        v = verdict(fit.nominal_rms_rad, fit.fitted_rms_rad, fit.floor_rad)
        path, proof, said = export_controller(
            replayer, fit, held, out / "maniskill_controller.json"
        )
        iv = {n: list(fit.interval(n)) for n in fit.estimate.names}
        return {
            "branch": "maniskill_replay",
            "verdict": v,
            "agent": agent,
            "control_freq_hz": replayer.control_freq,
            "sim_freq_hz": replayer.sim_freq,
            "floor_rad": fit.floor_rad,
            "command_delay_s": fit.delay_s,
            "delay_best_s": delay.best_s,
            "delay_interval_95_s": list(delay.interval_s),
            "delay_refits": rounds,
            "delay_settled": _inside(fit.delay_s, delay.interval_s),
            "nominal_rms_rad": dict(zip(fit.joints, fit.nominal_rms_rad.tolist(), strict=True)),
            "fitted_rms_rad": dict(zip(fit.joints, fit.fitted_rms_rad.tolist(), strict=True)),
            "identified": {
                n: {"value": float(val), "interval_95": iv[n], "nominal": float(nom)}
                for n, val, nom in zip(
                    fit.estimate.names, fit.estimate.values, fit.fit.nominal, strict=True
                )
            },
            "episodes_fitted": list(fit.episodes),
            "episodes_held_out": list(proof.episodes),
            "held_out_nominal_rms_rad": dict(
                zip(fit.joints, proof.nominal_rms_rad.tolist(), strict=True)
            ),
            "held_out_exported_rms_rad": dict(
                zip(fit.joints, proof.exported_rms_rad.tolist(), strict=True)
            ),
            "export": str(path) if path is not None else None,
            "export_note": said,
        }
    finally:
        replayer.close()
