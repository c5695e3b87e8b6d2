"""Plain actuator CSV logs -> ActuatorLog.

Columns: ``t`` [s], and per joint ``cmd_<joint>`` and ``q_<joint>`` [rad], optionally
``qd_<joint>`` [rad/s] and ``tau_<joint>`` [N m]. Joints are named by model name or by
recorded name; with a rig, recorded names are mapped to model names and every joint must be
one the rig maps. Irregular timestamps are resampled onto a regular grid (reported).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.rig import Rig
from simgap.series import Trajectory
from simgap.validate import csv_header, numeric_rows, read_csv_rows
from simgap.values.actuator_log import ActuatorLog, from_trajectory


def read_servo_csv(
    path: str | Path,
    rig: Rig | None = None,
    *,
    dt: float | None = None,
) -> ActuatorLog:
    """Read one actuator CSV.

    Raises:
        InputError: no ``t`` column, no ``cmd_``/``q_`` pair, a value that is not a number
            or NaN, non-increasing time, under a second of data, or a joint the rig does
            not map.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(
            file=path, expected="an actuator CSV", got="no such file", fix="check the path"
        )
    if path.suffix.lower() == ".json":
        raise InputError(
            file=path,
            field="--format",
            expected="a CSV log with --format csv",
            got="a .json file",
            fix="a BAM log (JSON) takes --format bam",
        )
    rows = read_csv_rows(path, "a UTF-8 actuator CSV")
    if len(rows) < 2:
        raise InputError(
            file=path,
            expected="a header and data rows",
            got=f"{len(rows)} rows",
            fix="write the header (t, cmd_<joint>, q_<joint>) and at least one row per sample",
        )
    header = csv_header(rows[0], path, "an actuator CSV")
    if "t" not in header:
        raise InputError(
            file=path,
            field="t",
            expected="a 't' column (time [s])",
            got=f"columns {header}",
            fix="add a column 't' with each sample's time in seconds (a header line "
            "t,cmd_<joint>,q_<joint>)",
        )
    joints = [h[4:] for h in header if h.startswith("cmd_")]
    if not joints:
        raise InputError(
            file=path,
            field="cmd_<joint>",
            expected="at least one cmd_<joint> column",
            got=f"columns {header}",
            fix="add a column cmd_<joint> with each sample's commanded position [rad] "
            "(e.g. cmd_elbow_flex), beside its q_<joint>",
        )
    for j in joints:
        if f"q_{j}" not in header:
            raise InputError(
                file=path,
                field=f"q_{j}",
                expected="a measured column for every commanded joint",
                got="nothing",
                fix=f"add the column q_{j} with {j}'s measured position [rad] at each "
                f"sample, or drop cmd_{j}",
            )
    data = numeric_rows(rows[1:], header, path, empty_nan=True)
    col = {h: i for i, h in enumerate(header)}
    used = [p for p in ("cmd_", "q_", "qd_", "tau_") if all(f"{p}{j}" in col for j in joints)]
    for name in ["t"] + [f"{p}{j}" for j in joints for p in used]:
        empty = np.flatnonzero(np.isnan(data[:, col[name]]))
        if len(empty):
            raise InputError(  # named by the CSV's own column and row, not the log's channel
                file=path,
                field=f"column {name!r}",
                expected="a number in every row",
                got=f"{len(empty)} empty cells (first in row {int(empty[0]) + 2})",
                fix="fill in the value recorded there, or delete those rows",
            )
    names = []
    for j in joints:
        if rig is None:
            names.append(j)
        else:
            names.append(rig.joint(j, file=path, field=f"cmd_{j}").name)

    def block(prefix: str) -> np.ndarray | None:
        if not all(f"{prefix}{j}" in col for j in joints):
            return None
        return np.stack([data[:, col[f"{prefix}{j}"]] for j in joints], axis=1)

    q_cmd, q = block("cmd_"), block("q_")
    assert q_cmd is not None and q is not None
    traj = Trajectory(
        t=data[:, col["t"]],
        q_cmd=q_cmd,
        q=q,
        qd=block("qd_"),
        tau=block("tau_"),
        joint_names=tuple(names),
        source=str(path),
        meta={"format": "csv"},
    )
    return from_trajectory(traj, dt=dt)
