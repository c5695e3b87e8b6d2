"""What ``simgap init`` reads of a LeRobot dataset and a MuJoCo model: ``meta/info.json``,
the features' names and image shapes, the arm's calibration, and the model's names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from simgap.errors import InputError


def read_info(dataset: Path) -> dict[str, Any]:
    """The dataset's ``meta/info.json``."""
    from simgap.evidence.lerobot import check_dataset_folder

    check_dataset_folder(dataset, fix="pass the dataset's root folder as DATASET")
    path = dataset / "meta" / "info.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(file=path, expected="JSON", got=str(e)) from None
    if not isinstance(info, dict) or not isinstance(info.get("features"), dict):
        raise InputError(
            file=path,
            field="features",
            expected="a features table",
            got=type(info.get("features") if isinstance(info, dict) else info).__name__,
        )
    return info


def read_calibration(path: Path) -> dict[str, dict[str, int]]:
    """LeRobot's calibration JSON (``evidence.calibration``) as ``{motor: {"range_min",
    "range_max", "drive_mode", ...}}``."""
    from simgap.evidence.calibration import read_calibration as read

    return {m: dict(vars(c)) for m, c in read(path).motors.items()}


def feature_names(feature: Any) -> list[str]:
    names = feature.get("names") if isinstance(feature, dict) else None
    if isinstance(names, dict):  # LeRobot v2: {"motors": [...]}
        names = next((v for v in names.values() if isinstance(v, list)), None)
    return [str(n) for n in names] if isinstance(names, list) else []


def model_names(model: Path) -> tuple[dict[str, list[str]], dict[str, tuple[float, float]]]:
    """({"joint", "site", "camera", "free_body"}: names, {limited joint: (lo, hi) [rad]})."""
    from simgap.sim.model import load_model, names

    m = load_model(model)
    free = [m.body(int(m.jnt_bodyid[j])).name for j in range(m.njnt) if int(m.jnt_type[j]) == 0]
    ranges = {
        m.joint(j).name: (float(m.jnt_range[j][0]), float(m.jnt_range[j][1]))
        for j in range(m.njnt)
        if bool(m.jnt_limited[j])
    }
    return (
        {
            "joint": names(m, "joint"),
            "site": names(m, "site"),
            "camera": names(m, "camera"),
            "free_body": free,
        },
        ranges,
    )


def image_shape(info_path: Path, feature: str, shape: Any) -> list[int]:
    """An image feature's ``shape`` (height, width, ...) as integers.

    Raises:
        InputError: not a list of positive integers.
    """
    if shape is None or shape == []:
        return []
    if not isinstance(shape, list) or not all(
        isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in shape
    ):
        raise InputError(
            file=info_path,
            field=f"features.{feature}.shape",
            expected="a list of positive integers (height, width, channels)",
            got=shape,
            fix="correct the image feature's shape in meta/info.json",
        )
    return list(shape)
