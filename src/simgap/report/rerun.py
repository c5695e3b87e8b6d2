"""A Rerun recording of a diagnosis: each episode as LeRobot's viewer logs it, with simgap's
layers beside it (the ``rerun`` extra; docs/rerun.md).

One recording per episode (recording id ``episode_<e>``, application ``simgap``), on
LeRobot's timelines ``frame_index`` (sequence) and ``timestamp`` (seconds) and its entity
names:

- ``action``, ``observation.state``: the recorded vectors as batched scalars, one series per
  element named as the dataset names it, in the dataset's units;
- ``observation.images.<cam>``: the recorded camera frames (``camera.recorded``);
- ``real/observation.state``: the measured joints in model radians, named by model joint;
- ``sim/nominal/observation.state``, ``sim/identified/observation.state``: the episode
  replayed open loop under the rig's MJCF as given and under the actuator patch the
  diagnosis offered (when it offered one) [rad];
- ``gap/<joint>``: measured minus replayed [rad] (``nominal``, ``identified``) with the joint's
  noise floor as the series ``floor`` and ``-floor`` (the identification's least residual);
- ``sim/camera/<cam>``, ``world/...``: the camera rendered at the measured angles and the arm
  in 3D at the real and the simulated poses (``simgap.report.rerun_arm``);
- ``latency/total``: each tick's total from the timing log and the budget [s], where a tick is
  a frame (``simgap.report.rerun_latency``);
- ``findings``: every finding as a text log (its verdict as the level: implicated WARN,
  inconclusive DEBUG, the rest INFO) at the moment of the episode it names, else at the
  episode's first frame (``simgap.report.rerun_findings``).

The recording opens on a blueprint that shows the worst joint's gap first
(``simgap.report.rerun_blueprint``).

Rerun has no way to append recordings to one file that its verifier accepts, so each
episode is saved alone and the files are joined with the ``rerun rrd merge`` command the
package ships.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, MissingExtraError
from simgap.report.rerun_findings import FindingMark, episode_logs, finding_marks
from simgap.report.rerun_layers import EpisodeLayers, episode_layers, finding_dicts
from simgap.rig import Rig

APPLICATION_ID = "simgap"
FRAME_TIMELINE = "frame_index"
TIME_TIMELINE = "timestamp"


@dataclass(frozen=True)
class WrittenRrd:
    """What ``write_rrd`` wrote.

    Attributes:
        path: the ``.rrd`` file.
        episodes: the episodes in it.
        worst_joint: the joint the blueprint opens on.
        gap_ratio: that joint's nominal gap RMS over its noise floor.
        skipped: each layer left out, with why (e.g. no offscreen GL for the camera).
    """

    path: Path
    episodes: tuple[int, ...]
    worst_joint: str
    gap_ratio: float
    skipped: tuple[str, ...] = ()


def _rerun() -> Any:
    try:
        import rerun as rr
    except ImportError as e:
        raise MissingExtraError("rerun", "rerun-sdk", "Writing a Rerun recording") from e
    return rr


def require_rerun() -> None:
    """Raise MissingExtraError now when rerun-sdk is not installed (before a long run)."""
    _rerun()


def _log_episode(
    rr: Any,
    rec: Any,
    lay: EpisodeLayers,
    camera: str | None,
    findings: Sequence[Mapping[str, Any]],
    marks: Sequence[FindingMark],
    shapes: Any,
) -> None:
    from simgap.report.rerun_arm import log_arm_poses, log_arm_shapes, log_rendered

    T = lay.frame_index.size
    index = [
        rr.TimeColumn(FRAME_TIMELINE, sequence=lay.frame_index),
        rr.TimeColumn(TIME_TIMELINE, duration=lay.t_s),
    ]

    def series(path: str, values: np.ndarray, names: Sequence[str]) -> None:
        values = np.asarray(values, dtype=float).reshape(T, -1)
        rec.log(path, rr.SeriesLines(names=list(names)), static=True)
        rec.send_columns(
            path,
            indexes=index,
            columns=rr.Scalars.columns(scalars=values.ravel()).partition(
                np.full(T, values.shape[1])
            ),
        )

    def at(row: int) -> None:
        row = min(max(int(row), 0), T - 1)
        rec.set_time(FRAME_TIMELINE, sequence=int(lay.frame_index[row]))
        rec.set_time(TIME_TIMELINE, duration=float(lay.t_s[row]))

    series("action", lay.action, lay.action_names)
    series("observation.state", lay.state, lay.state_names)
    series("real/observation.state", lay.q_rad, lay.joints)
    for name, q in lay.sim.items():
        series(f"sim/{name}/observation.state", q, lay.joints)
    for i, j in enumerate(lay.joints):
        cols = [lay.q_rad[:, i] - q[:, i] for q in lay.sim.values()]
        fl = np.full(T, lay.floor_rad[i])
        series(
            gap_path(rr, j),
            np.stack(cols + [fl, -fl], axis=1),
            [*lay.sim.keys(), "floor", "-floor"],
        )
    if lay.tick_total_s is not None and lay.budget_s is not None:
        series(
            "latency/total",
            np.stack([lay.tick_total_s, np.full(T, lay.budget_s)], 1),
            ["total", "budget"],
        )
    if lay.images is not None and lay.image_frames is not None and camera:
        for img, fr in zip(lay.images, lay.image_frames, strict=True):
            at(int(np.searchsorted(lay.frame_index, fr)))
            rec.log(f"observation.images.{camera}", rr.Image(img))
    if lay.rendered is not None and lay.rendered_rows is not None and camera:
        log_rendered(
            rr,
            rec,
            f"sim/camera/{camera}",
            lay.rendered,
            lay.rendered_rows,
            lay.frame_index,
            lay.t_s,
            (FRAME_TIMELINE, TIME_TIMELINE),
        )
    if lay.arm and shapes is not None:
        log_arm_shapes(rr, rec, shapes, list(lay.arm))
        for layer, (pos, quat) in lay.arm.items():
            log_arm_poses(rr, rec, index, layer, shapes, pos, quat)
    for row, text, lvl, _ in episode_logs(lay.episode, lay.t_s, lay.t0_s, findings, marks):
        at(row)  # in time order, each finding's order kept
        rec.log("findings", rr.TextLog(text, level=getattr(rr.TextLogLevel, lvl)))


def gap_path(rr: Any, joint: str) -> str:
    """The entity of a joint's gap (its name escaped: a name never makes a path)."""
    return f"gap/{rr.escape_entity_path_part(joint)}"


def _rerun_cli() -> str:
    """The ``rerun`` command of the installed rerun-sdk (it ships one inside the package,
    and a script beside this Python's)."""
    import sys

    rr = _rerun()
    shipped = Path(rr.__file__).resolve().parents[1] / "rerun_cli" / "rerun"
    for cand in (shipped, Path(sys.executable).parent / "rerun"):
        if cand.is_file():
            return str(cand)
    found = shutil.which("rerun")
    if found is None:
        raise MissingExtraError(
            "rerun", "rerun-sdk", "Joining episodes into one .rrd (its 'rerun' command)"
        )
    return found


def write_rrd(
    path: str | Path,
    rig: Rig,
    ds: Any,
    diagnosis: Mapping[str, Any],
    episodes: Sequence[int] | None = None,
) -> WrittenRrd:
    """Write the diagnosis's Rerun recording to ``path`` (see the module docstring): one
    recording per episode of ``ds`` (the rig's recording; ``episodes`` picks some).

    Raises:
        MissingExtraError: rerun-sdk is not installed.
        InputError: no episode to log, or the episodes could not be joined.
    """
    rr = _rerun()
    import rerun.blueprint as rrb

    from simgap.outputs import atomic_write_bytes
    from simgap.report.rerun_arm import with_model_layers
    from simgap.report.rerun_blueprint import blueprint, gap_ratios
    from simgap.report.rerun_latency import with_latency

    path = Path(path)
    layers = episode_layers(rig, ds, diagnosis, episodes)
    if not layers:
        raise InputError(
            file=getattr(ds, "root", None),
            field="episodes",
            expected="at least one episode to log",
            got="none",
        )
    skipped: list[str] = []
    layers, shapes = with_model_layers(rig, layers, skipped)
    camera = None
    if rig.camera is not None:
        camera = str(
            rr.escape_entity_path_part(  # a name never makes a path
                (rig.camera.recorded or rig.camera.name).removeprefix("observation.images.")
            )
        )
    findings = finding_dicts(diagnosis)
    layers, late = with_latency(rig, layers, findings)
    marks = finding_marks(findings) + late
    ratios = gap_ratios(
        [lay.q_rad for lay in layers], [lay.sim["nominal"] for lay in layers], layers[0].floor_rad
    )
    worst = int(np.argmax(ratios))
    cams = [
        p
        for p in (
            f"observation.images.{camera}"
            if any(lay.images is not None for lay in layers)
            else None,
            f"sim/camera/{camera}" if any(lay.rendered is not None for lay in layers) else None,
        )
        if p and camera
    ]
    bp = blueprint(
        rrb,
        gap_path(rr, rig.joint_names[worst]),
        rig.joint_names[worst],
        cams,
        "observation.state",
        "world" if shapes is not None else None,
    )
    with tempfile.TemporaryDirectory(prefix="simgap-rrd-") as tmp:
        parts = []
        for lay in layers:
            part = Path(tmp) / f"episode_{lay.episode:06d}.rrd"
            rec = rr.RecordingStream(APPLICATION_ID, recording_id=f"episode_{lay.episode}")
            rec.save(str(part), default_blueprint=bp)
            _log_episode(rr, rec, lay, camera, findings, marks, shapes)
            rec.flush()
            rec.disconnect()
            parts.append(part)
        if len(parts) == 1:
            data = parts[0].read_bytes()
        else:
            run = subprocess.run(
                [_rerun_cli(), "rrd", "merge", *map(str, parts)],
                capture_output=True,
                timeout=600,
                check=False,
            )
            if run.returncode != 0:
                raise InputError(
                    file=path,
                    expected="episodes joined by 'rerun rrd merge'",
                    got=run.stderr.decode(errors="replace")[-300:],
                    fix="check the rerun-sdk install (pip install 'simgap[rerun]')",
                )
            data = run.stdout
    atomic_write_bytes(path, data)
    return WrittenRrd(
        path=path,
        episodes=tuple(lay.episode for lay in layers),
        worst_joint=rig.joint_names[worst],
        gap_ratio=float(ratios[worst]),
        skipped=tuple(skipped),
    )
