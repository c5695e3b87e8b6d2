"""Static-object poses (format item 7): one row per arm pose while one object sits still.

CSV columns: ``<recorded joint names...>, obj_cam_x, obj_cam_y, obj_cam_z``: joint values in
the rig's recorded units and the object's position measured in the camera frame [m]
(MuJoCo's camera convention: x right, y up, looking along -z), e.g. from a fiducial tag.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.csv_table import read_csv_table
from simgap.rig import Rig

OBJ_COLUMNS = ("obj_cam_x", "obj_cam_y", "obj_cam_z")


@dataclass(frozen=True)
class StaticPoses:
    """Camera-frame sightings of one static object from several arm poses.

    Attributes:
        q: joint angles [rad], shape (N, J), rig joint order.
        joint_names: model joint names, length J.
        p_cam: the object's position in the camera frame [m], shape (N, 3).
        source: the file read.
    """

    q: np.ndarray
    joint_names: tuple[str, ...]
    p_cam: np.ndarray
    source: str = ""

    @property
    def n_poses(self) -> int:
        """Number of poses N."""
        return int(self.q.shape[0])


def read_static_poses(path: str | Path, rig: Rig) -> StaticPoses:
    """Read a static-object CSV, converting joints through the rig's joint map.

    Raises:
        InputError: missing file or column, a non-number, fewer than 3 rows.
    """
    path = Path(path)
    cols, rows = read_csv_table(
        path,
        what="a static-object poses CSV",
        fix="set evidence.static_object_poses in rig.toml to the CSV",
    )
    need = [j.recorded for j in rig.joints] + list(OBJ_COLUMNS)
    for c in need:
        if c not in cols:
            alt = next((j.name for j in rig.joints if j.recorded == c and j.name in cols), None)
            if alt is None:
                raise NameNotFoundError("column", c, cols, file=path)
    if len(rows) < 3:
        raise InputError(
            file=path,
            expected="at least 3 poses (rows)",
            got=f"{len(rows)} rows",
            fix="record the static object from more arm poses",
        )

    def num(row: dict[str, str], col: str, i: int) -> float:
        try:
            v = float(row[col])
        except (TypeError, ValueError):
            v = math.nan
        if not math.isfinite(v):
            raise InputError(
                file=path,
                field=col,
                expected="a finite number",
                got=f"{row.get(col)!r} on data row {i + 1}",
            )
        return v

    q = np.empty((len(rows), len(rig.joints)))
    for k, jm in enumerate(rig.joints):
        col = jm.recorded if jm.recorded in cols else jm.name
        q[:, k] = jm.unit.to_rad([num(r, col, i) for i, r in enumerate(rows)])
    p = np.array([[num(r, c, i) for c in OBJ_COLUMNS] for i, r in enumerate(rows)])
    return StaticPoses(q=q, joint_names=rig.joint_names, p_cam=p, source=str(path))


def load_static_poses(rig: Rig) -> StaticPoses:
    """Loader for ``EvidenceBundle.get``: the rig's ``evidence.static_object_poses``."""
    if rig.evidence.static_object_poses is None:
        raise InputError(
            file=rig.source,
            field="evidence.static_object_poses",
            expected="a path to a static-object poses CSV",
            got="nothing",
        )
    return read_static_poses(rig.evidence.static_object_poses, rig)
