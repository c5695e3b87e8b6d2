"""One trial's recording: the rig's model with planted faults, driven by the rig's commands.

The commands are the user's own: the ``action`` stream of each episode of the rig's LeRobot
dataset, as recorded. The rig's model, with the trial's faults written in
(``simgap.demo.nominal.apply_truth``), is simulated under them by the bench factory's
recorder (``simulate``: LeRobot's record timing, a command arriving ``delay`` late, held),
at the rig's own frame rate and physics step, under the rig's clock (``[control] clock =
"step"`` on the physics grid, else at the stamps; ``[noise] clock_jitter_s`` read late by a
uniform jitter). Each reading is quantised to the rig's encoder count and written in the
rig's own units, beside the user's commands to the bit, as a LeRobot v3 dataset
(float32 ``timestamp = frame_index / fps``) of the rig's recorded joints.

Episodes: the dataset holds the user's first ``DATASET_EPISODES`` (what the diagnosis fits,
two, and one it proves its patch on); the held-out episode, never in the dataset, is the
next one, or with fewer episodes the last of the dataset (which the diagnosis only proves on).

Layout of a trial folder: ``rig.toml`` (``trial_rig``), ``dataset/``, ``heldout/``,
``truth.json`` (the planted truth, never read by simgap's diagnosis) and, for a faulty
trial, ``truth_model.xml`` (the true model with its delay, for the replay gap).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.demo.bench_sim import quantise, simulate
from simgap.demo.faults import JointTruth, resolve_faults
from simgap.demo.nominal import apply_truth, nominal_model, nominal_params
from simgap.demo.writers import write_lerobot_v3
from simgap.errors import InputError
from simgap.evidence.lerobot import LeRobotDataset, joint_columns, read_lerobot_dataset
from simgap.outputs import atomic_write_json, atomic_write_text
from simgap.rig import Rig
from simgap.selftest.plan import Trial
from simgap.selftest.trial_rig import trial_rig_text

DATASET_EPISODES = 3
"""Episodes of the user's recording in a trial's dataset: the identification fits two
(``simgap.branches.joint_dynamics.MAX_FIT_EPISODES``) and proves its patch on the rest."""

MARKER = ".selftest-trial.json"
"""In each trial folder: what it was synthesised from; a matching one is not redone."""


@dataclass(frozen=True)
class TrialFiles:
    """A synthesised trial on disk.

    Attributes:
        folder: the trial's folder.
        rig: its rig.toml.
        heldout: its held-out LeRobot dataset (one episode).
        truth_model: the true model (faults and delay) as MJCF; None for the null trial.
        truth: per joint, the planted truth (rig joint order).
        episodes: the user's episode indices in the dataset.
        heldout_episode: the user's episode index held out.
    """

    folder: Path
    rig: Path
    heldout: Path
    truth_model: Path | None
    truth: tuple[JointTruth, ...]
    episodes: tuple[int, ...]
    heldout_episode: int


def rig_dataset(rig: Rig) -> LeRobotDataset:
    """The rig's own recording, checked for what a selftest needs.

    Raises:
        InputError: the rig names no dataset, its frame rate is not a whole number, or it
            holds fewer than two episodes.
    """
    if rig.evidence.dataset is None:
        raise InputError(
            file=rig.source,
            field="evidence.dataset",
            expected="the rig's LeRobot dataset (its commands drive the trials)",
            got="nothing",
            fix='add evidence.dataset = "..." to rig.toml (simgap init writes it)',
        )
    ds = read_lerobot_dataset(rig.evidence.dataset)
    if abs(ds.fps - round(ds.fps)) > 1e-9:
        raise InputError(
            file=ds.root / "meta/info.json",
            field="fps",
            expected="a whole number of frames per second (LeRobot's)",
            got=ds.fps,
        )
    if len(ds.episode_indices) < 2:
        raise InputError(
            file=ds.root,
            field="episodes",
            expected="at least 2 episodes (one is held out to measure the patch)",
            got=len(ds.episode_indices),
            fix="record another episode, or point evidence.dataset at a dataset with more",
        )
    return ds


def split_episodes(indices: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """(episodes in the dataset, the held-out one) of the user's episode indices."""
    idx = list(indices)
    if len(idx) > DATASET_EPISODES:
        return tuple(idx[:DATASET_EPISODES]), idx[DATASET_EPISODES]
    return tuple(idx), idx[-1]


def _clock(rig: Rig) -> str:
    if rig.clock == "step":
        return "step"
    return "jitter" if rig.clock_jitter_s > 0 else "exact"


def _episode(
    m: Any, rig: Rig, ds: LeRobotDataset, e: int, delays: np.ndarray, clock: str, seed: int
) -> dict[str, np.ndarray]:
    """One episode in recorded units: the user's actions and the simulated readings."""
    commands = joint_columns(ds, "action", rig, e)  # (T, J) [rad]
    offsets = None
    if clock == "jitter":
        offsets = np.random.default_rng([seed, e, 7]).uniform(
            0.0, rig.clock_jitter_s, len(commands)
        )
    q, _ = simulate(
        m,
        commands,
        ds.fps,
        delays,
        "step" if clock == "step" else "exact",
        offsets,
        joints=rig.joint_names,
    )
    q = quantise(q, rig.encoder_rad)
    named = ds.named("action", e)
    action = np.stack([np.asarray(named[j.recorded], dtype=float) for j in rig.joints], 1)
    state = np.stack([j.unit.from_rad(q[:, i]) for i, j in enumerate(rig.joints)], 1)
    return {"action": action, "observation.state": state}


def truth_settings(truth: Sequence[JointTruth]) -> dict[str, Any]:
    """ActuatorSettings per joint of the planted truth (faulty values and the delay; None
    where nominal): the model a perfect patch would be."""
    from simgap.sim.actuator_patch import ActuatorSettings

    out = {}
    for t in truth:
        if not t.faulty:
            continue
        vals = {
            k: t.value(k) if t.factor(k) != 1.0 else None
            for k in ("kp", "kv", "damping", "frictionloss", "armature", "force_limit")
        }
        out[t.name] = ActuatorSettings(**vals, delay_s=t.delay_s or None)
    return out


def _stamp(rig_digest: str, trial: Trial) -> dict[str, Any]:
    from simgap._version import __version__

    return {"simgap": __version__, "rig_inputs": rig_digest, "trial": trial.to_dict()}


def synthesise_trial(
    rig: Rig, ds: LeRobotDataset, trial: Trial, folder: str | Path, *, rig_digest: str = ""
) -> TrialFiles:
    """Synthesise one trial into ``folder`` (module docstring); a folder whose marker
    says it holds the same trial of the same inputs is kept as it is.

    Args:
        rig: the user's rig (loaded and checked).
        ds: its dataset (``rig_dataset``).
        trial: what to plant.
        folder: the trial's folder (created).
        rig_digest: a digest of the user's rig inputs (the marker's; ``""``: always redo).
    """
    folder = Path(folder)
    m = nominal_model(rig.model_path)
    if rig.physics_dt_s:
        m.opt.timestep = float(rig.physics_dt_s)
    truth = resolve_faults(
        dict(trial.faults) or None, trial.seed, nominal_params(m, rig.joint_names)
    )
    in_ds, held = split_episodes(ds.episode_indices)
    files = TrialFiles(
        folder=folder,
        rig=folder / "rig.toml",
        heldout=folder / "heldout",
        truth_model=None if trial.null else folder / "truth_model.xml",
        truth=truth,
        episodes=in_ds,
        heldout_episode=held,
    )
    stamp = _stamp(rig_digest, trial)
    try:
        if rig_digest and json.loads((folder / MARKER).read_text(encoding="utf-8")) == stamp:
            return files
    except (OSError, ValueError):
        pass
    apply_truth(m, truth)
    delays = np.array([t.delay_s for t in truth])
    clock = _clock(rig)
    names = [j.recorded for j in rig.joints]
    robot = str(ds.info.get("robot_type") or "unknown")
    fps = int(round(ds.fps))
    task = f"simgap selftest {trial.name}"
    eps = [_episode(m, rig, ds, e, delays, clock, trial.seed) for e in in_ds]
    write_lerobot_v3(folder / "dataset", eps, fps=fps, names=names, task=task, robot_type=robot)
    write_lerobot_v3(
        folder / "heldout",
        [_episode(m, rig, ds, held, delays, clock, trial.seed)],
        fps=fps,
        names=names,
        task=task,
        robot_type=robot,
    )
    atomic_write_text(
        files.rig, trial_rig_text(rig, name=f"selftest-{trial.name}", seed=trial.seed)
    )
    if files.truth_model is not None:
        from simgap.sim.actuator_patch import write_actuator_patch

        write_actuator_patch(rig.model_path, files.truth_model, truth_settings(truth))
    atomic_write_json(
        folder / "truth.json",
        {
            "trial": trial.to_dict(),
            "clock": clock,
            "episodes": list(in_ds),
            "heldout_episode": held,
            "physics_dt_s": float(m.opt.timestep),
            "joints": {t.name: t.to_dict() for t in truth},
        },
    )
    atomic_write_json(folder / MARKER, stamp)
    return files
