"""One episode of the demo bench: the bench's layout, the scene reset for an episode, the
cube's position, the recorded columns and the outcome judged from the cube's path."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from simgap.demo.twin import JOINTS
from simgap.sim import scene
from simgap.sim.scene import Data, Model

NAMES = [f"{j}.pos" for j in JOINTS]


BIN_XY = (0.15, 0.2)


BIN_RADIUS_M = 0.045


START_KEY = 1


REST_KEY = 0


RES = 96


RESET_LEAD_S = 0.3
"""The scene is reset this long before an episode's first tick [s]."""


READ_NOISE_COUNTS = 0.4
"""Standard deviation of the servo position reading before rounding [encoder counts]."""


@dataclass(frozen=True)
class EpisodeResult:
    """Outcome of one trial (cube_in_bin, judged automatically from the tracker)."""

    success: bool
    phase: str | None
    note: str
    inside: bool


@dataclass
class Episode:
    """One recorded episode: dataset columns and the outcome."""

    frames: dict[str, Any]
    result: EpisodeResult


@dataclass
class Run:
    """A set of episodes, plus (for the bench) the trace, exposure gains and sample frames."""

    episodes: list[Episode] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    gains: dict[str, list[float]] = field(default_factory=dict)
    samples: list[dict[str, Any]] = field(default_factory=list)


def png_bytes(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False, compress_level=1)
    return buf.getvalue()


def joint_qpos_adr(model: Model) -> np.ndarray:
    return np.array([model.joint(j).qposadr[0] for j in JOINTS])


def reset_scene(
    model: Model, data: Data, q_true: np.ndarray, cube: tuple[float, float, float]
) -> None:
    scene.reset(model, data)
    qa = joint_qpos_adr(model)
    data.qpos[qa] = q_true
    data.ctrl[:] = q_true
    if model.na:
        data.act[:] = q_true
    cadr = model.joint("cube_free").qposadr[0]
    x, y, yaw = cube
    data.qpos[cadr : cadr + 7] = [x, y, 0.0125, math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
    scene.forward(model, data)


def cube_position(model: Model, data: Data) -> np.ndarray:
    return np.array(data.xpos[model.body("cube").id])


def classify(cube_path: np.ndarray, start: np.ndarray) -> tuple[bool, str | None, str]:
    """cube_in_bin and, on failure, the phase it failed in, from the cube's path (T, 3)."""
    final = cube_path[-1]
    d_bin = float(np.hypot(final[0] - BIN_XY[0], final[1] - BIN_XY[1]))
    if d_bin < BIN_RADIUS_M and final[2] < 0.03:
        return True, None, "cube in bin"
    lifted = float(cube_path[:, 2].max()) > 0.03
    moved = float(np.max(np.hypot(*(cube_path[:, :2] - start[:2]).T)))
    if not lifted:
        if moved < 0.003:
            return False, "approach", "the jaws never reached the cube"
        if moved > 0.02:
            return False, "contact", f"the cube was pushed {moved * 100:.1f} cm, not grasped"
        return False, "grasp", "closed on the cube but did not lift it"
    if d_bin < 0.08:
        return False, "place", f"released {d_bin * 100:.1f} cm from the bin centre"
    return False, "lift_and_carry", "dropped the cube while carrying it"


def episode_columns() -> dict[str, list[Any]]:
    """The dataset columns of one episode, empty: filled a frame at a time."""
    return {
        "action": [],
        "observation.state": [],
        "observation.object_pos": [],
        "images": [],
    }


def finished_episode(
    cols: dict[str, list[Any]], path: list[np.ndarray], cube0: np.ndarray, inside: bool
) -> Episode:
    """An episode from its columns (arrays; the images stay PNG bytes) and its outcome, judged
    from the cube's path (``classify``; ``inside``: its start was inside the training
    square)."""
    ok, phase, note = classify(np.array(path), cube0)
    return Episode(
        frames={k: np.array(v) if k != "images" else v for k, v in cols.items()},
        result=EpisodeResult(ok, phase, note, inside),
    )


def settle(model: Model, data: Data, seconds: float) -> None:
    scene.step(model, data, int(round(seconds / model.opt.timestep)))
