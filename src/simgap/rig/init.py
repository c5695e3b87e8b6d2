"""A first rig.toml from a LeRobot dataset and a MuJoCo model (``simgap init``).

What is read, and what becomes of it:

- ``meta/info.json`` of the dataset: the joint names of ``observation.state`` (else
  ``action``) become ``[joints.<name>]`` with ``recorded = "<name>.pos"``; ``fps`` becomes the
  control period ``[control] dt_s = 1 / fps``; ``robot_type`` picks the units (an SO-100/101 or
  Koch follower records degrees and a 0..100 % gripper) and the encoder noise floor (one count
  of a 4096-count servo); image features are listed for the camera section.
- The model: every joint name is checked against its joints (a miss lists them); the gripper's
  ``range_rad`` is the model joint's range; the end-effector site and the object body are
  guessed from names and free joints.
- LeRobot's calibration file of the arm, when given: the gripper's ``range_min``/``range_max``
  (ticks) give the span of 0..100 %, anchored at the model joint's lower (closed) end.

Nothing is written that the user did not confirm or that cannot be read back: names from the
dataset and the model reach the file only through ``safe_names`` (a joint that is not a bare
TOML key becomes a quoted key, strings use TOML's escapes), and the draft is parsed, its
joint and recorded names checked to read back exactly, and loaded by ``rig_from_dict``
before it is returned. A name no UTF-8 file can hold (a lone surrogate) is an InputError.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig import rig_from_dict
from simgap.safe_names import checked_toml, names_round_trip, shown, toml_key, toml_value
from simgap.units import STS3215_TICKS_PER_REV

MENAGERIE_SO101 = (
    "MuJoCo Menagerie's robotstudio_so101 model (robotstudio_so101/so101.xml, "
    "or scene.xml with a floor, from github.com/google-deepmind/mujoco_menagerie)"
)
_FOLLOWERS = ("so_follower", "bi_so_follower", "so100", "so101", "koch")
"""robot_type prefixes of arms whose LeRobot driver records body joints in degrees (the
default since LeRobot 0.4.4) and the gripper in 0..100 %: LeRobot 0.4.3 and later name the
SO-100/101 follower ``so_follower`` (older datasets ``so101_follower``, ``so100``)."""
_EE_HINTS = ("gripperframe", "ee", "tcp", "end_effector", "grasp", "gripper", "pinch")


@dataclass(frozen=True)
class RigDraft:
    """A rig.toml and what went into it.

    Attributes:
        text: the rig.toml (TOML text that ``load_rig`` accepts where it is written).
        guessed: one line per value that was inferred and should be checked.
        to_fill: one line per thing the user must still add for a branch to run.
    """

    text: str
    guessed: tuple[str, ...]
    to_fill: tuple[str, ...]


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


def _names(feature: Any) -> list[str]:
    names = feature.get("names") if isinstance(feature, dict) else None
    if isinstance(names, dict):  # LeRobot v2: {"motors": [...]}
        names = next((v for v in names.values() if isinstance(v, list)), None)
    return [str(n) for n in names] if isinstance(names, list) else []


def _model_names(model: Path) -> tuple[dict[str, list[str]], dict[str, tuple[float, float]]]:
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


def _toml(v: Any, where: str = "value") -> str:
    """A TOML value (``safe_names.toml_value``: names quoted with TOML's escapes)."""
    return toml_value(v, where)


def _image_shape(info_path: Path, feature: str, shape: Any) -> list[int]:
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


M100_HOW = (
    "To tell: in meta/stats.json, a body joint of observation.state past ±100 means "
    "degrees (-100..100 readings are clipped to the calibrated range); all within "
    "±100, with the joints driven to their ends at exactly -100 or 100, means "
    "-100..100; the gripper reads 0..100 in both"
)
"""How to tell degrees from LeRobot's -100..100 body range (docs/rig.md, 'Degrees or
-100..100')."""
END_TOL = 1e-3
"""A -100..100 reading at the calibrated end is clipped to exactly 100 (within float32)."""
DEG_PER_TICK = 360.0 / 4095.0
"""LeRobot's degrees formula: (ticks - middle of the calibrated range) * 360 / 4095."""


def _stats_range(dataset: Path, key: str, n: int) -> tuple[list[float], list[float]] | str:
    """``key``'s per-entry min and max from ``meta/stats.json``, or why they are not read."""
    path = dataset / "meta" / "stats.json"
    try:
        stats = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return f"{path} is absent"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        return f"{path} is unreadable ({type(e).__name__})"
    st = stats.get(key) if isinstance(stats, dict) else None
    lo, hi = (st.get("min"), st.get("max")) if isinstance(st, dict) else (None, None)

    def numbers(v: Any) -> bool:
        return (
            isinstance(v, list)
            and len(v) == n
            and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                for x in v
            )
        )

    if not (isinstance(lo, list) and isinstance(hi, list) and numbers(lo) and numbers(hi)):
        return f"{path} has no min and max of {n} numbers for {key}"
    return [float(x) for x in lo], [float(x) for x in hi]


def body_range_evidence(
    dataset: Path,
    key: str,
    body: Mapping[str, str],
    recorded: Sequence[str],
    calibration: Mapping[str, Mapping[str, int]] | None = None,
) -> str:
    """Which of degrees and -100..100 the dataset's own statistics point to, with the
    numbers: ``meta/stats.json``'s min and max of ``key`` for the body joints (``body``: model
    joint -> recorded name). A body joint past ±100 is degrees (a -100..100 reading is
    clipped to ±100); all within ±100 with some at exactly ±100 (driven to a calibrated
    end) is -100..100; otherwise, with the calibration, a joint past the most its calibrated
    span reaches in degrees is -100..100; else the dataset cannot tell, and the sentence
    says how to."""
    rng = _stats_range(dataset, key, len(recorded))
    if isinstance(rng, str):
        return f"{rng}, so init could not check. {M100_HOW}."
    lo, hi = rng
    per = {
        j: (lo[recorded.index(r)], hi[recorded.index(r)]) for j, r in body.items() if r in recorded
    }
    if not per:
        return f"{M100_HOW}."

    def peak(j: str) -> float:
        return max(abs(per[j][0]), abs(per[j][1]))

    top = max(per, key=peak)
    span = f"{shown(top)} reads {per[top][0]:.1f}..{per[top][1]:.1f}"
    where = f"meta/stats.json, {key}"
    if peak(top) > 100.0 + END_TOL:
        return (
            f"{where}: {span}, past ±100, so degrees, as written (a -100..100 reading "
            "never leaves ±100)."
        )
    ends = [j for j in per if any(abs(abs(v) - 100.0) <= END_TOL for v in per[j])]
    if ends:
        return (
            f"{where}: every body joint within ±100 (widest: {span}) and "
            f"{', '.join(shown(j) for j in ends)} at exactly ±100: this looks like "
            '-100..100, so set unit = "m100" and range_rad (the model angles at -100 '
            "and 100) on each body joint."
        )
    for j in per:
        c = (calibration or {}).get(j)
        if c is None:
            continue
        reach = (c["range_max"] - c["range_min"]) / 2.0 * DEG_PER_TICK
        if peak(j) > reach + 1.0:
            return (
                f"{where}: {shown(j)} reads {per[j][0]:.1f}..{per[j][1]:.1f}, past the "
                f"±{reach:.1f} degrees its calibrated span allows: this looks like "
                '-100..100, so set unit = "m100" and range_rad on each body joint.'
            )
    return (
        f"{where}: every body joint within ±100 (widest: {span}) and none at exactly "
        "±100, which either unit can give; a joint that swept its whole calibrated "
        "range reads ±(range_max - range_min) / 2 * 360 / 4095 at its ends in degrees, "
        "±100 in -100..100"
        + ("" if calibration else " (pass --calibration and init compares them)")
        + "."
    )


def draft_rig(
    dataset: str | Path,
    model: str | Path | None,
    rig_path: str | Path,
    *,
    calibration: str | Path | None = None,
    name: str | None = None,
    joint_map: Mapping[str, str] | None = None,
    maniskill_config: str | Path | None = None,
    maniskill_camera: str | None = None,
) -> RigDraft:
    """Draft ``rig_path``'s text for ``dataset`` and ``model`` (paths written relative to it).

    Raises:
        InputError: no meta/info.json, no joint names in it, no model (for an SO-101 the
            message points at MuJoCo Menagerie's robotstudio_so101), or a joint the model
            does not have (the model's joints are listed).
    """
    dataset, rig_path = Path(dataset).resolve(), Path(rig_path).resolve()
    info = read_info(dataset)
    robot = str(info.get("robot_type") or "")
    follower = any(robot.lower().startswith(k) for k in _FOLLOWERS)
    if model is None:
        raise InputError(
            field="--model",
            expected="a MuJoCo model (MJCF) of the arm",
            got="nothing",
            fix=f"for an {robot or 'SO-101'}, use {MENAGERIE_SO101}"
            if follower or not robot
            else "pass --model path/to/arm.xml",
        )
    model = Path(model).resolve()
    found, ranges = _model_names(model)
    feats = info["features"]
    key = "observation.state" if _names(feats.get("observation.state")) else "action"
    recorded = _names(feats.get(key))
    if not recorded:
        raise InputError(
            file=dataset / "meta" / "info.json",
            field="features.observation.state.names",
            expected="joint names",
            got="none",
            fix="record with a LeRobot version that names the state's entries",
        )
    jmap = dict(joint_map or {})
    joints: dict[str, str] = {}
    missing = []
    for rec in recorded:
        j = jmap.get(rec, rec.removesuffix(".pos"))
        if j in found["joint"]:
            joints[j] = rec
        else:
            missing.append((rec, j))
    if missing:
        rec, j = missing[0]
        raise InputError(
            file=model,
            field=f"joint {j!r} (from {key} entry {rec!r})",
            expected="a joint of the model: " + ", ".join(shown(n) for n in found["joint"]),
            got=f"{len(missing)} name(s) the model lacks: "
            + ", ".join(shown(m[1]) for m in missing),
            fix=f"pass --map {shown(rec)}=<model joint> for each",
        )
    guessed: list[str] = [
        f"joints: {', '.join(shown(j) for j in joints)} (from {key}, matched to the model)"
    ]
    to_fill: list[str] = []
    fps = info.get("fps")
    if (
        isinstance(fps, bool)
        or not isinstance(fps, (int, float))
        or not math.isfinite(fps)
        or fps <= 0
    ):
        raise InputError(
            file=dataset / "meta" / "info.json",
            field="fps",
            expected="the recording rate [Hz], a positive number",
            got=f"{fps!r} (a {type(fps).__name__})",
        )
    dt = 1.0 / float(fps)
    guessed.append(
        f"control.dt_s = {dt:.7g} s (1 / fps {fps}): set it to the period your "
        "simulation ran the policy at if that differs"
    )
    rel = os.path.relpath
    base = rig_path.parent
    cal = read_calibration(Path(calibration)) if calibration else {}
    lines = [
        "# Written by 'simgap init'. Check every line marked 'guessed'.",
        f"name = {_toml(name or dataset.name, '--name or the dataset folder')}",
        "seed = 0",
        "",
        "[model]",
        f"path = {_toml(rel(model, base), '--model')}",
    ]
    site = next((s for h in _EE_HINTS for s in found["site"] if h in s.lower()), None)
    if site:
        lines.append(f"ee_site = {_toml(site, 'model site')}   # guessed from the name")
        guessed.append(f"model.ee_site = {site!r} (from its name)")
    else:
        sites = ", ".join(found["site"]) or "none"
        to_fill.append(
            "model.ee_site: the end-effector site (the controller and envelope "
            f"branches need it); the model's sites: {sites}"
        )
    if found["free_body"]:
        obj = found["free_body"][0]
        lines.append(f"object_body = {_toml(obj, 'model body')}   # guessed: the first free body")
        guessed.append(f"model.object_body = {obj!r} (the model's first free body)")
    else:
        to_fill.append("model.object_body: the manipulated object's body (contact branch)")
    lines += [
        "",
        "[control]",
        f"dt_s = {dt:.7g}   # guessed: 1 / fps of the recording",
        f"real_dt_s = {dt:.7g}",
        'action_space = "joint_position"',
        "",
    ]
    unit_note = "degrees, gripper 0..100 %" if follower else "radians"
    guessed.append(
        f"units: {unit_note} (robot_type {robot or 'not given'}); a recording made "
        "with LeRobot's -100..100 body range (use_degrees=False, the default up to "
        'LeRobot 0.4.3) needs unit = "m100" and range_rad instead. '
        + (
            body_range_evidence(
                dataset,
                key,
                {j: r for j, r in joints.items() if "gripper" not in j.lower()},
                recorded,
                cal,
            )
            if follower
            else f"{M100_HOW}."
        )
    )
    cal_units = (
        _calibrated_units(Path(calibration), model, joints, dataset, key, recorded)
        if calibration and follower
        else {}
    )
    for j, rec in joints.items():
        lines += [
            f"[joints.{toml_key(j, f'model joint {j!r}')}]",
            f"recorded = {_toml(rec, f'{key} entry {rec!r}')}",
        ]
        is_grip = "gripper" in j.lower()
        if not follower:
            lines.append('unit = "rad"')
            continue
        if j in cal_units:
            cal_lines, note = cal_units[j]
            lines += cal_lines
            guessed.append(note)
            continue
        if not is_grip:
            lines.append('unit = "deg"')
            continue
        lo_hi = ranges.get(j)
        if lo_hi:
            rng: list[float] | None = [lo_hi[0], lo_hi[1]]
            guessed.append(
                f"joints.{shown(j)}.range_rad = the model joint's range "
                f"[{lo_hi[0]:.4g}, {lo_hi[1]:.4g}] rad; pass --calibration for the "
                "arm's own span"
            )
        else:
            rng = None
            to_fill.append(f"joints.{shown(j)}.range_rad: the model angles [rad] at 0 % and 100 %")
        lines += ['unit = "pct"', "gripper = true"]
        if rng:
            lines.append(f"range_rad = {_toml(rng)}   # guessed")
    if follower:
        enc = 2 * math.pi / STS3215_TICKS_PER_REV
        lines += ["", "[noise]", f"encoder_rad = {enc:.8g}   # one count of a 4096-count servo"]
    images = [
        k for k, f in feats.items() if isinstance(f, dict) and f.get("dtype") in ("image", "video")
    ]
    ms = None
    if maniskill_config is not None:
        from simgap.maniskill.config import read_maniskill_config

        ms = read_maniskill_config(maniskill_config, maniskill_camera)
    ms_cam = _maniskill_camera(ms, images, found["camera"], dataset, feats, guessed, to_fill)
    if ms_cam:
        lines += ms_cam
    elif images:
        cam = next(
            (c for c in found["camera"] for k in images if c.split("_")[0] in k.split(".")[-1]),
            None,
        )
        shape = _image_shape(
            dataset / "meta" / "info.json", images[0], feats[images[0]].get("shape")
        )
        lines += [
            "",
            "# The camera (appearance branch): uncomment, and set the resolution the",
            "# policy sees.",
            "# [camera]",
            f"# name = {_toml(cam or '<model camera>', 'model camera')}",
            f"# recorded = {_toml(images[0], 'image feature')}",
        ]
        if len(shape) >= 2:
            lines.append(f"# render_resolution = {_toml([int(shape[0]), int(shape[1])])}")
        lines.append("# policy_resolution = [<height>, <width>]")
        to_fill.append(
            f"[camera]: images {', '.join(images)} were recorded; the model's "
            f"cameras: {', '.join(found['camera']) or 'none'}; fill the commented "
            "section for the appearance branch"
        )
    if ms is not None:
        lines += ["", *_maniskill_lines(ms, robot, guessed, to_fill)]
    lines += ["", "[evidence]", f"dataset = {_toml(rel(dataset, base), 'the dataset folder')}"]
    to_fill += [
        "[training]: what the policy was trained with (rate, noise, workspace) for "
        "the envelope branch"
        if ms is None
        else "[training]: obs_noise_std_rad and "
        "the workspace (the envelope branch); ManiSkill's export does not carry them",
        "[evidence]: timing logs, servo logs, push logs, "
        "evaluation manifests, frames: each adds a branch (docs/formats.md)",
    ]
    text = "\n".join(lines) + "\n"
    parsed = checked_toml(text, f"rig file {rig_path.name}")  # read back before it is written
    names_round_trip(parsed.get("joints", {}), list(joints), "rig file's [joints]")
    names_round_trip(
        [str(v.get("recorded")) for v in parsed["joints"].values()],
        list(joints.values()),
        "rig file's recorded names",
    )
    rig_from_dict(parsed, source=rig_path)
    return RigDraft(text=text, guessed=tuple(guessed), to_fill=tuple(to_fill))


def _maniskill_lines(
    ms: Any,
    robot: str,
    guessed: list[str],
    to_fill: list[str],
) -> list[str]:
    """``[training]`` from a ManiSkill export and the ``[deploy]`` keys the training audit
    reads: LeRobot's robot name from the dataset's robot_type, the rest to fill."""
    from simgap.maniskill.training_toml import training_lines

    guessed.append(
        f"[training]: from ManiSkill ({ms.source.name}: {ms.env_id}, agent "
        f"{ms.agent}, {ms.control_mode}); marked '# from ManiSkill'"
    )
    out = training_lines(ms) + ["", "[deploy]"]
    if robot:
        out.append(
            f"robot_name = {_toml(robot, 'robot_type')}   # the dataset's robot_type "
            "(LeRobot's robot.name)"
        )
    to_fill.append(
        'deploy: bridge ("LeRobotRealAgent" where ManiSkill\'s Sim2RealEnv drives '
        "the arm), action_scale, servo_model and servo_p_gain, finger_friction and "
        "object_mass_kg as measured (simgap training holds them against training)"
    )
    return out


def _maniskill_camera(
    ms: Any,
    images: Sequence[str],
    cameras: Sequence[str],
    dataset: Path,
    feats: Mapping[str, Any],
    guessed: list[str],
    to_fill: list[str],
) -> list[str]:
    """A ``[camera]`` section with the training camera's keys from a ManiSkill export, when
    it has a camera and the model one to name (the one matching an image feature, else its
    only camera); else nothing (the commented section is written as without the export)."""
    if ms is None or ms.camera is None:
        return []
    from simgap.maniskill.training_toml import camera_lines

    cam = next(
        (c for c in cameras for k in images if c.split("_")[0] in k.split(".")[-1]),
        cameras[0] if len(cameras) == 1 else None,
    )
    if cam is None:
        to_fill.append(
            f"[camera]: the training camera {ms.camera.uid} was exported, but the "
            f"model's cameras ({', '.join(cameras) or 'none'}) do not say which "
            "one it is; add [camera] name = ... and init's training_* lines"
        )
        return []
    out = ["", "[camera]", f"name = {_toml(cam, 'model camera')}   # guessed: the model camera"]
    guessed.append(
        f"camera.name = {cam!r} (the model camera beside the training camera {ms.camera.uid})"
    )
    if images:
        out.append(f"recorded = {_toml(images[0], 'image feature')}")
        shape = _image_shape(
            dataset / "meta" / "info.json", images[0], feats[images[0]].get("shape")
        )
        if len(shape) >= 2:
            out.append(f"render_resolution = {_toml([int(shape[0]), int(shape[1])])}")
    to_fill.append(
        "camera.policy_resolution: the size the policy's preprocessing gives the "
        f"image (training rendered {ms.camera.resolution[0]}x"
        f"{ms.camera.resolution[1]})"
    )
    return out + camera_lines(ms)


def _calibrated_units(
    path: Path,
    model: Path,
    joints: Mapping[str, str],
    dataset: Path,
    key: str,
    recorded: Sequence[str],
) -> dict[str, tuple[list[str], str]]:
    """Per model joint the rig.toml lines LeRobot's calibration gives (``unit``, ``sign``,
    ``offset_rad`` or ``range_rad``: ``calibration.mapping.joint_unit``) and the line saying
    where they came from. Degrees or -100..100 follow the dataset's statistics
    (``body_range_evidence``), degrees where they cannot tell (LeRobot's default since
    0.4.4); an offset within the zero's rounding (1 tick) is left out."""
    from simgap.calibration.mapping import LeRobotMap, gripper_home_rad, joint_unit
    from simgap.evidence.calibration import read_calibration as read
    from simgap.sim.load import joint_ranges
    from simgap.values.calibration import RAD_PER_TICK, norm_mode

    cal = read(path)
    motors = {
        j: next((m for m in (r.removesuffix(".pos"), j) if m in cal), None)
        for j, r in joints.items()
    }
    matched = {j: m for j, m in motors.items() if m is not None}
    ranges = joint_ranges(model, list(matched))
    body = {j: r for j, r in joints.items() if "gripper" not in j.lower()}
    evidence = body_range_evidence(
        dataset, key, body, recorded, {m: dict(vars(cal[m])) for m in matched.values()}
    )
    use_degrees = "looks like -100..100" not in evidence
    out: dict[str, tuple[list[str], str]] = {}
    for j, m in matched.items():
        grip = "gripper" in j.lower()
        mode = norm_mode("gripper" if grip else m, use_degrees)
        lo, hi = ranges[j]
        home = gripper_home_rad(cal[m], lo) if grip else (lo + hi) / 2.0
        u = joint_unit(LeRobotMap(cal[m], mode, home))
        lines = [f'unit = "{u.unit}"']
        where = f"{path.name} {shown(m)}"
        if u.lo_rad is not None and u.hi_rad is not None:
            lines.append(
                f"range_rad = {_toml([round(u.lo_rad, 6), round(u.hi_rad, 6)])}"
                f"   # {where}: range_min..range_max, drive_mode {cal[m].drive_mode}"
            )
        if u.sign < 0:
            lines.append(f"sign = -1   # {where}: the readings run against the model's axis")
        if u.unit == "deg" and abs(u.offset_rad - home) > RAD_PER_TICK:
            lines.append(
                f"offset_rad = {u.offset_rad:.6g}   # {where}: LeRobot's zero (the "
                f"range's middle) {math.degrees(u.offset_rad - home):+.1f} deg from "
                "the homing pose"
            )
        elif u.unit == "deg" and abs(home) > RAD_PER_TICK:
            lines.append(f"offset_rad = {home:.6g}   # {where}: the model range's centre")
        if grip:
            lines.append("gripper = true")
        note = (
            f"joints.{shown(j)}: unit {u.unit}"
            + (f", sign {u.sign:+.0f}" if u.sign < 0 else "")
            + (
                f", range_rad [{u.lo_rad:.4g}, {u.hi_rad:.4g}]"
                if u.lo_rad is not None
                else f", offset_rad {u.offset_rad:.4g}"
            )
            + f" from the calibration ({where}; homing pose at the "
            + ("closed end" if grip else "model range's centre")
            + ")"
        )
        out[j] = (lines, note)
    return out


def parse_map(items: Sequence[str]) -> dict[str, str]:
    """``["feature=joint", ...]`` as a mapping."""
    out = {}
    for it in items:
        feat, sep, joint = it.partition("=")
        if not sep or not feat or not joint:
            raise InputError(field="--map", expected="FEATURE=MODEL_JOINT", got=it)
        out[feat.strip()] = joint.strip()
    return out
