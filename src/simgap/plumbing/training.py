"""The training audit: what training showed the policy (``[training]``, read from ManiSkill
by ``simgap init --maniskill-config``) held against the rig, one Finding per check with the
numbers and the change to make.

Checks: the control rate (training against the deployed rate and the dataset's real one),
the top speed (per-step limit x action scale x rate), the PD drive against the servo's own
loop (LeRobot's P coefficient), the finger friction and the object mass against measured
ones, the world origin against the point placements are measured from, the camera's field
of view and mount, and LeRobotRealAgent's name gate. A check decides only on values the
user stated or ManiSkill gave (``Rig.provenance`` ``given`` / ``from ManiSkill``): one whose
deciding value is a default or ``# guessed`` is not measured and names the key to fill.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from simgap.actuator.families import servo_family
from simgap.figures.training import training_records
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

BRANCH = "training"
RATE_TOL = 0.05
"""A period more than 5 % off training's is another rate."""
SPEED_BAND = (0.8, 1.25)
"""Deployed top speed within this fraction of training's."""
DRIVE_BAND = (0.5, 2.0)
"""Training's PD stiffness and force limit within this factor of the servo's."""
FRICTION_BAND = (1 / 1.5, 1.5)
MASS_BAND = (0.5, 2.0)
ORIGIN_TOL_M = 0.005
FOV_TOL_DEG = 2.0
MOUNT_TOL_M = 0.005
GATED_NAME = "so100_follower"
"""``LeRobotRealAgent`` (ManiSkill 3.0.1) switches the gripper to degrees and adds its
elbow correction only for a robot of this name."""
ELBOW_CORRECTION_DEG = 6.8
GATE_BRIDGE = "LeRobotRealAgent"


@dataclass(frozen=True)
class RigSide:
    """What the rig's recording and model give the audit (None: not available).

    Attributes:
        dataset_dt_s: the dataset's median frame period [s].
        pan_axis_m: the first joint's axis point in model coordinates [m], shape (3,).
        camera_fovy_deg: the model camera's vertical field of view [deg].
        camera_body: the model body the camera is fixed to.
        camera_pos_m: the camera's position in that body [m], shape (3,).
    """

    dataset_dt_s: float | None = None
    pan_axis_m: tuple[float, float, float] | None = None
    camera_fovy_deg: float | None = None
    camera_body: str | None = None
    camera_pos_m: tuple[float, float, float] | None = None


def _stated(rig: Rig, key: str, value: Any) -> bool:
    return value is not None and rig.provenance(key) in ("given", "from ManiSkill")


def _missing(rig: Rig, pairs: Sequence[tuple[str, Any]]) -> list[str]:
    """The keys among ``pairs`` (key, value) no verdict may rest on, with why."""
    out = []
    for key, value in pairs:
        if not _stated(rig, key, value):
            out.append(f"{key} ({'guessed' if rig.provenance(key) == 'guessed' else 'not set'})")
    return out


def _finding(
    title: str,
    check: str,
    implicated: bool,
    summary: str,
    fix: str,
    figures: dict[str, Any],
    key_figure: str | None,
    prov: dict[str, str],
) -> Finding:
    record, details = training_records(check)
    return Finding(
        branch=BRANCH,
        verdict=Verdict.IMPLICATED if implicated else Verdict.ELIMINATED,
        title=title,
        summary=summary,
        figures=record.from_mapping({"check": check, **figures}),
        key_figure=key_figure,
        next_step=fix if implicated else "",
        details=details(check=check, provenance=prov),
    )


def _not_measured(title: str, check: str, missing: list[str], what: str) -> Finding:
    keys = tuple(m.split(" (")[0] for m in missing)
    record, details = training_records(check)
    return Finding(
        branch=BRANCH,
        verdict=Verdict.NOT_MEASURED,
        title=title,
        summary=f"Not measured: {what} needs {', '.join(missing)}; no verdict rests "
        "on a default or a guess.",
        figures=record.from_mapping({"check": check}),
        next_step=f"Set {' and '.join(keys)} in rig.toml.",
        details=details(check=check),
        needs=keys,
    )


def _prov(rig: Rig, *keys: str) -> dict[str, str]:
    return {k: rig.provenance(k) for k in keys}


def _deployed_dt(rig: Rig, side: RigSide) -> tuple[float | None, str]:
    if _stated(rig, "control.real_dt_s", rig.real_dt_s):
        return float(rig.real_dt_s or 0.0), "control.real_dt_s"
    if side.dataset_dt_s:
        return side.dataset_dt_s, "the dataset's frame period"
    return None, ""


def check_rate(rig: Rig, side: RigSide) -> Finding:
    """Training's control period against the deployed one and the dataset's real one."""
    t = rig.training.control_dt_s
    title = "Control rate (training config)"
    miss = _missing(rig, [("training.control_dt_s", t)])
    dep = rig.real_dt_s if _stated(rig, "control.real_dt_s", rig.real_dt_s) else None
    if not miss and dep is None and side.dataset_dt_s is None:
        miss = ["control.real_dt_s (not set) or evidence.dataset"]
    if miss:
        return _not_measured(title, "control_rate", miss, "holding training's rate")
    assert t is not None
    rates = {"training_hz": 1.0 / t}
    if dep is not None:
        rates["deployed_hz"] = 1.0 / dep
    if side.dataset_dt_s:
        rates["dataset_hz"] = 1.0 / side.dataset_dt_s
    off = {
        k: v
        for k, v in rates.items()
        if k != "training_hz" and abs(rates["training_hz"] / v - 1.0) > RATE_TOL
    }
    shown = ", ".join(f"{k.removesuffix('_hz')} {v:.3g} Hz" for k, v in rates.items())
    worst = max(rates.values(), key=lambda v: abs(rates["training_hz"] / v - 1.0))
    return _finding(
        title,
        "control_rate",
        bool(off),
        (
            f"The policy was trained at {rates['training_hz']:.3g} Hz and runs at "
            f"{worst:.3g} Hz ({shown}): every action lasts {rates['training_hz'] / worst:.2f}x "
            "as long as in training."
            if off
            else f"Training and the rig agree: {shown}."
        ),
        f"Run the policy at {rates['training_hz']:.3g} Hz (Sim2RealEnv(control_freq="
        f"{rates['training_hz']:.3g}) or the loop's period {t:.4g} s), or retrain at "
        f"{worst:.3g} Hz (the env's control_freq).",
        {**rates, "rate_ratio": rates["training_hz"] / worst},
        "rate_ratio",
        _prov(rig, "training.control_dt_s", "control.real_dt_s"),
    )


def check_top_speed(rig: Rig, side: RigSide) -> Finding:
    """Training's top joint speed (its per-step limit at full action, at its rate) against
    the deployed one (the same limit x the deployed action scale, at the deployed rate)."""
    tr, title = rig.training, "Top speed (training config)"
    lim, t_dt = tr.action_delta_limit_rad, tr.control_dt_s
    miss = _missing(
        rig,
        [
            ("training.action_delta_limit_rad", lim),
            ("training.control_dt_s", t_dt),
            ("deploy.action_scale", rig.deploy.action_scale),
        ],
    )
    dep_dt, dep_src = _deployed_dt(rig, side)
    if dep_dt is None:
        miss.append("control.real_dt_s (not set) or evidence.dataset")
    if miss:
        return _not_measured(title, "top_speed", miss, "the deployed top speed")
    assert lim is not None and t_dt is not None and dep_dt is not None
    train = (
        tr.top_speed_rad_s
        if _stated(rig, "training.top_speed_rad_s", tr.top_speed_rad_s)
        else lim * tr.action_scale / t_dt
    ) or lim / t_dt
    scale = rig.deploy.action_scale
    deployed = lim * scale / dep_dt
    ratio = deployed / train
    bad = not SPEED_BAND[0] <= ratio <= SPEED_BAND[1]
    figs = {
        "training_top_speed_rad_s": train,
        "deployed_top_speed_rad_s": deployed,
        "speed_ratio": ratio,
        "action_delta_limit_rad": lim,
        "deploy_action_scale": scale,
        "training_action_scale": tr.action_scale,
        "deployed_dt_s": dep_dt,
    }
    how = (
        f"{lim:g} rad a step x {scale:g} at {1 / dep_dt:.3g} Hz ({dep_src}) against "
        f"{train:.3g} rad/s in training"
    )
    return _finding(
        title,
        "top_speed",
        bad,
        (
            f"The real arm's top joint speed is {math.degrees(deployed):.1f} deg/s, "
            f"{100 * ratio:.0f} % of training's {math.degrees(train):.1f} deg/s ({how})."
            if bad
            else f"The deployed top speed is {100 * ratio:.0f} % of training's ({how})."
        ),
        f"Deploy with action_scale {train * dep_dt / lim:.3g} at this rate (or restore "
        "training's rate and scale), or retrain with the per-step limit the real arm is "
        "run with.",
        figs,
        "speed_ratio",
        _prov(
            rig, "training.action_delta_limit_rad", "training.control_dt_s", "deploy.action_scale"
        ),
    )


def servo_drive(model: str, p_gain: float) -> tuple[float, float]:
    """The servo's own position loop as a PD drive at zero speed: (stiffness [N m/rad],
    torque limit [N m]) = (kt V / R x error gain x P, kt V / R x duty limit)."""
    fam = servo_family(model)
    stall = fam.nominal["kt"] * fam.vin_v / fam.nominal["R"]
    return stall * fam.error_gain * p_gain, stall * fam.max_pwm


def check_drive(rig: Rig) -> Finding:
    """Training's PD stiffness and force limit against the servo's loop."""
    tr, dep, title = rig.training, rig.deploy, "PD drive vs the servo (training config)"
    miss = _missing(
        rig,
        [
            ("training.pd_stiffness_nm_rad", tr.pd_stiffness_nm_rad),
            ("deploy.servo_model", dep.servo_model),
            ("deploy.servo_p_gain", dep.servo_p_gain),
        ],
    )
    if miss:
        return _not_measured(title, "pd_drive", miss, "the servo's loop")
    assert tr.pd_stiffness_nm_rad is not None and dep.servo_model and dep.servo_p_gain
    k, tau = servo_drive(dep.servo_model, float(dep.servo_p_gain))
    k_ratio = tr.pd_stiffness_nm_rad / k
    figs: dict[str, Any] = {
        "training_stiffness_nm_rad": tr.pd_stiffness_nm_rad,
        "servo_stiffness_nm_rad": k,
        "stiffness_ratio": k_ratio,
        "servo_p_gain": dep.servo_p_gain,
        "servo_torque_limit_nm": tau,
    }
    bad = not DRIVE_BAND[0] <= k_ratio <= DRIVE_BAND[1]
    parts = [
        f"training's stiffness {tr.pd_stiffness_nm_rad:g} N m/rad is {k_ratio:.3g}x the "
        f"{dep.servo_model}'s {k:.3g} N m/rad at P = {dep.servo_p_gain:g}"
    ]
    if _stated(rig, "training.pd_force_limit_nm", tr.pd_force_limit_nm):
        assert tr.pd_force_limit_nm is not None
        f_ratio = tr.pd_force_limit_nm / tau
        figs.update(training_force_limit_nm=tr.pd_force_limit_nm, force_ratio=f_ratio)
        bad = bad or not DRIVE_BAND[0] <= f_ratio <= DRIVE_BAND[1]
        parts.append(
            f"its force limit {tr.pd_force_limit_nm:g} N m is {f_ratio:.3g}x the "
            f"servo's {tau:.3g} N m"
        )
    return _finding(
        title,
        "pd_drive",
        bad,
        (
            "Simulated joints track far harder than the real servos: "
            if bad
            else "Training's drive is the servo's, within 2x: "
        )
        + "; ".join(parts)
        + ".",
        f"Train with stiffness ~{k:.3g} N m/rad and force limit ~{tau:.3g} N m (the "
        "servo's loop; 'simgap actuator' identifies it from your recordings), or raise "
        "the servo's P coefficient.",
        figs,
        "stiffness_ratio",
        _prov(
            rig,
            "training.pd_stiffness_nm_rad",
            "training.pd_force_limit_nm",
            "deploy.servo_model",
            "deploy.servo_p_gain",
        ),
    )


def _ratio_check(
    rig: Rig,
    title: str,
    check: str,
    tkey: str,
    tval: float | None,
    dkey: str,
    dval: float | None,
    band: tuple[float, float],
    unit: str,
    fix: str,
) -> Finding:
    miss = _missing(rig, [(tkey, tval), (dkey, dval)])
    if miss:
        return _not_measured(title, check, miss, f"holding {tkey} against the measured value")
    assert tval is not None and dval is not None
    ratio = tval / dval if dval > 0 else math.inf
    bad = not band[0] <= ratio <= band[1]
    return _finding(
        title,
        check,
        bad,
        f"Training used {tval:g}{unit}, the rig measures {dval:g}{unit} ({ratio:.3g}x).",
        fix,
        {"training": tval, "measured": dval, "ratio": ratio},
        "ratio",
        _prov(rig, tkey, dkey),
    )


def check_origin(rig: Rig, side: RigSide) -> Finding:
    """Training's world origin from the pan axis against the point the rig's placements are
    measured from (``frame.origin_reference_m``), both as distances from the axis: the two
    descriptions' base frames need not share their axes, so directions are not compared."""
    o, ref, title = (
        rig.training.origin_from_pan_axis_m,
        rig.origin_reference_m,
        "World origin (training config)",
    )
    miss = _missing(
        rig, [("training.origin_from_pan_axis_m", o), ("frame.origin_reference_m", ref)]
    )
    if not miss and side.pan_axis_m is None:
        miss = ["the model's first joint (not found)"]
    if miss:
        return _not_measured(title, "origin", miss, "the origin offset")
    assert o is not None and ref is not None and side.pan_axis_m is not None
    d_train = math.hypot(o[0], o[1])
    d_rig = math.hypot(ref[0] - side.pan_axis_m[0], ref[1] - side.pan_axis_m[1])
    off = abs(d_train - d_rig)
    name = rig.origin_reference_name or "frame.origin_reference_m"
    return _finding(
        title,
        "origin",
        off > ORIGIN_TOL_M,
        f"Training measures positions from a point {1000 * d_train:.1f} mm from the pan "
        f"axis; the rig's placements are measured from {name}, {1000 * d_rig:.1f} mm from "
        f"it: every placement is off by at least {1000 * off:.1f} mm.",
        f"Measure placements from the point {1000 * d_train:.1f} mm from the pan axis that "
        "training calls the origin (or shift training's workspace by the difference).",
        {
            "training_origin_from_axis_m": d_train,
            "rig_reference_from_axis_m": d_rig,
            "offset_m": off,
        },
        "offset_m",
        _prov(rig, "training.origin_from_pan_axis_m", "frame.origin_reference_m"),
    )


def check_camera(rig: Rig, side: RigSide) -> list[Finding]:
    """The training camera's field of view and its position in its mount against the model
    camera's ``fovy`` and position in its body (compared where the mount is that body)."""
    cam = rig.camera
    if cam is None:
        return [
            _not_measured(t, c, ["a [camera] section (not set)"], "the camera check")
            for t, c in (
                ("Camera field of view (training config)", "camera_fov"),
                ("Camera mount (training config)", "camera_mount"),
            )
        ]
    out = []
    title = "Camera field of view (training config)"
    miss = _missing(rig, [("camera.training_fov_deg", cam.training_fov_deg)])
    if not miss and side.camera_fovy_deg is None:
        miss = [f"the model camera {cam.name!r} (not found)"]
    if miss:
        out.append(_not_measured(title, "camera_fov", miss, "the camera's field of view"))
    else:
        assert cam.training_fov_deg is not None and side.camera_fovy_deg is not None
        d = cam.training_fov_deg - side.camera_fovy_deg
        out.append(
            _finding(
                title,
                "camera_fov",
                abs(d) > FOV_TOL_DEG,
                f"Training's camera sees {cam.training_fov_deg:.1f} deg vertically, the model's "
                f"{cam.name!r} {side.camera_fovy_deg:.1f} deg ({d:+.1f} deg).",
                "Retrain with the real camera's field of view (the env's CameraConfig fov) and "
                "set the model camera's fovy to the measured one.",
                {
                    "training_fov_deg": cam.training_fov_deg,
                    "model_fov_deg": side.camera_fovy_deg,
                    "difference_deg": d,
                },
                "difference_deg",
                _prov(rig, "camera.training_fov_deg"),
            )
        )
    title = "Camera mount (training config)"
    miss = _missing(
        rig,
        [
            ("camera.training_mount", cam.training_mount),
            ("camera.training_pose_m", cam.training_pose_m),
        ],
    )
    if not miss and (side.camera_pos_m is None or cam.training_mount != side.camera_body):
        miss = [
            f"camera.training_mount naming the model body {side.camera_body!r} the "
            f"training mount {cam.training_mount!r} is (not the same name)"
        ]
    if miss:
        out.append(_not_measured(title, "camera_mount", miss, "the camera's mount"))
        return out
    assert cam.training_pose_m is not None and side.camera_pos_m is not None
    dist = math.dist(cam.training_pose_m, side.camera_pos_m)
    out.append(
        _finding(
            title,
            "camera_mount",
            dist > MOUNT_TOL_M,
            f"On {side.camera_body!r}, training's camera sits {1000 * dist:.1f} mm from the "
            f"model's {cam.name!r} (training {list(cam.training_pose_m)}, model "
            f"{[round(x, 4) for x in side.camera_pos_m]} m); the camera's place is baked into the "
            "policy at training time.",
            "Retrain around the real camera's mount (measure it on the arm), or move the camera "
            "to where training had it.",
            {"mount_offset_m": dist},
            "mount_offset_m",
            _prov(rig, "camera.training_mount", "camera.training_pose_m"),
        )
    )
    return out


def check_name_gate(rig: Rig) -> Finding:
    """``LeRobotRealAgent``'s corrections run only for a robot named ``so100_follower``."""
    dep, title = rig.deploy, "LeRobot name gate (training config)"
    miss = _missing(rig, [("deploy.bridge", dep.bridge)])
    if not miss and dep.bridge == GATE_BRIDGE:
        miss = _missing(rig, [("deploy.robot_name", dep.robot_name)])
    if miss:
        return _not_measured(title, "name_gate", miss, "the name gate")
    prov = _prov(rig, "deploy.bridge", "deploy.robot_name")
    if dep.bridge != GATE_BRIDGE:
        return _finding(
            title,
            "name_gate",
            False,
            f"The arm is driven by {dep.bridge!r}, not "
            f"ManiSkill's {GATE_BRIDGE}: its name gate does not apply.",
            "",
            {"bridge": dep.bridge},
            None,
            prov,
        )
    skipped = dep.robot_name != GATED_NAME
    return _finding(
        title,
        "name_gate",
        skipped,
        (
            f"{GATE_BRIDGE} switches the gripper to degrees and adds its "
            f"{ELBOW_CORRECTION_DEG} deg elbow correction only when robot.name == "
            f"{GATED_NAME!r}; this robot is {dep.robot_name!r}, so both silently never run (the "
            "post-mortem's gripper read 11 deg off closed, about 22 open)."
            if skipped
            else f"robot.name is {GATED_NAME!r}: {GATE_BRIDGE}'s gripper-degrees and elbow "
            "corrections run."
        ),
        f"In your {GATE_BRIDGE} (or a subclass), apply the gripper-degrees switch and the "
        f"{ELBOW_CORRECTION_DEG} deg elbow correction for {dep.robot_name!r} too, or check "
        "both against the simulator at one pose.",
        {
            "robot_name": dep.robot_name,
            "gated_name": GATED_NAME,
            "elbow_correction_deg": ELBOW_CORRECTION_DEG if skipped else 0.0,
        },
        None,
        prov,
    )


def audit_training(rig: Rig, side: RigSide) -> list[Finding]:
    """Every check, in the order of the post-mortem's list."""
    tr, dep = rig.training, rig.deploy
    return [
        check_rate(rig, side),
        check_top_speed(rig, side),
        check_drive(rig),
        _ratio_check(
            rig,
            "Finger friction (training config)",
            "finger_friction",
            "training.finger_friction",
            tr.finger_friction,
            "deploy.finger_friction",
            dep.finger_friction,
            FRICTION_BAND,
            "",
            "Retrain with the measured friction (the jaws' urdf_config "
            "material), or make the real fingers grippier.",
        ),
        _ratio_check(
            rig,
            "Object mass (training config)",
            "object_mass",
            "training.object_mass_kg",
            tr.object_mass_kg,
            "deploy.object_mass_kg",
            dep.object_mass_kg,
            MASS_BAND,
            " kg",
            "Retrain with the weighed mass (the object's density or mass in the env).",
        ),
        check_origin(rig, side),
        *check_camera(rig, side),
        check_name_gate(rig),
    ]
