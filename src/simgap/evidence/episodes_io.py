"""Readers for the failure-phase and envelope checks: recorded episodes and the few
protocol-manifest fields they use.

Manifests are read with the evaluation area's reader; this module keeps the view of them
that the failure-phase and envelope checks use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simgap.errors import InputError, found_instead
from simgap.evidence.lerobot import INFO_PATH, dataset_trajectories, read_lerobot_dataset
from simgap.evidence.manifest import read_manifest
from simgap.rig import Rig
from simgap.series import Trajectory
from simgap.values.episode import NO_GRIPPER_MESSAGE
from simgap.values.manifest import Trial

OBJECT_KEY = "observation.object_pos"


@dataclass(frozen=True)
class ManifestTrials:
    """The manifest fields the phase and envelope checks read.

    Attributes:
        path: the manifest file.
        kind: ``sim`` or ``real``.
        initial_states: (x, y, yaw) rows [m, m, rad], or None when only a generator is named.
        success_threshold: the success predicate's threshold, or None.
        trials: the trials, in order (trial i pairs with recorded episode i).
    """

    path: Path
    kind: str | None
    initial_states: tuple[tuple[float, ...], ...] | None
    success_threshold: float | None
    trials: tuple[Trial, ...]


def read_manifest_trials(path: str | Path) -> ManifestTrials:
    """Read the trials and initial states of a protocol manifest (validated in full by
    ``simgap.evidence.manifest.read_manifest``).

    Raises:
        InputError: the file is missing or unparsable, or the manifest is invalid (e.g. a
            ``phase`` that is not a known phase name: the message lists them).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(
            file=path,
            expected="a protocol manifest (TOML or JSON)",
            got=found_instead(path),
            fix="correct the manifest path in rig.toml",
        )
    m = read_manifest(path)
    return ManifestTrials(
        path=path,
        kind=m.kind,
        initial_states=m.states,
        success_threshold=m.threshold,
        trials=m.trials,
    )


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
        raise InputError(
            file=rig.source,
            field="joints.<gripper>.gripper",
            expected="one joint marked gripper = true",
            got="none",
            fix=f"mark the gripper joint in rig.toml; {NO_GRIPPER_MESSAGE}",
        )
    ds = read_lerobot_dataset(path)
    for key in ("action", "observation.state"):
        names = ds.names(key)
        if gripper.recorded not in names:
            raise InputError(
                file=path / INFO_PATH,
                field=f"features.{key}.names",
                expected=f"the gripper channel '{gripper.recorded}'",
                got=names,
                fix=f"if '{gripper.recorded}' is a typo, set "
                f"joints.{gripper.name}.recorded in {rig.source} to one of "
                f"the names above; otherwise record the gripper's command "
                f"and measured opening; {NO_GRIPPER_MESSAGE}",
            )
    trajs = tuple(tr for tr in dataset_trajectories(ds, rig) if tr.n_samples >= 2)
    if not trajs:
        raise InputError(
            file=path,
            field="episode_index",
            expected="at least one episode of two or more frames",
            got="none",
            fix="point at a dataset with recorded episodes",
        )
    objs: list[np.ndarray | None] = []
    for tr in trajs:
        if OBJECT_KEY in ds.features:
            obj = ds.vector(OBJECT_KEY, tr.episode)
            if obj.shape[1] != 3:
                raise InputError(
                    file=path / INFO_PATH,
                    field=f"features.{OBJECT_KEY}",
                    expected="3 values (x, y, z) [m]",
                    got=f"{obj.shape[1]}",
                )
            objs.append(obj)
        else:
            objs.append(None)
    return RecordedEpisodes(
        source=path,
        fps=ds.fps,
        trajectories=trajs,
        object_pos=tuple(objs),
        gripper_index=rig.joint_names.index(gripper.name),
    )


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
