"""Boundary checks shared by the evidence readers: LeRobot ``info.json`` and data tables,
BAM headers and entries. Each failure is one InputError naming file, field and fix."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from simgap.errors import InputError
from simgap.validate import number

MAX_FPS = 1000.0
"""Highest recording rate accepted for a dataset [frames/s]."""

_VERSION = re.compile(r"v3\.\d+")
CHECKED_FEATURES = ("action", "observation.state")
"""Dataset columns whose every value must be finite."""


def check_lerobot_info(info: Any, path: Path) -> None:
    """``info.json``: an object; ``codebase_version`` v3.N; ``fps`` a number in
    (0, 1000]; ``features`` an object of objects with list shapes and list/object names."""
    if not isinstance(info, Mapping):
        raise InputError(
            file=path, expected="a JSON object (LeRobot's meta/info.json)", got=type(info).__name__
        )
    version = info.get("codebase_version")
    if isinstance(version, str) and version.startswith("v3") and not _VERSION.fullmatch(version):
        raise InputError(
            file=path,
            field="codebase_version",
            expected="v3.N, e.g. v3.0",
            got=version,
            fix="correct codebase_version (LeRobot writes v3.0)",
        )
    if "fps" in info:
        lerobot_fps(info, path)
    features = info.get("features")
    if isinstance(features, Mapping):
        for key, feat in features.items():
            if not isinstance(feat, Mapping):
                raise InputError(
                    file=path,
                    field=f"features.{key}",
                    expected="an object with dtype, shape and names",
                    got=type(feat).__name__,
                )
            shape = feat.get("shape")
            if shape is not None and not (
                isinstance(shape, list)
                and all(
                    isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 1 << 20
                    for s in shape
                )
            ):
                raise InputError(
                    file=path,
                    field=f"features.{key}.shape",
                    expected="a list of small whole numbers",
                    got=shape,
                )
            names = feat.get("names")
            if names is not None and not isinstance(names, (list, Mapping)):
                raise InputError(
                    file=path,
                    field=f"features.{key}.names",
                    expected="a list of names (or null)",
                    got=names,
                )
            if isinstance(names, Mapping) and not all(isinstance(v, list) for v in names.values()):
                raise InputError(
                    file=path, field=f"features.{key}.names", expected="{group: [names]}", got=names
                )


def lerobot_fps(info: Mapping[str, Any], path: Path) -> float:
    """``info.json``'s ``fps`` [frames/s]: a JSON number in (0, 1000]. A boolean (``true``
    is not 1 Hz), a string (``"15"``), null or a missing key is refused, naming its JSON
    type. Every reader of ``fps`` (the dataset reader, ``simgap init``) goes through here.

    Raises:
        InputError: naming the file, the field, the type or value found and the fix.
    """
    if "fps" not in info:
        raise InputError(
            file=path,
            field="fps",
            expected="the recording rate [frames/s]",
            got="no fps key",
            fix='add "fps": 30 (the recording rate)',
        )
    return number(
        info["fps"],
        file=path,
        field="fps",
        unit="frames/s",
        lo=0.0,
        lo_open=True,
        hi=MAX_FPS,
        fix="set fps to the recording rate, e.g. 30",
    )


def check_lerobot_table(table: pa.Table, root: Path) -> None:
    """Data rows: ``index`` unique whole numbers; ``action`` and ``observation.state``
    numeric and finite; ``timestamp`` finite."""
    ep = table.column("episode_index")
    if not pa.types.is_integer(ep.type) or ep.null_count:
        raise InputError(
            file=root / "data",
            field="episode_index",
            expected="integer episode indices in every row",
            got=str(ep.type),
        )
    idx = table.column("index")
    if not pa.types.is_integer(idx.type) or idx.null_count:
        raise InputError(
            file=root / "data", field="index", expected="integer frame indices", got=str(idx.type)
        )
    values = idx.to_numpy(zero_copy_only=False)
    if values.size and np.unique(values).size != values.size:
        dup = (
            int(values[np.argmax(np.bincount(values - values.min()))])
            if values.min() >= 0 and values.max() - values.min() < 1 << 24
            else "some"
        )
        raise InputError(
            file=root / "data",
            field="index",
            expected="each frame index once",
            got=f"index {dup} repeated",
            fix="re-export the dataset; two data files may hold the same rows",
        )
    for key in (*CHECKED_FEATURES, "timestamp"):
        if key not in table.column_names:
            continue
        col = table.column(key).combine_chunks()
        if col.null_count:
            raise InputError(
                file=root / "data",
                field=key,
                expected="a value in every row",
                got=f"{col.null_count} null rows",
            )
        typ = col.type
        while (
            pa.types.is_list(typ) or pa.types.is_fixed_size_list(typ) or pa.types.is_large_list(typ)
        ):
            col = col.flatten()
            typ = col.type
        if not (pa.types.is_floating(typ) or pa.types.is_integer(typ)):
            raise InputError(
                file=root / "data", field=key, expected="numbers", got=str(table.column(key).type)
            )
        arr = col.to_numpy(zero_copy_only=False).astype(float)
        bad = ~np.isfinite(arr)
        if bad.any():
            raise InputError(
                file=root / "data",
                field=key,
                expected="finite numbers",
                got=f"{int(bad.sum())} NaN or infinite values",
                fix="drop or repair the frames with invalid values",
            )


def check_bam(raw: Mapping[str, Any], path: Path) -> None:
    """BAM header numbers (mass, length, kp, vin, arm_mass) finite and plausible; motor and
    trajectory strings; every entry an object of finite numbers."""
    for key, lo, hi, unit in (
        ("mass", 0.0, 100.0, "kg"),
        ("length", 0.0, 10.0, "m"),
        ("kp", 0.0, 1e6, ""),
        ("vin", 0.0, 100.0, "V"),
    ):
        number(raw[key], file=path, field=key, unit=unit, lo=lo, hi=hi, lo_open=True)
    if "arm_mass" in raw:
        number(raw["arm_mass"], file=path, field="arm_mass", unit="kg", lo=0.0, hi=100.0)
    for key in ("motor", "trajectory"):
        if not isinstance(raw[key], str) or not raw[key]:
            raise InputError(file=path, field=key, expected="a non-empty string", got=raw[key])
    entries = raw["entries"]
    if not isinstance(entries, list):
        return
    for i, e in enumerate(entries):
        if not isinstance(e, Mapping):
            raise InputError(
                file=path, field=f"entries[{i}]", expected="an object", got=type(e).__name__
            )
        for key in ("timestamp", "position", "goal_position", "speed"):
            if key in e and e[key] is not None:
                number(e[key], file=path, field=f"entries[{i}].{key}")
        if "load" in e:
            number(
                e["load"], file=path, field=f"entries[{i}].load", integer=True, lo=-65536, hi=65535
            )
        te = e.get("torque_enable")
        if not isinstance(te, (bool, int)) or (isinstance(te, int) and te not in (0, 1)):
            raise InputError(
                file=path, field=f"entries[{i}].torque_enable", expected="true or false", got=te
            )


MAX_INDEX = 1 << 40
"""Largest episode, step or tick number accepted."""

MAX_STAGE_S = 3600.0
"""Longest plausible stage duration or tick time [s]: a stage of 1e30 s is a unit error."""


def check_stage_values(
    path: Path,
    base: Mapping[str, np.ndarray],
    cols: Mapping[str, np.ndarray],
    rows: np.ndarray,
    unit: str,
) -> None:
    """Timing-log values: ``t`` finite, episode/step in range, every stage duration finite
    (NaN marks an absent stage) and at most an hour."""
    t = np.asarray(base["t"], dtype=float)
    bad_t = ~np.isfinite(t)
    if bad_t.any():
        i = int(np.argmax(bad_t))
        raise InputError(
            file=path,
            field=f"{unit} {rows[i]}: t",
            expected="the tick start in seconds (a finite number)",
            got=t[i],
        )
    for key in ("episode", "step"):
        v = np.asarray(base[key])
        if v.size and (v.min() < 0 or v.max() >= MAX_INDEX):
            i = int(np.argmax((v < 0) | (v >= MAX_INDEX)))
            raise InputError(
                file=path,
                field=f"{unit} {rows[i]}: {key}",
                expected=f"a whole number in [0, {MAX_INDEX})",
                got=int(v[i]),
            )
    for name, arr in cols.items():
        a = np.asarray(arr, dtype=float)
        bad = np.isinf(a) | (a > MAX_STAGE_S)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                file=path,
                field=f"{unit} {rows[i]}: stages.{name}",
                expected=f"a duration in seconds, at most {MAX_STAGE_S:g}",
                got=float(a[i]),
                fix="log durations in seconds "
                "(time.perf_counter differences), not milliseconds or stamps",
            )


def check_durations(stages: Mapping[str, np.ndarray], path: Path, where: str) -> None:
    """Stage durations parsed from a log: finite, >= 0 and at most an hour."""
    for name, arr in stages.items():
        a = np.asarray(arr, dtype=float)
        bad = ~np.isfinite(a) | (a < 0) | (a > MAX_STAGE_S)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                file=path,
                field=f"{name} (the {i + 1}th {where})",
                expected=f"a duration in [0, {MAX_STAGE_S:g}] s",
                got=float(a[i]),
                fix="the log is edited or corrupted; use the file LeRobot wrote",
            )
