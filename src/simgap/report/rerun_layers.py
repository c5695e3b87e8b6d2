"""The values a Rerun recording of a diagnosis shows, per episode: the recorded vectors and
camera frames, the replays under the rig's model and under the offered patch, and the noise
floor (``simgap.report.rerun`` logs them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import SimgapError
from simgap.figures.base import finite
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.figures.ladder import LadderFigures
from simgap.finding import figures_of
from simgap.rig import Rig


@dataclass(frozen=True)
class EpisodeLayers:
    """What one episode's recording holds. Time on axis 0.

    Attributes:
        episode: episode index.
        frame_index: frames, shape (T,).
        t_s: seconds into the episode, shape (T,).
        action, state: the recorded vectors, shape (T, n), dataset units.
        action_names, state_names: their element names.
        joints: model joint names, length J.
        q_rad: measured joints, shape (T, J) [rad].
        sim: layer name (``nominal``, ``identified``) -> replayed joints (T, J) [rad].
        floor_rad: per joint, the noise floor [rad], length J.
        images: camera frames (N, H, W, 3) uint8 at ``image_frames`` (N,), or None.
        t0_s: the recording's own time of the first frame [s] (``t_s`` counts from it).
        rendered: the camera rendered at the measured angles (M, H, W, 3) uint8 at the
            episode's rows ``rendered_rows`` (M,), or None.
        arm: layer (``real``, ``sim/<name>``) -> the drawn bodies' world positions
            (T, G, 3) [m] and orientations (T, G, 4) (w, x, y, z) of the drawn geoms;
            empty when not drawn.
        tick_total_s: per row, the control loop's tick total from the timing log [s],
            shape (T,), or None (``simgap.report.rerun_latency``).
        budget_s: the time a tick may take [s] (with ``tick_total_s``).
    """

    episode: int
    frame_index: np.ndarray
    t_s: np.ndarray
    action: np.ndarray
    state: np.ndarray
    action_names: tuple[str, ...]
    state_names: tuple[str, ...]
    joints: tuple[str, ...]
    q_rad: np.ndarray
    sim: Mapping[str, np.ndarray]
    floor_rad: np.ndarray
    images: np.ndarray | None = None
    image_frames: np.ndarray | None = None
    t0_s: float = 0.0
    rendered: np.ndarray | None = None
    rendered_rows: np.ndarray | None = None
    arm: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    tick_total_s: np.ndarray | None = None
    budget_s: float | None = None


def finding_dicts(diagnosis: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The diagnosis's findings (its ``findings`` entries that are objects)."""
    return [f for f in diagnosis.get("findings", []) if isinstance(f, Mapping)]


def noise_floors(rig: Rig, diagnosis: Mapping[str, Any]) -> np.ndarray:
    """Per rig joint, the least residual the identification expects [rad] (the actuator
    finding's noise floor: per joint from a joint identification, one for every joint from
    a bench ladder), else the encoder's quantisation (resolution / sqrt 12)."""
    from simgap.fit.verdict import least_residual

    quant = rig.encoder_rad / np.sqrt(12.0)
    for f in finding_dicts(diagnosis):
        if f.get("branch") != "actuator":
            continue
        if f.get("kind") == JointDynamicsFigures.kind:
            per = figures_of(f, JointDynamicsFigures).noise_floor_rad
            return np.array(
                [least_residual(per[j]) if j in per else quant for j in rig.joint_names]
            )
        if f.get("kind") == LadderFigures.kind:
            found = finite(figures_of(f, LadderFigures).noise_floor_rad)
            if found is not None and found > 0:
                return np.full(len(rig.joint_names), found)
    return np.full(len(rig.joint_names), quant)


def offered_patch(diagnosis: Mapping[str, Any]) -> tuple[Path | None, str]:
    """(the actuator patch the diagnosis offered, or None; the replay clock it chose)."""
    for f in finding_dicts(diagnosis):
        if f.get("branch") == "actuator":
            patch = (f.get("artifacts") or {}).get("mjcf_patch")
            clock = (
                figures_of(f, JointDynamicsFigures).clock
                if f.get("kind") == JointDynamicsFigures.kind
                else None
            )
            chosen = clock.chosen if clock is not None and clock.chosen else "exact"
            return (Path(patch) if patch and Path(patch).is_file() else None), chosen
    return None, "exact"


def episode_layers(
    rig: Rig, ds: Any, diagnosis: Mapping[str, Any], episodes: Sequence[int] | None = None
) -> list[EpisodeLayers]:
    """Each episode's layers: the recording, its replays under the rig's model and the
    offered patch, the noise floor and the camera frames."""
    from simgap.evidence.lerobot import dataset_trajectories
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    patch, clock = offered_patch(diagnosis)
    models = {"nominal": rig.model_path, **({"identified": patch} if patch else {})}
    compiled = {k: compile_spec(strip_visuals(load_spec(p)), p) for k, p in models.items()}
    floor = noise_floors(rig, diagnosis)
    images = _images(rig)
    out = []
    for tr in dataset_trajectories(ds, rig):
        e = int(tr.episode)
        if episodes is not None and e not in episodes:
            continue
        sim = {k: replay(m, tr, clock)[0] for k, m in compiled.items()}
        img = img_fr = None
        if images is not None:
            keep = images[1] == e
            img, img_fr = images[0][keep], images[2][keep]
        out.append(
            EpisodeLayers(
                episode=e,
                frame_index=np.asarray(ds.column("frame_index", e), dtype=np.int64),
                t_s=np.asarray(tr.t, dtype=float) - float(tr.t[0]),
                t0_s=float(tr.t[0]),
                action=ds.vector("action", e),
                state=ds.vector("observation.state", e),
                action_names=tuple(ds.names("action")),
                state_names=tuple(ds.names("observation.state")),
                joints=tuple(rig.joint_names),
                q_rad=np.asarray(tr.q, dtype=float),
                sim=sim,
                floor_rad=floor,
                images=img,
                image_frames=img_fr,
            )
        )
    return out


def _images(rig: Rig) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(frames, their episodes, their frame indices) of the rig's recorded camera, or None
    (no camera named, bags, or frames that cannot be read here: the rest is still logged)."""
    if rig.camera is None or not rig.camera.recorded or rig.evidence.dataset is None:
        return None
    from simgap.evidence.frames import read_dataset_frames

    try:
        fs = read_dataset_frames(rig.evidence.dataset, rig)
    except SimgapError:
        return None
    f = fs.frames
    return np.asarray(f.images), np.asarray(f.episode), np.asarray(f.frame_index)
