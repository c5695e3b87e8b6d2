"""Readers for the failure-phase and envelope checks: recorded episodes and the few
protocol-manifest fields they use.

The manifest reader here is private to those checks and reads only ``environment.kind``,
``initial_states.states``, ``success.threshold`` and ``trials[].success /
initial_state / phase / note``; the evaluation area's full reader validates the rest.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.episodes.segment import NO_GRIPPER_MESSAGE, check_phase
from simgap.errors import InputError
from simgap.evidence.lerobot import INFO_PATH, dataset_trajectories, read_lerobot_dataset
from simgap.rig import Rig
from simgap.series import Trajectory

OBJECT_KEY = "observation.object_pos"


@dataclass(frozen=True)
class TrialRow:
    """One trial of a protocol manifest.

    Attributes:
        success: whether the trial succeeded.
        initial_state: index into the initial states, or None.
        phase: the failure phase a person annotated, or None.
        note: a free note, or None.
    """

    success: bool
    initial_state: int | None = None
    phase: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class ManifestTrials:
    """The manifest fields the phase and envelope checks read.

    Attributes:
        path: the manifest file.
        kind: ``sim`` or ``real`` (None when not given).
        initial_states: (x, y, yaw) rows [m, m, rad], or None when only a generator is named.
        success_threshold: the success predicate's threshold, or None.
        trials: the trials, in order (trial i pairs with recorded episode i).
    """

    path: Path
    kind: str | None
    initial_states: tuple[tuple[float, ...], ...] | None
    success_threshold: float | None
    trials: tuple[TrialRow, ...]


def _parse(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise InputError(file=path, expected="a protocol manifest (TOML or JSON)",
                         got="no such file", fix="correct the manifest path in rig.toml")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(file=path, expected="valid TOML or JSON", got=str(e)) from e
    if not isinstance(data, dict):
        raise InputError(file=path, expected="a table at the top level", got=type(data).__name__)
    return data


def read_manifest_trials(path: str | Path) -> ManifestTrials:
    """Read the trials and initial states of a protocol manifest.

    Raises:
        InputError: the file is missing or unparsable, a trial lacks ``success``, an
            ``initial_state`` is not an integer, or a ``phase`` is not a known phase name
            (the message lists them).
    """
    path = Path(path)
    data = _parse(path)
    env = data.get("environment") or {}
    kind = env.get("kind") if isinstance(env, dict) else None
    init = data.get("initial_states") or {}
    states = None
    if isinstance(init, dict) and "states" in init:
        raw = init["states"]
        if not isinstance(raw, list) or not all(isinstance(s, list) and len(s) >= 2 and
                                                all(isinstance(v, (int, float)) for v in s)
                                                for s in raw):
            raise InputError(file=path, field="initial_states.states",
                             expected="a list of [x, y, yaw] rows in metres", got=raw)
        states = tuple(tuple(float(v) for v in s) for s in raw)
    succ = data.get("success") or {}
    thr = succ.get("threshold") if isinstance(succ, dict) else None
    trials_raw = data.get("trials") or []
    if not isinstance(trials_raw, list):
        raise InputError(file=path, field="trials", expected="a list of [[trials]] tables",
                         got=type(trials_raw).__name__)
    trials = []
    for i, t in enumerate(trials_raw):
        where = f"trials[{i}]"
        if not isinstance(t, dict) or not isinstance(t.get("success"), bool):
            raise InputError(file=path, field=f"{where}.success", expected="true or false",
                             got=t.get("success") if isinstance(t, dict) else t)
        idx = t.get("initial_state")
        if idx is not None and (isinstance(idx, bool) or not isinstance(idx, int)):
            raise InputError(file=path, field=f"{where}.initial_state",
                             expected="an integer index into initial_states", got=idx)
        phase = t.get("phase")
        if phase is not None:
            check_phase(phase, file=str(path), field=f"{where}.phase")
        note = t.get("note")
        trials.append(TrialRow(success=t["success"], initial_state=idx, phase=phase,
                               note=None if note is None else str(note)))
    return ManifestTrials(path=path, kind=kind, initial_states=states,
                          success_threshold=float(thr) if isinstance(thr, (int, float)) else None,
                          trials=tuple(trials))


@dataclass(frozen=True)
class RecordedEpisodes:
    """Episodes of one LeRobot dataset, in model radians, with the object where recorded.

    Attributes:
        source: the dataset folder.
        fps: the dataset's frame rate [Hz].
        trajectories: one per episode (command = ``action``, measured = observation.state).
        object_pos: per episode, the object's world position [m], shape (T, 3), or None.
        gripper_index: the gripper's column in the trajectories.
    """

    source: Path
    fps: float
    trajectories: tuple[Trajectory, ...]
    object_pos: tuple[np.ndarray | None, ...]
    gripper_index: int


def read_episodes(path: str | Path, rig: Rig) -> RecordedEpisodes:
    """Read a LeRobot v3 dataset for segmentation.

    Raises:
        InputError: the rig marks no gripper joint, or the dataset has no gripper channel in
            ``action`` or ``observation.state`` (the message says which phases cannot be told
            apart without it).
    """
    path = Path(path)
    gripper = rig.gripper
    if gripper is None:
        raise InputError(file=rig.source, field="joints.<gripper>.gripper",
                         expected="one joint marked gripper = true", got="none",
                         fix=f"mark the gripper joint in rig.toml; {NO_GRIPPER_MESSAGE}")
    ds = read_lerobot_dataset(path)
    for key in ("action", "observation.state"):
        names = ds.names(key)
        if gripper.recorded not in names:
            raise InputError(file=path / INFO_PATH, field=f"features.{key}.names",
                             expected=f"the gripper channel '{gripper.recorded}'", got=names,
                             fix=f"record the gripper's command and measured opening; "
                                 f"{NO_GRIPPER_MESSAGE}")
    trajs = tuple(tr for tr in dataset_trajectories(ds, rig) if tr.n_samples >= 2)
    if not trajs:
        raise InputError(file=path, field="episode_index",
                         expected="at least one episode of two or more frames", got="none",
                         fix="point at a dataset with recorded episodes")
    objs: list[np.ndarray | None] = []
    for tr in trajs:
        if OBJECT_KEY in ds.features:
            obj = ds.vector(OBJECT_KEY, tr.episode)
            if obj.shape[1] != 3:
                raise InputError(file=path / INFO_PATH, field=f"features.{OBJECT_KEY}",
                                 expected="3 values (x, y, z) [m]", got=f"{obj.shape[1]}")
            objs.append(obj)
        else:
            objs.append(None)
    return RecordedEpisodes(source=path, fps=ds.fps, trajectories=trajs, object_pos=tuple(objs),
                            gripper_index=rig.joint_names.index(gripper.name))


def load_real_episodes(rig: Rig) -> RecordedEpisodes | None:
    """Loader for ``evidence.dataset`` (None when the rig names none)."""
    return read_episodes(rig.evidence.dataset, rig) if rig.evidence.dataset else None


def load_sim_episodes(rig: Rig) -> RecordedEpisodes | None:
    """Loader for ``evidence.sim_dataset`` (None when the rig names none)."""
    return read_episodes(rig.evidence.sim_dataset, rig) if rig.evidence.sim_dataset else None


def load_real_manifest(rig: Rig) -> ManifestTrials | None:
    """Loader for ``evidence.real_manifest`` (None when the rig names none)."""
    p = rig.evidence.real_manifest
    return read_manifest_trials(p) if p else None


def load_sim_manifest(rig: Rig) -> ManifestTrials | None:
    """Loader for ``evidence.sim_manifest`` (None when the rig names none)."""
    p = rig.evidence.sim_manifest
    return read_manifest_trials(p) if p else None
