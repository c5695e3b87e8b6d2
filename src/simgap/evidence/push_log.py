"""Reader of a logged push (formats.md item 4): CSV -> ``PushLog`` in model units.

Columns: ``t`` [s]; ``cmd_<joint>`` for every rig joint (recorded units; the joint by its
recorded or model name); optional ``q_<joint>`` (measured); the object's world position
``obj_x, obj_y, obj_z`` [m] and optional ``obj_qw, obj_qx, obj_qy, obj_qz`` (the
orientation: the contact branch then scores it too, and profiles torsional and rolling
friction). A rig lists several pushes; every one is replayed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simgap.errors import InputError, found_instead
from simgap.rig import Rig
from simgap.validate import csv_header, numeric_rows, read_csv_rows
from simgap.values.push import PushLog

OBJ_POS = ("obj_x", "obj_y", "obj_z")
OBJ_QUAT = ("obj_qw", "obj_qx", "obj_qy", "obj_qz")


def read_push_log(path: str | Path, rig: Rig) -> PushLog:
    """Read one push log; errors name the file, the column and the valid names."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            file=path,
            expected="a push-log CSV",
            got=found_instead(path),
            fix="check evidence.push_logs in rig.toml",
        )
    rows = read_csv_rows(path, "a push-log CSV")
    if len(rows) < 3:
        raise InputError(
            file=path, expected="a header and at least 2 rows", got=f"{len(rows)} lines"
        )
    header = csv_header(rows[0], path, "a push-log CSV")
    data = numeric_rows(rows[1:], header, path)
    col = {h: i for i, h in enumerate(header)}

    def find(prefix: str, required: bool) -> np.ndarray | None:
        out = np.empty((data.shape[0], len(rig.joints)))
        missing = []
        for k, jm in enumerate(rig.joints):
            key = next(
                (f"{prefix}{n}" for n in (jm.recorded, jm.name) if f"{prefix}{n}" in col), None
            )
            if key is None:
                missing.append(f"{prefix}{jm.recorded}")
                continue
            out[:, k] = jm.unit.to_rad(data[:, col[key]])
        if missing and (required or len(missing) < len(rig.joints)):
            raise InputError(
                file=path,
                field=missing[0],
                expected=f"a column for every rig joint: {missing}",
                got=f"columns {header}",
                fix="name joint columns cmd_<recorded name> (or the model "
                f"name); the rig's joints are {list(rig.joint_names)}",
            )
        return None if missing else out

    for c in ("t", *OBJ_POS):
        if c not in col:
            raise InputError(file=path, field=c, expected="this column", got=f"columns {header}")
    cmd = find("cmd_", True)
    assert cmd is not None
    quat = data[:, [col[c] for c in OBJ_QUAT]] if all(c in col for c in OBJ_QUAT) else None
    return PushLog(
        t=data[:, col["t"]],
        cmd=cmd,
        q=find("q_", False),
        obj_pos=data[:, [col[c] for c in OBJ_POS]],
        obj_quat=quat,
        joints=rig.joint_names,
        source=str(path),
    )


def push_logs(rig: Rig) -> list[PushLog]:
    """Every push log the rig names (a loader for ``EvidenceBundle.get``)."""
    return [read_push_log(p, rig) for p in rig.evidence.push_logs]


def write_push_log(
    path: str | Path,
    rig: Rig,
    t: np.ndarray,
    cmd_rad: np.ndarray,
    obj_pos: np.ndarray,
    q_rad: np.ndarray | None = None,
    obj_quat: np.ndarray | None = None,
) -> Path:
    """Write a push log in the format above (joint values converted to recorded units)."""
    from simgap.outputs import atomic_write_text

    head = ["t"] + [f"cmd_{j.recorded}" for j in rig.joints]
    cols = [np.asarray(t)[:, None]] + [
        np.stack([j.unit.from_rad(cmd_rad[:, k]) for k, j in enumerate(rig.joints)], 1)
    ]
    if q_rad is not None:
        head += [f"q_{j.recorded}" for j in rig.joints]
        cols.append(np.stack([j.unit.from_rad(q_rad[:, k]) for k, j in enumerate(rig.joints)], 1))
    head += list(OBJ_POS)
    cols.append(obj_pos)
    if obj_quat is not None:
        head += list(OBJ_QUAT)
        cols.append(obj_quat)
    arr = np.concatenate(cols, axis=1)
    lines = [",".join(head)] + [",".join(f"{v:.9g}" for v in row) for row in arr]
    return atomic_write_text(path, "\n".join(lines) + "\n")
