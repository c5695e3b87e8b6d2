"""Value checks of a parsed ``rig.toml`` (types are checked by the schema in ``rig/load.py``):
finite, in range, in the units the key names, and paths that resolve; and the values it
marks as guessed. The names it gives from the model are looked up in the model by
``simgap.sim.rig_names`` (it compiles the model, so it lives in ``sim/``).

``check_rig_values`` is called at the top of ``rig_from_dict``, ``guessed_keys`` by
``load_rig``; each failure is one InputError naming the key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.outputs import note_input
from simgap.validate import control_period, number

MAX_PIXELS = 16384
"""Largest image side accepted for a camera resolution [px]."""

# section -> key -> (lo, hi, lo_open, unit); None bounds are open-ended
_RANGES: dict[str, dict[str, tuple[float | None, float | None, bool, str]]] = {
    "model": {"physics_dt_s": (0.0, 0.1, True, "s")},
    "control": {"action_scale": (0.0, None, True, "")},
    "noise": {"encoder_rad": (0.0, 1.0, True, "rad"), "torque_nm": (0.0, None, False, "N m")},
    "camera": {
        "training_jitter_px": (0.0, None, False, "px"),
        "training_jitter_m": (0.0, 1.0, False, "m"),
        "training_jitter_deg": (0.0, 180.0, False, "deg"),
        "training_background_max": (0.0, 255.0, False, "level 0..255"),
    },
    "training": {
        "obs_noise_std_rad": (0.0, 3.2, False, "rad"),
        "action_scale": (0.0, None, True, ""),
        "top_speed_rad_s": (0.0, None, True, "rad/s"),
        "servo_p_gain": (0.0, None, False, ""),
        "object_mass_kg": (0.0, None, True, "kg"),
        "finger_friction": (0.0, None, False, ""),
        "pd_stiffness_nm_rad": (0.0, None, True, "N m/rad"),
        "pd_force_limit_nm": (0.0, None, True, "N m"),
        "action_delta_limit_rad": (0.0, 3.2, True, "rad"),
    },
    "deploy": {
        "servo_p_gain": (0.0, None, False, ""),
        "gripper_torque_limit": (0.0, 1.0, True, "fraction of the stall torque"),
        "action_scale": (0.0, None, True, ""),
        "goal_speed_rad_s": (0.0, None, True, "rad/s"),
        "finger_friction": (0.0, None, False, ""),
        "object_mass_kg": (0.0, None, True, "kg"),
    },
}
_JOINT: dict[str, tuple[float | None, float | None, bool, str]] = {
    "ticks_per_rev": (0.0, 1 << 24, True, "ticks"),
    "zero_ticks": (None, None, False, "ticks"),
    "sign": (None, None, False, ""),
    "offset_rad": (-7.0, 7.0, False, "rad"),
}
_FIX = {
    "gripper_torque_limit": "give the limit as a fraction of the stall torque in (0, 1], "
    "e.g. 0.5 for 50 %",
    "goal_speed_rad_s": "give the servo's goal-speed limit in rad/s (a Feetech "
    "Goal_Velocity of v steps/s is v * 2 pi / 4096 rad/s), or leave it "
    "out when the servo runs at its own top speed",
    "obs_noise_std_rad": "give the standard deviation in radians (0.01 rad = 0.57 deg)",
}


def _sec(raw: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    v = raw.get(name, {})
    return v if isinstance(v, Mapping) else {}


def _numbers(
    v: Any,
    n: int,
    source: Path | None,
    field: str,
    *,
    integer: bool = False,
    lo: float | None = None,
    hi: float | None = None,
) -> None:
    if not (isinstance(v, list) and len(v) == n):
        raise InputError(file=source, field=field, expected=f"a list of {n} numbers", got=v)
    for i, x in enumerate(v):
        number(x, file=source, field=f"{field}[{i}]", integer=integer, lo=lo, hi=hi)


def check_rig_values(raw: Mapping[str, Any], source: Path | None) -> None:
    """Refuse NaN/Inf, out-of-range values, wrong units and non-integer resolutions.

    Raises:
        InputError: naming the key, the range and, for a period that looks like
            milliseconds, the value in seconds to pass instead.
    """
    if "seed" in raw:
        number(raw["seed"], file=source, field="seed", integer=True, lo=0, hi=2.0**63 - 1)
    control = _sec(raw, "control")
    for key in ("dt_s", "real_dt_s"):
        if key in control:
            control_period(control[key], file=source, field=f"control.{key}")
    training = _sec(raw, "training")
    if "control_dt_s" in training:
        control_period(training["control_dt_s"], file=source, field="training.control_dt_s")
    for sec, keys in _RANGES.items():
        data = _sec(raw, sec)
        for key, (lo, hi, lo_open, unit) in keys.items():
            if key in data:
                number(
                    data[key],
                    file=source,
                    field=f"{sec}.{key}",
                    unit=unit,
                    lo=lo,
                    hi=hi,
                    lo_open=lo_open,
                    fix=_FIX.get(key),
                )
    for key in ("workspace_x_m", "workspace_y_m"):
        if key in training:
            _numbers(training[key], 2, source, f"training.{key}", lo=-100.0, hi=100.0)
    camera = _sec(raw, "camera")
    for key in ("policy_resolution", "render_resolution"):
        if key in camera:
            _numbers(camera[key], 2, source, f"camera.{key}", integer=True, lo=1, hi=MAX_PIXELS)
    frame = _sec(raw, "frame")
    if "origin_reference_m" in frame:
        _numbers(
            frame["origin_reference_m"], 3, source, "frame.origin_reference_m", lo=-100.0, hi=100.0
        )
    joints = raw.get("joints")
    if isinstance(joints, Mapping):
        for jname, j in joints.items():
            if not isinstance(j, Mapping):
                continue
            for key, (lo, hi, lo_open, unit) in _JOINT.items():
                if key in j:
                    number(
                        j[key],
                        file=source,
                        field=f"joints.{jname}.{key}",
                        unit=unit,
                        lo=lo,
                        hi=hi,
                        lo_open=lo_open,
                    )
            if "sign" in j and j["sign"] not in (1, -1):
                raise InputError(
                    file=source, field=f"joints.{jname}.sign", expected="1 or -1", got=j["sign"]
                )
            if "range_rad" in j:
                _numbers(
                    j["range_rad"], 2, source, f"joints.{jname}.range_rad", lo=-100.0, hi=100.0
                )


def resolve_path(base: Path, value: Any, source: Path | None, field: str) -> Path:
    """``base / value`` made absolute without following symlinks into a loop; noted as an
    input of the running command."""
    if not isinstance(value, str) or not value or "\x00" in value:
        raise InputError(
            file=source, field=field, expected="a path (a non-empty string)", got=value
        )
    try:
        out = Path(os.path.realpath(base / value))
    except (OSError, RuntimeError, ValueError) as e:
        raise InputError(
            file=source,
            field=field,
            expected="a path that resolves",
            got=f"{value} ({e})",
            fix="correct the path (a symlink loop?)",
        ) from None
    note_input(out)  # evidence and model: no output of this run may land on them
    return out


DATASET_INFO = "meta/info.json"
"""Where a LeRobot dataset's root folder holds its info (``simgap.evidence.lerobot``)."""


def check_dataset_root(path: Path | None, source: Path | None) -> None:
    """Refuse an ``evidence.dataset`` folder that is not a LeRobot dataset's root (no
    ``meta/info.json``), naming the rig file and the field, and the dataset root above it
    when the path lies inside one. A missing path is left to the evidence check (which
    names every missing path at once).

    Raises:
        InputError: naming ``source``, ``evidence.dataset``, what was expected and the fix.
    """
    if path is None or not path.is_dir() or (path / DATASET_INFO).is_file():
        return
    root = next((p for p in path.parents if (p / DATASET_INFO).is_file()), None)
    fix = (
        f"point evidence.dataset at the dataset's root folder, {root}"
        if root is not None
        else "point evidence.dataset at a LeRobot dataset's root folder (the one holding "
        f"{DATASET_INFO})"
    )
    raise InputError(
        file=source,
        field="evidence.dataset",
        expected=f"a LeRobot dataset's root folder (holding {DATASET_INFO})",
        got=f"{path}, which has no {DATASET_INFO}",
        fix=fix,
    )


GUESSED_MARK = "guessed"
"""A rig.toml value whose line ends in a comment starting with this word (``simgap init``
writes ``dt_s = 0.0667   # guessed: 1 / fps of the recording``) is a guess: the user has
not stated it until the mark is removed."""
MANISKILL_MARK = "from maniskill"
"""A value whose comment starts with this (``simgap init --maniskill-config`` writes
``control_dt_s = 0.05   # from ManiSkill: 1 / control_freq``) was read from the training
environment itself: stated, with its provenance ``from ManiSkill``."""


def _header(line: str) -> tuple[str, ...] | None:
    """The key path of a ``[table]`` header line; None when it is not one on its own."""
    try:
        d: Any = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(d, dict) and len(d) == 1:
        ((k, d),) = d.items()
        path.append(k)
    return tuple(path) if d == {} else None


def _marked_key(line: str, mark: str = GUESSED_MARK) -> tuple[str, ...] | None:
    """The key path of a one-line ``key = value  # guessed ...``; None otherwise.

    The comment starts at the first ``#`` before which the line parses to the same value
    (a ``#`` inside a string is not one)."""
    try:
        full: Any = tomllib.loads(line)
    except tomllib.TOMLDecodeError:
        return None
    for i, ch in enumerate(line):
        if ch != "#":
            continue
        try:
            same = tomllib.loads(line[:i]) == full
        except tomllib.TOMLDecodeError:
            continue
        if not same:
            continue
        if not line[i + 1 :].strip().lower().startswith(mark):
            return None
        path: list[str] = []
        while isinstance(full, dict) and len(full) == 1:
            ((k, full),) = full.items()
            path.append(k)
        return tuple(path) if path else None
    return None


def guessed_keys(text: str, mark: str = GUESSED_MARK) -> frozenset[str]:
    """The dotted keys (``control.dt_s``, ``joints.gripper.range_rad``) whose line in the
    rig file carries a ``# guessed`` comment (``GUESSED_MARK``; ``mark``: another such
    comment, ``MANISKILL_MARK``)."""
    out: set[str] = set()
    section: tuple[str, ...] | None = ()
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[["):
            section = None  # an array of tables: no rig key lives there
        elif line.startswith("["):
            section = _header(line)
        elif section is not None and mark in line.lower():
            key = _marked_key(line, mark)
            if key is not None:
                out.add(".".join(section + key))
    return frozenset(out)
