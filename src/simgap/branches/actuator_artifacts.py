"""The actuator branch's files: per joint the MuJoCo actuator patch with its replayed proof,
the Isaac Lab and mjlab snippets and BAM's parameter files where the servo rung fitted a
physical motor, and the randomisation ranges (``write_artifacts``)."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from simgap.actuator.ladder import (
    JointResult,
)
from simgap.actuator.servo import PARAM_NAMES, Drive, bam_drive, rig_drive
from simgap.export import bam as export_bam
from simgap.export import joint_snippets as export
from simgap.export import mjlab as export_mjlab
from simgap.outputs import atomic_write_json, atomic_write_text
from simgap.rig import Rig
from simgap.safe_names import checked_python, safe_filename
from simgap.series import Trajectory
from simgap.values.actuator_log import ActuatorLog


def name_field(log: ActuatorLog, joint: str) -> str:
    """Where a log states a joint's name: a BAM log's ``motor`` key, a CSV's columns."""
    return "motor" if log.meta.get("format") == "bam" else f"cmd_{joint}"


def _settings(res: JointResult, drive: Drive) -> Any:
    from simgap.sim.actuator_patch import ActuatorSettings

    if res.selected == "ideal":
        return None
    if res.selected == "delay_lag" or res.servo_params is None:
        return ActuatorSettings(delay_s=res.delay_s, lag_s=res.lag_s)
    p = dict(zip(PARAM_NAMES, res.servo_params, strict=True))
    gain, vin = drive.gain, drive.vin
    limit = p["km"] * vin * drive.max_pwm if math.isfinite(drive.max_pwm) else None
    return ActuatorSettings(
        kp=p["km"] * gain * vin,
        kv=p["dm"],
        delay_s=res.servo_delay_s,
        lag_s=p["lag_s"] if p["lag_s"] > 0 else None,
        force_limit=limit,
        damping=p["friction_viscous"],
        frictionloss=p["friction_base"],
        armature=p["armature"] if "armature" in res.servo_free else None,
    )


def proof_episodes(
    logs: Sequence[ActuatorLog],
    rig: Rig,
    n_validate: int,
) -> list[Trajectory]:
    """The recordings a patch is proven on: the validation logs when given (the last
    ``n_validate`` of ``logs``), else every fitting log (the rung table then holds the
    held-out errors); joints named as in the rig's model."""
    chosen = list(logs[-n_validate:]) if n_validate else list(logs)
    out = []
    for lg in chosen:
        names = tuple(
            rig.joint(j, file=lg.source, field=name_field(lg, j)).name for j in lg.traj.joint_names
        )
        out.append(replace(lg.traj, joint_names=names))
    return out


def _ident(joint: str) -> str:
    """A Python identifier for a joint name (never the raw name in generated code)."""
    base = re.sub(r"\W", "_", joint, flags=re.ASCII).strip("_").upper() or "JOINT"
    if base[0].isdigit():
        base = "J_" + base
    return (
        base
        if base.lower() == joint.lower()
        else (f"{base}_{hashlib.sha1(joint.encode()).hexdigest()[:6].upper()}")
    )


def _mjlab_snippet(joint: str, res: JointResult, drive: Drive, physics_dt: float) -> str:
    """mjlab's configuration of a joint whose servo rung fitted a physical motor, named after
    the joint; empty when the selected rung has no motor constants to map."""
    if res.selected != "servo" or not res.bam_params or not drive.known:
        return ""
    params = {**res.bam_params, "delay_s": res.servo_delay_s}
    if not all(math.isfinite(float(v)) for v in params.values() if isinstance(v, (int, float))):
        return ""
    return export_mjlab.dc_motor_cfg(
        re.escape(joint),
        params,
        drive.gain,
        drive.vin,
        drive.max_pwm,
        physics_dt,
        family=res.friction_family,
        current_limit_a=drive.current_limit_a,
        variable=f"{_ident(joint)}_ACTUATOR_CFG",
        joint=joint,
    )


def write_artifacts(
    results: dict[str, JointResult],
    logs: Sequence[ActuatorLog],
    rig: Rig | None,
    out_dir: Path,
    n_validate: int = 0,
    proof: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Write the MJCF patch (with a rig model; kept only when its replay proof passes, the
    proof put in ``proof``), Isaac Lab and mjlab snippets, BAM params, networks and the
    randomisation entry; returns name -> path."""
    proof = {} if proof is None else proof
    out_dir.mkdir(parents=True, exist_ok=True)
    arts: dict[str, str] = {}
    physics_dt = logs[0].dt
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.load import model_timestep

        physics_dt = rig.physics_dt_s or model_timestep(rig.model_path)
    rig_servo = rig_drive(rig) if rig is not None else None
    drives = {
        j: (
            bam_drive(logs[0].meta) if logs[0].meta.get("format") == "bam" else rig_servo or Drive()
        )
        for j in results
    }
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.patch_proof import offer_patch

        settings = {j: s for j, r in results.items() if (s := _settings(r, drives[j])) is not None}
        if settings:
            path = out_dir / f"{rig.model_path.stem}_actuator_patch.xml"
            offer = offer_patch(
                rig.model_path, path, settings, proof_episodes(logs, rig, n_validate)
            )
            proof["mjcf_patch"] = offer.to_dict()
            if offer.path is not None:
                arts["mjcf_patch"] = str(offer.path)
    else:
        proof["mjcf_patch_not_offered"] = (
            "no MJCF patch: it needs the rig's model to patch and to prove on the logs; pass "
            "--rig rig.toml (its model = the MJCF)"
            if rig is None
            else f"no MJCF patch: the rig's model {rig.model_path} is not a file"
        )
    delays = [r.delay_s for r in results.values()]
    snippets, mjlab = [], []
    for j, r in results.items():
        d = drives[j]
        # a joint name reaches the generated source as a repr'd regex matching it alone
        snippets.append(export.delayed_pd_cfg(re.escape(j), r, physics_dt, delays, d.gain, d.vin))
        if r.net is not None:
            from simgap.actuator.net import save_torchscript

            npath = save_torchscript(r.net, out_dir / safe_filename(j, ".pt", "actuator_net_"))
            arts[f"net_{j}"] = str(npath)
            spacing = float(r.rung("net").params["history_spacing_s"])
            snippets.append(export.actuator_net_cfg(re.escape(j), npath.name, physics_dt, spacing))
        mj = _mjlab_snippet(j, r, d, physics_dt)
        if mj:
            mjlab.append(mj)
        bam = export_bam.joint_bam_json(r) or export.bam_params(
            r, str(logs[0].meta.get("motor", j))
        )
        if bam:
            bpath = out_dir / safe_filename(j, ".json", "bam_params_")
            arts[f"bam_params_{j}"] = str(atomic_write_json(bpath, bam))
    if mjlab:  # each generated module is compiled before it is written (safe_names)
        arts["mjlab"] = str(
            atomic_write_text(
                out_dir / "mjlab_actuators.py",
                checked_python("\n".join(mjlab), "mjlab_actuators.py"),
            )
        )
    arts["isaaclab"] = str(
        atomic_write_text(
            out_dir / "isaaclab_actuators.py",
            checked_python("\n".join(snippets), "isaaclab_actuators.py"),
        )
    )
    arts["randomisation"] = str(
        atomic_write_json(out_dir / "actuator_randomisation.json", export.randomisation(results))
    )
    return arts
