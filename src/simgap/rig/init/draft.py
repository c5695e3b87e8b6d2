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

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from simgap.errors import InputError
from simgap.rig import rig_from_dict
from simgap.rig.init.body_range import M100_HOW, body_range_evidence
from simgap.rig.init.calibrated import calibrated_units
from simgap.rig.init.dataset import (
    feature_names,
    image_shape,
    model_names,
    read_calibration,
    read_info,
)
from simgap.rig.init.maniskill import maniskill_camera_lines, maniskill_lines
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
    found, ranges = model_names(model)
    feats = info["features"]
    key = "observation.state" if feature_names(feats.get("observation.state")) else "action"
    recorded = feature_names(feats.get(key))
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
        f"name = {toml_value(name or dataset.name, '--name or the dataset folder')}",
        "seed = 0",
        "",
        "[model]",
        f"path = {toml_value(rel(model, base), '--model')}",
    ]
    site = next((s for h in _EE_HINTS for s in found["site"] if h in s.lower()), None)
    if site:
        lines.append(f"ee_site = {toml_value(site, 'model site')}   # guessed from the name")
        guessed.append(f"model.ee_site = {site!r} (from its name)")
    else:
        sites = ", ".join(found["site"]) or "none"
        to_fill.append(
            "model.ee_site: the end-effector site (the controller and envelope "
            f"branches need it); the model's sites: {sites}"
        )
    if found["free_body"]:
        obj = found["free_body"][0]
        lines.append(
            f"object_body = {toml_value(obj, 'model body')}   # guessed: the first free body"
        )
        guessed.append(f"model.object_body = {obj!r} (the model's first free body)")
    else:
        to_fill.append("model.object_body: the manipulated object's body (contact branch)")
    lines += [
        "",
        "[control]",
        f"dt_s = {dt:.7g}   # guessed: 1 / fps of the recording",
        f"real_dt_s = {dt:.7g}   # the recording's period (its fps)",
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
        calibrated_units(Path(calibration), model, joints, dataset, key, recorded)
        if calibration and follower
        else {}
    )
    for j, rec in joints.items():
        lines += [
            f"[joints.{toml_key(j, f'model joint {j!r}')}]",
            f"recorded = {toml_value(rec, f'{key} entry {rec!r}')}",
        ]
        is_grip = "gripper" in j.lower()
        if not follower:
            lines.append('unit = "rad"   # guessed: not a LeRobot follower arm')
            continue
        if j in cal_units:
            cal_lines, note = cal_units[j]
            lines += cal_lines
            guessed.append(note)
            continue
        if not is_grip:
            lines.append('unit = "deg"   # guessed: use_degrees=True (-100..100 would be "m100")')
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
        lines += ['unit = "pct"   # guessed: the gripper in 0..100 %', "gripper = true"]
        if rng:
            lines.append(f"range_rad = {toml_value(rng)}   # guessed")
    if follower:
        enc = 2 * math.pi / STS3215_TICKS_PER_REV
        lines += [
            "",
            "[noise]",
            f"encoder_rad = {enc:.8g}   # guessed: one count of a 4096-count servo (STS3215)",
        ]
    images = [
        k for k, f in feats.items() if isinstance(f, dict) and f.get("dtype") in ("image", "video")
    ]
    ms = None
    if maniskill_config is not None:
        from simgap.maniskill.config import read_maniskill_config

        ms = read_maniskill_config(maniskill_config, maniskill_camera)
    ms_cam = maniskill_camera_lines(ms, images, found["camera"], dataset, feats, guessed, to_fill)
    if ms_cam:
        lines += ms_cam
    elif images:
        cam = next(
            (c for c in found["camera"] for k in images if c.split("_")[0] in k.split(".")[-1]),
            None,
        )
        shape = image_shape(
            dataset / "meta" / "info.json", images[0], feats[images[0]].get("shape")
        )
        lines += [
            "",
            "# The camera (appearance branch): uncomment, and set the resolution the",
            "# policy sees.",
            "# [camera]",
            f"# name = {toml_value(cam or '<model camera>', 'model camera')}",
            f"# recorded = {toml_value(images[0], 'image feature')}",
        ]
        if len(shape) >= 2:
            lines.append(f"# render_resolution = {toml_value([int(shape[0]), int(shape[1])])}")
        lines.append("# policy_resolution = [<height>, <width>]")
        to_fill.append(
            f"[camera]: images {', '.join(images)} were recorded; the model's "
            f"cameras: {', '.join(found['camera']) or 'none'}; fill the commented "
            "section for the appearance branch"
        )
    if ms is not None:
        lines += ["", *maniskill_lines(ms, robot, guessed, to_fill)]
    lines += ["", "[evidence]", f"dataset = {toml_value(rel(dataset, base), 'the dataset folder')}"]
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


def parse_map(items: Sequence[str]) -> dict[str, str]:
    """``["feature=joint", ...]`` as a mapping."""
    out = {}
    for it in items:
        feat, sep, joint = it.partition("=")
        if not sep or not feat or not joint:
            raise InputError(field="--map", expected="FEATURE=MODEL_JOINT", got=it)
        out[feat.strip()] = joint.strip()
    return out
