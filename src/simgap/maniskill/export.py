"""The identified gains as ManiSkill controller config, proven by replay before it is offered.

The file holds the keyword arguments of the agent's controller config class
(``PDJointPosControllerConfig`` for the SO-100's ``pd_joint_pos``): the agent's own config with
the fitted ``stiffness``, ``damping`` and ``force_limit`` per joint, so that
``PDJointPosControllerConfig(**data["kwargs"])`` is the controller to train with (the same
three numbers go into the agent's delta modes, whose configs share them). Before it is
written, the held-out recordings are replayed through ManiSkill with exactly those keyword
arguments (built by ManiSkill's own class) and must replay better than the agent's own
controller; otherwise nothing is offered and the reason is returned with the numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.maniskill.fit import GainFit, replay_rms
from simgap.maniskill.replay import ManiSkillReplayer
from simgap.outputs import atomic_write_json
from simgap.series import Trajectory

FORMAT = "simgap.maniskill_controller/1"
"""The ``format`` of the written file."""


@dataclass(frozen=True)
class ReplayProof:
    """Held-out replays of the exported config against the agent's own.

    Attributes:
        episodes: the held-out recordings' episode indices.
        nominal_rms_rad: replay RMS error per joint with the agent's own gains [rad], (J,).
        exported_rms_rad: the same with the exported config [rad], (J,).
        better: whether the exported config replays the held-out recordings better (lower
            RMS over all joints).
        gap_closed: the fraction of the nominal's error above the floor that the export
            removes ((nominal - exported) / (nominal - floor), RMS over all joints).
    """

    episodes: tuple[int, ...]
    nominal_rms_rad: np.ndarray
    exported_rms_rad: np.ndarray
    better: bool
    gap_closed: float


def controller_kwargs(replayer: ManiSkillReplayer, fit: GainFit) -> dict[str, Any]:
    """The controller config's keyword arguments with the fitted gains (JSON-able)."""
    return replayer.config_kwargs(fit.fitted)


def prove(
    replayer: ManiSkillReplayer,
    fit: GainFit,
    kwargs: dict[str, Any],
    held_out: Sequence[Trajectory],
) -> ReplayProof:
    """Replay ``held_out`` with the agent's own controller and with ``kwargs``."""
    if not held_out:
        raise InputError(
            field="held_out",
            expected="at least one recording the fit did not see",
            got=0,
            fix="record another episode, or fit on fewer",
        )
    # both at the delay the gains were fitted at: the arm's lateness is not the controller's
    nom = replay_rms(replayer, held_out, fit.nominal, fit.delay_s)
    exp = replay_rms(replayer, held_out, kwargs, fit.delay_s)
    n_all, e_all = float(np.sqrt(np.mean(nom**2))), float(np.sqrt(np.mean(exp**2)))
    gap = (n_all - e_all) / max(n_all - fit.floor_rad, 1e-300)
    return ReplayProof(
        episodes=tuple(t.episode for t in held_out),
        nominal_rms_rad=nom,
        exported_rms_rad=exp,
        better=e_all < n_all,
        gap_closed=float(gap),
    )


def config_document(
    replayer: ManiSkillReplayer, fit: GainFit, kwargs: dict[str, Any], proof: ReplayProof
) -> dict[str, Any]:
    """The file's content: the kwargs, what each number is, and its proof."""
    return {
        "format": FORMAT,
        "agent": replayer.agent_uid,
        "control_mode": replayer.control_mode,
        "class": replayer.config_class,
        "kwargs": kwargs,
        "control_freq_hz": replayer.control_freq,
        "sim_freq_hz": replayer.sim_freq,
        "identified": fit.fit.table(),
        "fit": {
            "episodes": list(fit.episodes),
            "floor_rad": fit.floor_rad,
            "nominal_rms_rad": dict(zip(fit.joints, fit.nominal_rms_rad.tolist(), strict=True)),
            "fitted_rms_rad": dict(zip(fit.joints, fit.fitted_rms_rad.tolist(), strict=True)),
            "force_limit_effect_rad": dict(
                zip(fit.joints, fit.force_effect_rad.tolist(), strict=True)
            ),
            # the real arm's lateness, held in the fit and the proof: no controller
            # setting, it belongs in training as a delay of the action (0: none seen)
            "command_delay_s": fit.delay_s,
        },
        "proof": {
            "held_out_episodes": list(proof.episodes),
            "nominal_rms_rad": dict(zip(fit.joints, proof.nominal_rms_rad.tolist(), strict=True)),
            "exported_rms_rad": dict(zip(fit.joints, proof.exported_rms_rad.tolist(), strict=True)),
            "gap_closed": proof.gap_closed,
        },
    }


def export_controller(
    replayer: ManiSkillReplayer,
    fit: GainFit,
    held_out: Sequence[Trajectory],
    path: str | Path,
) -> tuple[Path | None, ReplayProof, str]:
    """Prove the fitted config on ``held_out`` and write it to ``path`` if it replays better.

    Returns:
        (the path written or None, the proof, one sentence saying what was done and why).
    """
    kwargs = controller_kwargs(replayer, fit)
    proof = prove(replayer, fit, kwargs, held_out)
    n = float(np.sqrt(np.mean(proof.nominal_rms_rad**2)))
    e = float(np.sqrt(np.mean(proof.exported_rms_rad**2)))
    if not proof.better:
        return (
            None,
            proof,
            (
                f"not offered: on held-out episodes {list(proof.episodes)} the "
                f"fitted controller replays at {e:.3g} rad RMS, no better than "
                f"the agent's own {n:.3g} rad"
            ),
        )
    out = atomic_write_json(path, config_document(replayer, fit, kwargs, proof))
    return (
        out,
        proof,
        (
            f"{replayer.config_class} written: on held-out episodes "
            f"{list(proof.episodes)} it replays at {e:.3g} rad RMS against the "
            f"agent's own {n:.3g} rad ({proof.gap_closed:.0%} of the gap to the "
            f"floor closed)"
        ),
    )
