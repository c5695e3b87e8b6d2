"""Loading ``rig.toml`` into a ``Rig`` (``simgap.rig.model``): every key checked against the
schema (``simgap.rig.schema``) and its values (``simgap.rig.checks``) on load; unknown and
missing keys are errors that name the key. The format is documented in ``docs/rig.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.camera import read_camera
from simgap.rig.checks import MANISKILL_MARK, check_rig_values, guessed_keys, resolve_path
from simgap.rig.deploy import read_deploy
from simgap.rig.evidence import evidence_is_frames_only, read_evidence
from simgap.rig.fields import check_section, positive
from simgap.rig.joints import read_joints
from simgap.rig.model import Rig
from simgap.rig.schema import SECTIONS
from simgap.rig.training import read_training
from simgap.units import ENCODER_RESOLUTION_RAD


def _jitter(noise: Mapping[str, Any], source: Path | None) -> float:
    v = noise.get("clock_jitter_s", 0.0)
    if not (
        isinstance(v, (int, float))
        and not isinstance(v, bool)
        and math.isfinite(v)
        and 0.0 <= v < 1.0
    ):
        raise InputError(
            file=source,
            field="noise.clock_jitter_s",
            expected="a spread of the reads inside a frame in seconds, >= 0 and below a second",
            got=v,
            fix="e.g. clock_jitter_s = 0.002 for reads spread over 2 ms",
        )
    return float(v)


def load_rig(path: str | Path) -> Rig:
    """Load and validate ``rig.toml`` (its model's names: ``simgap.sim.rig_names``).

    Raises:
        InputError: the file is missing or not TOML, a key is unknown or missing, a value has
            the wrong type or range. The message names the file and the key.
    """
    from simgap.validate import parse_toml, read_text

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise InputError(
            file=path,
            expected="a rig.toml file",
            got="no such file",
            fix="pass the path of your rig.toml (see docs/rig.md)",
        )
    text = read_text(path, "a rig.toml file")
    raw = parse_toml(text, path, "valid TOML")
    return rig_from_dict(
        raw,
        source=path,
        guessed=guessed_keys(text),
        from_maniskill=guessed_keys(text, MANISKILL_MARK),
    )


def _control_dt(control: Mapping[str, Any], frames_only: bool, source: Path | None) -> float:
    """``[control] dt_s``; NaN (unused) for a rig whose evidence is frames alone."""
    if "dt_s" in control:
        return positive(control["dt_s"], source, "control.dt_s")
    if frames_only:
        return math.nan
    raise InputError(
        file=source,
        field="control.dt_s",
        expected="this required key: the simulated control period [s]",
        got="nothing",
        fix="add dt_s = 0.0333 (30 Hz) under [control]; only a rig whose "
        "evidence is frames alone may leave it out",
    )


def rig_from_dict(
    raw: Mapping[str, Any],
    source: Path | None = None,
    *,
    guessed: frozenset[str] = frozenset(),
    from_maniskill: frozenset[str] = frozenset(),
) -> Rig:
    """Validate a parsed rig mapping and build the frozen ``Rig``; ``guessed`` are the
    dotted keys the file marks ``# guessed`` (``rig.checks.guessed_keys``),
    ``from_maniskill`` those it marks ``# from ManiSkill``."""
    base = source.parent if source is not None else Path.cwd()
    check_section(raw, "", "", source)
    frames_only = evidence_is_frames_only(raw.get("evidence"))
    for sec in ("model",) if frames_only else ("model", "control"):
        if sec not in raw:
            raise InputError(
                file=source,
                field=sec,
                expected=f"a [{sec}] section",
                got="nothing",
                fix=f"add a [{sec}] table to the rig file",
            )
    sections: dict[str, Mapping[str, Any]] = {}
    for sec in SECTIONS:
        if sec == "joints":
            continue
        val = raw.get(sec, {})
        if not isinstance(val, Mapping):
            raise InputError(file=source, field=sec, expected="a table", got=val)
        if sec in raw:
            check_section(val, sec, sec, source)
        sections[sec] = val
    check_rig_values(raw, source)

    joints = read_joints(raw, source)

    model = sections["model"]
    control = sections["control"]
    action_space = control.get("action_space", "joint_position")
    if action_space not in ("joint_position", "ee_delta"):
        raise InputError(
            file=source,
            field="control.action_space",
            expected="joint_position or ee_delta",
            got=action_space,
        )
    interp = control.get("command_interp", "hold")
    if interp not in ("hold", "linear"):
        raise InputError(
            file=source, field="control.command_interp", expected="hold or linear", got=interp
        )
    clock = control.get("clock", "auto")
    if clock not in ("auto", "exact", "step"):
        raise InputError(
            file=source,
            field="control.clock",
            expected="auto, exact or step",
            got=clock,
            fix="leave it out (auto: identified from the recording), or 'exact' "
            "(reads and commands at the frame stamps) or 'step' (on the "
            "first physics step at or after them: a simulated recorder)",
        )

    cam = read_camera(sections["camera"], source) if "camera" in raw else None
    training = read_training(sections["training"], source)
    deploy = read_deploy(sections["deploy"], joints, source)
    f = sections["frame"]
    origin = None
    if "origin_reference_m" in f:
        o = f["origin_reference_m"]
        if not (isinstance(o, list) and len(o) == 3):
            raise InputError(
                file=source, field="frame.origin_reference_m", expected="[x, y, z] in metres", got=o
            )
        origin = (float(o[0]), float(o[1]), float(o[2]))

    evidence = read_evidence(sections["evidence"], base, source)

    noise = sections["noise"]
    return Rig(
        name=raw["name"],
        source=source,
        model_path=resolve_path(base, model["path"], source, "model.path"),
        joints=tuple(joints),
        control_dt_s=_control_dt(control, frames_only, source),
        physics_dt_s=positive(model["physics_dt_s"], source, "model.physics_dt_s")
        if "physics_dt_s" in model
        else None,
        action_space=action_space,
        command_interp=interp,
        clock=clock,
        real_dt_s=positive(control["real_dt_s"], source, "control.real_dt_s")
        if "real_dt_s" in control
        else None,
        ee_site=model.get("ee_site"),
        object_body=model.get("object_body"),
        object_geom=model.get("object_geom"),
        gripper_geoms=tuple(str(g) for g in model.get("gripper_geoms", [])),
        encoder_rad=positive(
            noise.get("encoder_rad", ENCODER_RESOLUTION_RAD), source, "noise.encoder_rad"
        ),
        torque_nm=noise.get("torque_nm"),
        clock_jitter_s=_jitter(noise, source),
        camera=cam,
        training=training,
        deploy=deploy,
        origin_reference_m=origin,
        origin_reference_name=f.get("origin_reference_name"),
        evidence=evidence,
        seed=int(raw.get("seed", 0)),
        **_contact(sections["contact"], source),
        compute_backend=_backend(sections["compute"], source),
        compute_address=sections["compute"].get("address"),
        guessed=guessed,
        from_maniskill=from_maniskill,
        given=frozenset(_dotted(raw)),
    )


def _dotted(raw: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Every dotted key of a parsed rig file (tables flattened: ``camera.name``)."""
    out: list[str] = []
    for k, v in raw.items():
        key = f"{prefix}{k}"
        out.append(key)
        if isinstance(v, Mapping):
            out.extend(_dotted(v, key + "."))
    return out


def _contact(c: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[contact]``: the object tracker's noise (1 sigma) and the object's support geoms."""
    out: dict[str, Any] = {}
    for key in ("tracker_noise_m", "tracker_noise_rad"):
        if key in c:
            out[key] = positive(c[key], source, f"contact.{key}")
    if "support_geoms" in c:
        out["support_geoms"] = tuple(str(g) for g in c["support_geoms"])
    return out


def _backend(compute: Mapping[str, Any], source: Path | None) -> str:
    kind = str(compute.get("backend", "local"))
    if kind not in ("local", "ray"):
        raise InputError(
            file=source,
            field="compute.backend",
            expected="'local' or 'ray'",
            got=kind,
            fix='write backend = "ray" (and address = "auto", '
            '"ray://host:10001" or "local") or leave it out',
        )
    return kind
