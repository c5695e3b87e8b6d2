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
from simgap.rig.checks import MANISKILL_MARK, check_rig_values, guessed_keys, resolve_path
from simgap.rig.model import Camera, Deploy, Evidence, JointMap, Rig, Training
from simgap.rig.schema import NUM, SCHEMA, SECTIONS
from simgap.units import ENCODER_RESOLUTION_RAD, UNIT_NAMES, JointUnit


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


def _check_section(
    data: Mapping[str, Any],
    section: str,
    schema_key: str,
    source: Path | None,
) -> None:
    schema = SCHEMA[schema_key]
    label = f"{section}." if section else ""
    for key, value in data.items():
        if key not in schema:
            if schema_key == "" and key in SECTIONS:
                continue
            valid = list(schema) + (list(SECTIONS) if schema_key == "" else [])
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected="a known key",
                got=f"unknown key '{label}{key}'",
                fix=f"remove it or use one of: {', '.join(sorted(valid))}",
            )
        types, _ = schema[key]
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if not ok:
            want = " or ".join(t.__name__ for t in types)
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected=want,
                got=f"{type(value).__name__} {value!r}",
            )
    for key, (_, required) in schema.items():
        if required and key not in data:
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected="this required key",
                got="nothing",
                fix=f"add '{key} = ...' to [{section or 'top level'}]",
            )


def _pair(v: Any, source: Path | None, key: str) -> tuple[float, float]:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, NUM) for x in v)):
        raise InputError(file=source, field=key, expected="a list of two numbers", got=v)
    lo, hi = float(v[0]), float(v[1])
    if not lo < hi:
        raise InputError(file=source, field=key, expected="[low, high] with low < high", got=v)
    return lo, hi


def _positive(v: float, source: Path | None, key: str) -> float:
    if not (math.isfinite(v) and v > 0):
        raise InputError(file=source, field=key, expected="a positive number", got=v)
    return float(v)


_FRAMES_ONLY_KEYS = {"frames", "static_object_poses"}


def _frames_only(ev: Any) -> bool:
    """Whether the evidence is camera frames (and static poses) alone: nothing that runs
    against the control period."""
    return isinstance(ev, Mapping) and bool(ev) and set(ev) <= _FRAMES_ONLY_KEYS


def _control_dt(control: Mapping[str, Any], frames_only: bool, source: Path | None) -> float:
    """``[control] dt_s``; NaN (unused) for a rig whose evidence is frames alone."""
    if "dt_s" in control:
        return _positive(control["dt_s"], source, "control.dt_s")
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
    _check_section(raw, "", "", source)
    frames_only = _frames_only(raw.get("evidence"))
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
            _check_section(val, sec, sec, source)
        sections[sec] = val
    check_rig_values(raw, source)

    joints_raw = raw.get("joints")
    if not isinstance(joints_raw, Mapping) or not joints_raw:
        raise InputError(
            file=source,
            field="joints",
            expected="at least one [joints.<name>] table",
            got=joints_raw,
            fix="map each model joint, e.g. [joints.shoulder_pan]",
        )
    joints: list[JointMap] = []
    for jname, jraw in joints_raw.items():
        if not isinstance(jraw, Mapping):
            raise InputError(file=source, field=f"joints.{jname}", expected="a table", got=jraw)
        _check_section(jraw, f"joints.{jname}", "joint", source)
        unit = jraw.get("unit", "rad")
        if unit not in UNIT_NAMES:
            raise InputError(
                file=source,
                field=f"joints.{jname}.unit",
                expected=f"one of {', '.join(UNIT_NAMES)}",
                got=unit,
            )
        lo = hi = None
        if "range_rad" in jraw:
            lo, hi = _pair(jraw["range_rad"], source, f"joints.{jname}.range_rad")
        try:
            ju = JointUnit(
                unit=unit,
                lo_rad=lo,
                hi_rad=hi,
                ticks_per_rev=int(jraw.get("ticks_per_rev", 4096)),
                zero_ticks=float(jraw.get("zero_ticks", 2048.0)),
                sign=float(jraw.get("sign", 1.0)),
                offset_rad=float(jraw.get("offset_rad", 0.0)),
            )
        except InputError as e:
            raise InputError(
                file=source,
                field=f"joints.{jname}.{e.field}",
                expected=e.expected,
                got=e.got,
                fix=e.fix,
            ) from e
        joints.append(
            JointMap(
                name=str(jname),
                recorded=str(jraw.get("recorded", jname)),
                unit=ju,
                gripper=bool(jraw.get("gripper", False)),
            )
        )

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

    cam = None
    if "camera" in raw:
        c = sections["camera"]
        pres = tuple(int(x) for x in c.get("policy_resolution", [16, 16]))
        rres = tuple(int(x) for x in c.get("render_resolution", [96, 96]))
        for key, res in (("policy_resolution", pres), ("render_resolution", rres)):
            if len(res) != 2 or min(res) <= 0:
                raise InputError(
                    file=source,
                    field=f"camera.{key}",
                    expected="[height, width], positive integers",
                    got=list(res),
                )
        cam = Camera(
            name=c["name"],
            policy_resolution=(pres[0], pres[1]),
            render_resolution=(rres[0], rres[1]),
            training_jitter_px=c.get("training_jitter_px"),
            training_jitter_m=c.get("training_jitter_m"),
            training_jitter_deg=c.get("training_jitter_deg"),
            training_background_max=None
            if c.get("training_background_max") is None
            else float(c["training_background_max"]),
            recorded=c.get("recorded"),
            **_training_camera(c, source),
        )

    t = sections["training"]
    training = Training(
        control_dt_s=t.get("control_dt_s"),
        obs_noise_std_rad=t.get("obs_noise_std_rad"),
        action_scale=float(t.get("action_scale", 1.0)),
        top_speed_rad_s=t.get("top_speed_rad_s"),
        workspace_x_m=_pair(t["workspace_x_m"], source, "training.workspace_x_m")
        if "workspace_x_m" in t
        else None,
        workspace_y_m=_pair(t["workspace_y_m"], source, "training.workspace_y_m")
        if "workspace_y_m" in t
        else None,
        servo_p_gain=t.get("servo_p_gain"),
        object_mass_kg=t.get("object_mass_kg"),
        finger_friction=t.get("finger_friction"),
        **_training_env(t, source),
    )
    d = sections["deploy"]
    deploy = Deploy(
        policy_server=d.get("policy_server"),
        servo_p_gain=d.get("servo_p_gain"),
        gripper_torque_limit=d.get("gripper_torque_limit"),
        action_scale=float(d.get("action_scale", 1.0)),
        servo_model=d.get("servo_model"),
        max_relative_target=_relative_target(d, joints, source),
        goal_speed_rad_s=None
        if d.get("goal_speed_rad_s") is None
        else float(d["goal_speed_rad_s"]),
        robot_name=d.get("robot_name"),
        bridge=d.get("bridge"),
        finger_friction=d.get("finger_friction"),
        object_mass_kg=d.get("object_mass_kg"),
    )
    f = sections["frame"]
    origin = None
    if "origin_reference_m" in f:
        o = f["origin_reference_m"]
        if not (isinstance(o, list) and len(o) == 3):
            raise InputError(
                file=source, field="frame.origin_reference_m", expected="[x, y, z] in metres", got=o
            )
        origin = (float(o[0]), float(o[1]), float(o[2]))

    ev = sections["evidence"]

    def _p(key: str) -> Path | None:
        return resolve_path(base, ev[key], source, f"evidence.{key}") if key in ev else None

    def _ps(key: str) -> tuple[Path, ...]:
        vals = ev.get(key, [])
        if not isinstance(vals, list) or not all(isinstance(v, str) for v in vals):
            raise InputError(
                file=source, field=f"evidence.{key}", expected="a list of paths", got=vals
            )
        return tuple(resolve_path(base, v, source, f"evidence.{key}") for v in vals)

    evidence = Evidence(
        timing_logs=_ps("timing_logs"),
        client_logs=_ps("client_logs"),
        server_logs=_ps("server_logs"),
        dataset=_p("dataset"),
        sim_dataset=_p("sim_dataset"),
        actuator_logs=_ps("actuator_logs"),
        actuator_format=str(ev.get("actuator_format", "lerobot")),
        sim_manifest=_p("sim_manifest"),
        real_manifest=_p("real_manifest"),
        frames=_p("frames"),
        trace=_p("trace"),
        push_logs=_ps("push_logs"),
        checkpoints=_p("checkpoints"),
        static_object_poses=_p("static_object_poses"),
        **_ros2(ev, _ps("ros2_bags"), source),
    )

    noise = sections["noise"]
    return Rig(
        name=raw["name"],
        source=source,
        model_path=resolve_path(base, model["path"], source, "model.path"),
        joints=tuple(joints),
        control_dt_s=_control_dt(control, frames_only, source),
        physics_dt_s=_positive(model["physics_dt_s"], source, "model.physics_dt_s")
        if "physics_dt_s" in model
        else None,
        action_space=action_space,
        command_interp=interp,
        clock=clock,
        real_dt_s=_positive(control["real_dt_s"], source, "control.real_dt_s")
        if "real_dt_s" in control
        else None,
        ee_site=model.get("ee_site"),
        object_body=model.get("object_body"),
        object_geom=model.get("object_geom"),
        gripper_geoms=tuple(str(g) for g in model.get("gripper_geoms", [])),
        encoder_rad=_positive(
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


def _relative_target(
    d: Mapping[str, Any],
    joints: list[JointMap],
    source: Path | None,
) -> tuple[float, ...] | None:
    """``deploy.max_relative_target`` per rig joint (rig order), as LeRobot's SO follower
    takes it: one positive number for every motor, or a table naming every motor (by its
    LeRobot motor name ``shoulder_pan``, the recorded ``shoulder_pan.pos`` or the model
    joint's name)."""
    if "max_relative_target" not in d:
        return None
    v = d["max_relative_target"]
    key = "deploy.max_relative_target"
    unit_hint = (
        "in the joint's recorded unit, as LeRobot's config takes it (degrees; "
        "-100..100 or 0..100 for a normalised joint)"
    )
    if not isinstance(v, Mapping):
        return (_bound(v, source, key, unit_hint),) * len(joints)

    def names(j: JointMap) -> set[str]:
        return {j.name, j.recorded, j.recorded.removesuffix(".pos")}

    valid = sorted({j.recorded.removesuffix(".pos") for j in joints})
    out: dict[str, float] = {}
    for motor, x in v.items():
        hit = next((j for j in joints if str(motor) in names(j)), None)
        if hit is None:
            raise InputError(
                file=source,
                field=f"{key}.{motor}",
                expected=f"a motor of the rig: one of {', '.join(valid)}",
                got=f"unknown motor {motor!r}",
                fix="name each motor as LeRobot does (the recorded name without '.pos')",
            )
        out[hit.name] = _bound(x, source, f"{key}.{motor}", unit_hint)
    missing = [j.recorded.removesuffix(".pos") for j in joints if j.name not in out]
    if missing:
        raise InputError(
            file=source,
            field=key,
            expected="a value for every motor (LeRobot "
            "refuses a table whose keys differ from the motors')",
            got=f"none for {', '.join(missing)}",
            fix="add them, or give one number for every motor",
        )
    return tuple(out[j.name] for j in joints)


def _bound(x: Any, source: Path | None, field: str, unit_hint: str) -> float:
    if isinstance(x, bool) or not isinstance(x, NUM) or not math.isfinite(x) or x <= 0:
        raise InputError(
            file=source,
            field=field,
            expected=f"a positive number {unit_hint}",
            got=x,
            fix="write e.g. max_relative_target = 10.0, or remove it "
            "when the follower's config leaves it at None",
        )
    return float(x)


def _numbers_of(
    v: Any,
    n: tuple[int, ...],
    source: Path | None,
    key: str,
    what: str,
) -> tuple[float, ...]:
    if not (
        isinstance(v, list)
        and len(v) in n
        and all(isinstance(x, NUM) and not isinstance(x, bool) and math.isfinite(x) for x in v)
    ):
        raise InputError(file=source, field=key, expected=what, got=v)
    return tuple(float(x) for x in v)


def _training_camera(c: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[camera]``'s training_* keys of the training camera (``--maniskill-config``)."""
    out: dict[str, Any] = {"training_mount": c.get("training_mount")}
    if "training_pose_m" in c:
        p = _numbers_of(
            c["training_pose_m"],
            (3,),
            source,
            "camera.training_pose_m",
            "[x, y, z] in metres, in the mount link's frame",
        )
        out["training_pose_m"] = (p[0], p[1], p[2])
    if "training_pose_q_wxyz" in c:
        w = _numbers_of(
            c["training_pose_q_wxyz"],
            (4,),
            source,
            "camera.training_pose_q_wxyz",
            "[w, x, y, z], a unit quaternion in the mount link's frame",
        )
        if not 0.99 < math.sqrt(sum(x * x for x in w)) < 1.01:
            raise InputError(
                file=source,
                field="camera.training_pose_q_wxyz",
                expected="a unit quaternion [w, x, y, z]",
                got=list(w),
                fix="copy it from the export (simgap init --maniskill-config)",
            )
        out["training_pose_q_wxyz"] = (w[0], w[1], w[2], w[3])
    if "training_fov_deg" in c:
        out["training_fov_deg"] = _positive(
            c["training_fov_deg"], source, "camera.training_fov_deg"
        )
    if "training_resolution" in c:
        r = _numbers_of(
            c["training_resolution"],
            (2,),
            source,
            "camera.training_resolution",
            "[height, width], positive integers",
        )
        if min(r) <= 0:
            raise InputError(
                file=source,
                field="camera.training_resolution",
                expected="[height, width], positive integers",
                got=list(r),
            )
        out["training_resolution"] = (int(r[0]), int(r[1]))
    return out


def _training_env(t: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[training]``'s keys read from the training environment (``--maniskill-config``)."""
    out: dict[str, Any] = {
        k: t.get(k) for k in ("env_id", "agent", "robot_description", "controller")
    }
    for k in (
        "physics_dt_s",
        "pd_stiffness_nm_rad",
        "pd_damping_nms_rad",
        "pd_force_limit_nm",
        "action_delta_limit_rad",
        "object_size_m",
    ):
        if k in t:
            out[k] = _positive(t[k], source, f"training.{k}")
    if "origin_from_pan_axis_m" in t:
        out["origin_from_pan_axis_m"] = _numbers_of(
            t["origin_from_pan_axis_m"],
            (2, 3),
            source,
            "training.origin_from_pan_axis_m",
            "[x, y] or [x, y, z] in metres, in the base frame",
        )
    return out


def _contact(c: Mapping[str, Any], source: Path | None) -> dict[str, Any]:
    """``[contact]``: the object tracker's noise (1 sigma) and the object's support geoms."""
    out: dict[str, Any] = {}
    for key in ("tracker_noise_m", "tracker_noise_rad"):
        if key in c:
            out[key] = _positive(c[key], source, f"contact.{key}")
    if "support_geoms" in c:
        out["support_geoms"] = tuple(str(g) for g in c["support_geoms"])
    return out


def _ros2(
    ev: Mapping[str, Any],
    bags: tuple[Path, ...],
    source: Path | None,
) -> dict[str, Any]:
    """``[evidence]``'s ROS 2 bag keys: the bags, their state and command topics and the
    joint order of an unnamed command (checked against the bags when they are read)."""
    keys = ("ros2_state_topic", "ros2_command_topic", "ros2_command_joints")
    if not bags:
        stray = [k for k in keys if k in ev]
        if stray:
            raise InputError(
                file=source,
                field=f"evidence.{stray[0]}",
                expected="evidence.ros2_bags beside it",
                got="no bags named",
                fix='add ros2_bags = ["my_bag"] or remove the key',
            )
        return {}
    if "dataset" in ev:
        raise InputError(
            file=source,
            field="evidence.ros2_bags",
            expected="one recording of record: a LeRobot dataset or ROS 2 bags",
            got="both evidence.dataset and evidence.ros2_bags",
            fix="keep the one the fits should read and remove the other",
        )
    if "ros2_command_topic" not in ev:
        raise InputError(
            file=source,
            field="evidence.ros2_command_topic",
            expected="the topic carrying the commands of the bags",
            got="nothing",
            fix='add e.g. ros2_command_topic = "/arm_controller/commands" (docs/ros2.md)',
        )
    joints = ev.get("ros2_command_joints", [])
    if not all(isinstance(j, str) for j in joints):
        raise InputError(
            file=source,
            field="evidence.ros2_command_joints",
            expected="a list of joint names",
            got=joints,
        )
    out: dict[str, Any] = {
        "ros2_bags": bags,
        "ros2_command_topic": ev["ros2_command_topic"],
        "ros2_command_joints": tuple(joints),
    }
    if "ros2_state_topic" in ev:
        out["ros2_state_topic"] = ev["ros2_state_topic"]
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
