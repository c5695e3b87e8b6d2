"""The actuator branch: how far the servo is from an ideal actuator, and the simplest model
that explains it.

``analyse`` climbs the ladder (ideal -> delay_lag -> servo -> net) for every joint of the
logs and returns the JSON the CLI writes; ``assess(ctx)`` runs it on the rig's evidence.
Verdict: ``eliminated`` when the ideal actuator's held-out error is within twice the noise
floor; ``implicated`` when it is more than five times the floor and a richer rung at least
halves it (the identified delay, lag and gains are reported, and the MJCF patch, Isaac Lab
and BAM exports are written as artifacts); ``inconclusive`` otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from simgap.actuator import export
from simgap.actuator.ladder import JointResult, LadderConfig, check_excitation, fit_joint
from simgap.actuator.log import ActuatorLog
from simgap.actuator.servo import PARAM_NAMES, Drive, JointLoad, bam_drive, pendulum_load
from simgap.errors import InputError
from simgap.finding import Finding, Verdict
from simgap.ladder import Context, not_measured
from simgap.outputs import atomic_write_json, atomic_write_text
from simgap.rig import Rig
from simgap.safe_names import safe_filename
from simgap.units import ENCODER_RESOLUTION_RAD

ELIMINATE_FACTOR = 2.0
IMPLICATE_FACTOR = 5.0
NOMINAL_INERTIA = 1e-3
"""Inertia assumed [kg m^2] when neither a BAM header nor a rig model gives the load."""


def _loads_drives(logs: Sequence[ActuatorLog], joint: str, rig: Rig | None,
                  ) -> tuple[list[JointLoad], list[Drive], str]:
    if all(lg.meta.get("format") == "bam" for lg in logs):
        loads = []
        for lg in logs:
            m = lg.meta
            loads.append(JointLoad(*pendulum_load(float(m["mass"]),  # type: ignore[arg-type]
                                                  float(m["length"]),  # type: ignore[arg-type]
                                                  float(m.get("arm_mass", 0.0)))))  # type: ignore[arg-type]
        return loads, [bam_drive(lg.meta) for lg in logs], "BAM header pendulum"
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.load import joint_load

        ld = joint_load(rig.model_path, joint)
        return [ld] * len(logs), [Drive()] * len(logs), f"MuJoCo model {rig.model_path.name}"
    return ([JointLoad(inertia=NOMINAL_INERTIA)] * len(logs), [Drive()] * len(logs),
            f"assumed inertia {NOMINAL_INERTIA:g} kg m^2 (no model)")


def _verdict(res: JointResult, floor: float) -> str:
    ideal = res.rung("ideal").validation_mae_rad
    best = res.rung(res.selected).validation_mae_rad
    if ideal <= ELIMINATE_FACTOR * floor:
        return "eliminated"
    if ideal > IMPLICATE_FACTOR * floor and res.selected != "ideal" and best <= 0.5 * ideal:
        return "implicated"
    return "inconclusive"


def analyse(logs: Sequence[ActuatorLog], *, rig: Rig | None = None,
            validate: Sequence[ActuatorLog] = (), noise_floor_rad: float | None = None,
            use_net: bool = True, seed: int = 0, out_dir: Path | None = None,
            ) -> tuple[dict[str, Any], dict[str, JointResult]]:
    """Fit the ladder for every joint of ``logs`` and build the branch JSON.

    Args:
        logs: training logs (every log has the same joints).
        rig: the rig (joint map, model for the load, noise floor), if any.
        validate: held-out logs; none means leave-one-trajectory-out.
        noise_floor_rad: override of the noise floor [rad]; default the rig's
            ``noise.encoder_rad``, else one 4096-count encoder step.
        use_net: allow rung 4.
        seed: seed of every random choice (written into the JSON).
        out_dir: folder for the artifacts (nothing written when None).

    Returns:
        (the JSON dict, the JointResult of each joint).
    """
    if not logs:
        raise InputError(field="logs", expected="at least one actuator log", got="none")
    all_logs = list(logs) + list(validate)
    joints = logs[0].traj.joint_names
    for lg in all_logs:
        if lg.traj.joint_names != joints:
            raise InputError(file=lg.source, field="joints", expected=f"the joints {joints}",
                             got=lg.traj.joint_names, fix="give logs of the same joints")
    if rig is not None:
        for j in joints:
            rig.joint(j)  # a joint the rig does not map is an error listing the valid ones
    floor = noise_floor_rad if noise_floor_rad is not None else (
        rig.encoder_rad if rig is not None else ENCODER_RESOLUTION_RAD)
    source = "rig noise.encoder_rad" if rig is not None and noise_floor_rad is None else (
        "given" if noise_floor_rad is not None else "encoder resolution (4096 counts/turn)")
    config = LadderConfig(noise_floor_rad=float(floor), noise_source=source, use_net=use_net,
                          seed=seed)
    results: dict[str, JointResult] = {}
    joint_json: dict[str, Any] = {}
    verdicts = []
    unexcited: dict[str, str] = {}
    first_error: InputError | None = None
    for j in joints:
        loads, drives, load_src = _loads_drives(all_logs, j, rig)
        try:
            check_excitation(list(logs), logs[0].traj.joint_index(j), float(floor))
        except InputError as e:  # one still joint must not hide the others' findings
            unexcited[j] = str(e)
            first_error = first_error or e
            continue
        res = fit_joint(all_logs, j, loads, drives, config, n_validate=len(validate))
        results[j] = res
        v = _verdict(res, float(floor))
        verdicts.append(v)
        joint_json[j] = {"delay_s": res.delay_s, "selected": res.selected,
                         "rungs": [r.to_dict() for r in res.rungs],
                         "verdict": v, "stop_reason": res.stop_reason,
                         "xcorr_delay_s": res.xcorr_delay_s, "load": load_src,
                         "held_out": "validate" if validate else "leave-one-trajectory-out"}
    if not results:
        assert first_error is not None
        raise first_error
    verdict = "implicated" if "implicated" in verdicts else (
        "eliminated" if all(v == "eliminated" for v in verdicts) else "inconclusive")
    out: dict[str, Any] = {"branch": "actuator", "verdict": verdict, "noise_floor_rad":
                           float(floor), "noise_floor_source": source, "seed": seed,
                           "joints": joint_json, "unexcited_joints": unexcited,
                           "resampling": [dict(lg.resampling) for lg in all_logs]}
    if out_dir is not None:
        out["artifacts"] = write_artifacts(results, all_logs, rig, Path(out_dir))
    return out, results


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
        kp=p["km"] * gain * vin, kv=p["dm"], delay_s=res.servo_delay_s,
        lag_s=p["lag_s"] if p["lag_s"] > 0 else None, force_limit=limit,
        damping=p["friction_viscous"], frictionloss=p["friction_base"],
        armature=p["armature"] if "armature" in res.servo_free else None)


def write_artifacts(results: dict[str, JointResult], logs: Sequence[ActuatorLog],
                    rig: Rig | None, out_dir: Path) -> dict[str, str]:
    """Write the MJCF patch (with a rig model), Isaac Lab snippets, BAM params, networks
    and the randomisation entry; returns name -> path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    arts: dict[str, str] = {}
    physics_dt = logs[0].dt
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.load import model_timestep

        physics_dt = rig.physics_dt_s or model_timestep(rig.model_path)
    drives = {j: (bam_drive(logs[0].meta) if logs[0].meta.get("format") == "bam" else Drive())
              for j in results}
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.actuator_patch import write_actuator_patch

        settings = {j: s for j, r in results.items()
                    if (s := _settings(r, drives[j])) is not None}
        if settings:
            path = out_dir / f"{rig.model_path.stem}_actuator_patch.xml"
            arts["mjcf_patch"] = str(write_actuator_patch(rig.model_path, path, settings))
    delays = [r.delay_s for r in results.values()]
    snippets = []
    for j, r in results.items():
        d = drives[j]
        snippets.append(export.delayed_pd_cfg(j, r, physics_dt, delays, d.gain, d.vin))
        if r.net is not None:
            from simgap.actuator.net import save_torchscript

            npath = save_torchscript(r.net, out_dir / safe_filename(j, ".pt", "actuator_net_"))
            arts[f"net_{j}"] = str(npath)
            spacing = float(r.rung("net").params["history_spacing_s"])
            snippets.append(export.actuator_net_cfg(j, npath.name, physics_dt, spacing))
        bam = export.bam_params(r, str(logs[0].meta.get("motor", j)))
        if bam:
            bpath = out_dir / safe_filename(j, ".json", "bam_params_")
            arts[f"bam_params_{j}"] = str(atomic_write_json(bpath, bam))
    arts["isaaclab"] = str(atomic_write_text(out_dir / "isaaclab_actuators.py",
                                             "\n".join(snippets)))
    arts["randomisation"] = str(atomic_write_json(out_dir / "actuator_randomisation.json",
                                                  export.randomisation(results)))
    return arts


def finding_from(out: dict[str, Any]) -> Finding:
    """The Finding of an ``analyse`` JSON."""
    floor = float(out["noise_floor_rad"])
    joints = out["joints"]
    figures: dict[str, Any] = {"noise_floor_rad": floor}
    worst_ideal, worst_sel = 0.0, 0.0
    parts = []
    for j, jj in joints.items():
        rungs = {r["model"]: r for r in jj["rungs"]}
        ideal = rungs["ideal"]["validation_mae_rad"]
        sel = rungs[jj["selected"]]["validation_mae_rad"]
        worst_ideal, worst_sel = max(worst_ideal, ideal), max(worst_sel, sel)
        figures[j] = {"delay_s": jj["delay_s"], "selected": jj["selected"],
                      "ideal_mae_rad": ideal, "selected_mae_rad": sel,
                      **{f"{k}": v for k, v in rungs[jj["selected"]]["params"].items()
                         if isinstance(v, (int, float))}}
        parts.append(f"{j}: {jj['selected']} ({sel:.3g} rad vs ideal {ideal:.3g}, delay "
                     f"{jj['delay_s'] * 1000:.1f} ms)")
    figures["worst_ideal_mae_rad"] = worst_ideal
    verdict = out["verdict"]
    step = {"implicated": "Apply the exported actuator model (MJCF patch or Isaac Lab config) "
                          "in simulation and randomise what stays uncertain, then re-train.",
            "eliminated": "The actuators track their commands within the noise floor; look "
                          "at the next branch.",
            "inconclusive": "Record richer excitation ('simgap excite') and fit again."}[verdict]
    return Finding(branch="actuator", verdict=Verdict(verdict), figures=figures,
                   title="Actuator dynamics", summary="; ".join(parts),
                   key_figure="worst_ideal_mae_rad", residual=worst_sel, noise_floor=floor,
                   residual_unit="rad", artifacts=out.get("artifacts", {}), next_step=step,
                   details=out)


def assess(ctx: Context) -> list[Finding]:
    """Run the branch on the rig's actuator logs or LeRobot dataset."""
    from simgap.evidence.actuator_logs import rig_actuator_logs
    from simgap.ladder import LADDER

    spec = next(s for s in LADDER if s.name == "actuator")
    rig = ctx.rig
    if not rig.evidence.actuator_logs and rig.evidence.dataset is None:
        return [not_measured(spec)]
    logs = ctx.evidence.get("actuator_logs", rig_actuator_logs)
    if not logs:
        return [not_measured(spec)]
    out_dir = None if ctx.out_dir is None else Path(ctx.out_dir) / "actuator"
    ctx.progress("actuator: fitting the ladder", 0.0)
    out, _ = analyse(logs, rig=rig, seed=ctx.seed, out_dir=out_dir,
                     use_net=bool(ctx.options.get("actuator_net", True)))
    return [finding_from(out)]
