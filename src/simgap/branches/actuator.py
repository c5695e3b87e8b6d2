"""The actuator branch: how far the servo is from the rig's model, and what explains it.

From a LeRobot dataset (no servo bench logs) the null hypothesis is the rig's own MJCF
(``simgap.branches.joint_dynamics``: delay profiled, every parameter with a 95 % interval
or a reason, the MJCF patch offered only once proven on held-out episodes). From servo
bench logs (``evidence.actuator_logs``) the ladder below runs, its null being the ideal
actuator of a bench log (the commanded position).

``analyse`` climbs the ladder (ideal -> delay_lag -> servo -> net) for every joint of the
logs and returns the JSON the CLI writes; ``assess(ctx)`` runs it on the rig's evidence.
Verdict (the one rule of ``simgap.fit.verdict``): ``eliminated`` when the ideal actuator's
held-out error is within 1.5 x the noise floor (per joint, the instrument's floor of
``simgap.actuator.noise_floor`` in MAE, never below one encoder count:
``ladder.ladder_floor_rad``); ``implicated`` when it is more than 2 x the
floor and a richer rung removes at least 30 % of it (the identified delay, lag and gains
are reported, and the MJCF patch, Isaac Lab and BAM exports are written as artifacts);
``inconclusive`` otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from simgap.actuator.ladder import (
    LADDER_FLOOR_COUNTS,
    JointResult,
    LadderConfig,
    check_excitation,
    fit_joint,
    ladder_floor_rad,
    log_floors,
)
from simgap.actuator.servo import Drive, bam_drive, pendulum_load, rig_drive
from simgap.branches.actuator_artifacts import name_field, write_artifacts
from simgap.branches.branch import Branch
from simgap.branches.context import Context, not_measured
from simgap.errors import InputError
from simgap.figures.ladder import LadderDetails, LadderFigures
from simgap.finding import Finding, Verdict
from simgap.fit.verdict import verdict
from simgap.randomize import actuator_entries
from simgap.report import plots_actuator
from simgap.rig import Rig
from simgap.units import ENCODER_RESOLUTION_RAD
from simgap.values.actuator_log import ActuatorLog
from simgap.values.load import JointLoad

NOMINAL_INERTIA = 1e-3
"""Inertia assumed [kg m^2] when neither a BAM header nor a rig model gives the load."""


def _loads_drives(
    logs: Sequence[ActuatorLog],
    joint: str,
    rig: Rig | None,
) -> tuple[list[JointLoad], list[Drive], str]:
    if all(lg.meta.get("format") == "bam" for lg in logs):
        loads = []
        for lg in logs:
            m = lg.meta
            loads.append(
                JointLoad(
                    *pendulum_load(
                        float(m["mass"]),  # type: ignore[arg-type]
                        float(m["length"]),  # type: ignore[arg-type]
                        float(m.get("arm_mass", 0.0)),  # type: ignore[arg-type]
                    )
                )
            )
        return loads, [bam_drive(lg.meta) for lg in logs], "BAM header pendulum"
    if rig is not None and rig.model_path.is_file():
        from simgap.sim.load import joint_load

        ld = joint_load(rig.model_path, joint)
        drive = rig_drive(rig) or Drive()  # the rig's servo family (deploy.servo_model), if any
        return [ld] * len(logs), [drive] * len(logs), f"MuJoCo model {rig.model_path.name}"
    return (
        [JointLoad(inertia=NOMINAL_INERTIA)] * len(logs),
        [Drive()] * len(logs),
        f"assumed inertia {NOMINAL_INERTIA:g} kg m^2 (no model)",
    )


def _verdict(res: JointResult, floor: float) -> str:
    """The one identification verdict (``simgap.fit.verdict``): the ideal actuator's
    held-out MAE against the selected rung's."""
    return verdict(
        res.rung("ideal").validation_mae_rad, res.rung(res.selected).validation_mae_rad, floor
    )


def analyse(
    logs: Sequence[ActuatorLog],
    *,
    rig: Rig | None = None,
    validate: Sequence[ActuatorLog] = (),
    noise_floor_rad: float | None = None,
    use_net: bool = True,
    seed: int = 0,
    out_dir: Path | None = None,
) -> tuple[dict[str, Any], dict[str, JointResult]]:
    """Fit the ladder for every joint of ``logs`` and build the branch JSON.

    Args:
        logs: training logs (every log has the same joints).
        rig: the rig (joint map, model for the load, noise floor), if any.
        validate: held-out logs; none means leave-one-trajectory-out.
        noise_floor_rad: override of the encoder count [rad] the floor is built on;
            default the rig's ``noise.encoder_rad``, else one 4096-count encoder step.
            Each joint is held against ``ladder.ladder_floor_rad`` of its floor over the
            logs (the instrument's floor in MAE, never below one count).
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
            raise InputError(
                file=lg.source,
                field="joints",
                expected=f"the joints {joints}",
                got=lg.traj.joint_names,
                fix="give logs of the same joints",
            )
    if rig is not None:
        for j in joints:  # a joint the rig does not map is an error naming the log
            rig.joint(j, file=logs[0].source, field=name_field(logs[0], j))
    count = (
        noise_floor_rad
        if noise_floor_rad is not None
        else (rig.encoder_rad if rig is not None else ENCODER_RESOLUTION_RAD)
    )
    source = (
        "rig noise.encoder_rad"
        if rig is not None and noise_floor_rad is None
        else ("given" if noise_floor_rad is not None else "encoder resolution (4096 counts/turn)")
    )
    jitter = rig.clock_jitter_s if rig is not None else 0.0
    instrument = log_floors(all_logs, float(count), jitter, source)
    floors = {j: ladder_floor_rad(f) for j, f in instrument.items()}
    floor = max(floors.values())
    config = LadderConfig(
        noise_floor_rad=float(floor), noise_source=source, use_net=use_net, seed=seed
    )
    results: dict[str, JointResult] = {}
    joint_json: dict[str, Any] = {}
    verdicts = []
    unexcited: dict[str, str] = {}
    first_error: InputError | None = None
    for j in joints:
        loads, drives, load_src = _loads_drives(all_logs, j, rig)
        try:
            check_excitation(list(logs), logs[0].traj.joint_index(j), floors[j])
        except InputError as e:  # one still joint must not hide the others' findings
            unexcited[j] = str(e)
            first_error = first_error or e
            continue
        jconfig = replace(config, noise_floor_rad=floors[j])
        res = fit_joint(all_logs, j, loads, drives, jconfig, n_validate=len(validate))
        results[j] = res
        v = _verdict(res, floors[j])
        verdicts.append(v)
        joint_json[j] = {
            "delay_s": res.delay_s,
            "selected": res.selected,
            "rungs": [r.to_dict() for r in res.rungs],
            "verdict": v,
            "stop_reason": res.stop_reason,
            "rungs_skipped": dict(res.skipped),
            "xcorr_delay_s": res.xcorr_delay_s,
            "load": load_src,
            "held_out": res.held_out or "leave-one-trajectory-out",
        }
        if res.held_out == "validate":  # a single training log: they were the fold
            joint_json[j]["held_out_logs"] = [str(x) for x in res.logs]
        if res.test_logs:
            sel = res.rung(res.selected).diagnostics
            joint_json[j].update(
                {
                    "test_logs": [str(x) for x in res.test_logs],
                    "test_mae_rad": sel.get("test_mae_rad"),
                }
            )
    if not results:
        assert first_error is not None
        raise first_error
    verdict = (
        "implicated"
        if "implicated" in verdicts
        else ("eliminated" if all(v == "eliminated" for v in verdicts) else "inconclusive")
    )
    out: dict[str, Any] = {
        "branch": "actuator",
        "verdict": verdict,
        "noise_floor_rad": float(floor),
        "noise_floor_source": f"{source}; the instrument's floor in MAE over the logs "
        f"(count / 4, sampling and jitter: simgap.actuator.noise_floor) is at most "
        f"{max(f.mae_rad for f in instrument.values()):.3g} rad, held at no less than "
        f"{LADDER_FLOOR_COUNTS:g} count",
        "seed": seed,
        "joints": joint_json,
        "unexcited_joints": unexcited,
        "resampling": [dict(lg.resampling) for lg in all_logs],
    }
    if validate:
        out["selection_note"] = selection_note(out)
    if out_dir is not None:
        proof: dict[str, Any] = {}
        out["artifacts"] = write_artifacts(
            results, all_logs, rig, Path(out_dir), n_validate=len(validate), proof=proof
        )
        out["patch_proof"] = proof
    return out, results


def selection_note(result: dict[str, Any]) -> str:
    """What the --validate logs' error means, joint by joint: an independent test where the
    selection ran on folds of the training logs, the selection's own score where a single
    training log left no folds (held_out ``validate``)."""
    own = sorted(j for j, v in result["joints"].items() if v.get("held_out") == "validate")
    tested = sorted(j for j, v in result["joints"].items() if v.get("test_logs"))
    parts = []
    if tested:
        schemes = sorted({result["joints"][j]["held_out"] for j in tested})
        parts.append(
            f"{', '.join(tested)}: the rung and the friction family were selected "
            f"on the training logs ({', '.join(schemes)}); the --validate logs were "
            "left out of every fit and of the selection, so the error there "
            "(test_mae_rad) is an independent test of the selected fit"
        )
    if own:
        parts.append(
            f"{', '.join(own)}: with a single training log there were no folds to "
            "select on, so the rung and the friction family were selected on the "
            "--validate logs and their error there is the selection's own score "
            "(the best of the candidates compared), not an independent test; give "
            "two or more training logs for that"
        )
    return "; ".join(parts)


def finding_from(out: dict[str, Any]) -> Finding:
    """The Finding of an ``analyse`` JSON."""
    floor = float(out["noise_floor_rad"])
    joints = out["joints"]
    joint_figures: dict[str, Any] = {}
    figures: dict[str, Any] = {"noise_floor_rad": floor, "joints": joint_figures}
    worst_ideal, worst_sel = 0.0, 0.0
    parts = []
    for j, jj in joints.items():
        rungs = {r["model"]: r for r in jj["rungs"]}
        ideal = rungs["ideal"]["validation_mae_rad"]
        sel = rungs[jj["selected"]]["validation_mae_rad"]
        worst_ideal, worst_sel = max(worst_ideal, ideal), max(worst_sel, sel)
        # the rung's delay is the whole command-to-motion delay, its best fit: no interval
        delay = {
            "total_s": jj["delay_s"],
            "reason": "the ladder's best fit of the selected rung: no interval",
            "source": f"actuator ladder, {jj['selected']} rung",
        }
        joint_figures[j] = {
            "delay": delay,
            "selected": jj["selected"],
            "ideal_mae_rad": ideal,
            "selected_mae_rad": sel,
            "params": {
                k: v
                for k, v in rungs[jj["selected"]]["params"].items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            },
        }
        parts.append(
            f"{j}: {jj['selected']} ({sel:.3g} rad vs ideal {ideal:.3g}, delay "
            f"{jj['delay_s'] * 1000:.1f} ms, the rung's best fit: no interval)"
        )
    figures["worst_ideal_mae_rad"] = worst_ideal
    verdict = out["verdict"]
    step = {
        "implicated": "Apply the exported actuator model (MJCF patch or Isaac Lab config) "
        "in simulation and randomise what stays uncertain, then re-train.",
        "eliminated": "The actuators track their commands within the noise floor; look "
        "at the next branch.",
        "inconclusive": "Record richer excitation ('simgap excite') and fit again.",
    }[verdict]
    offer = out.get("patch_proof", {}).get("mjcf_patch")
    if offer is not None:
        figures["patch_proof"] = offer
        if verdict == "implicated" and offer.get("path") is None:
            step = (
                "Do not apply an MJCF patch yet: the fitted model failed its replay proof "
                f"({offer['proof']['reason']}). Use the Isaac Lab or BAM export only after "
                "checking it, and record a validation log to prove a refit."
            )
    return Finding(
        branch="actuator",
        verdict=Verdict(verdict),
        figures=LadderFigures.from_mapping(figures),
        title="Actuator dynamics",
        summary="; ".join(parts),
        key_figure="worst_ideal_mae_rad",
        residual=worst_sel,
        noise_floor=floor,
        residual_unit="rad",
        artifacts=out.get("artifacts", {}),
        next_step=step,
        details=LadderDetails.from_result(out),
    )


def assess(ctx: Context) -> list[Finding]:
    """Run the branch on the rig's actuator logs or LeRobot dataset."""
    from simgap.branches import actuator_dataset, joint_dynamics
    from simgap.evidence.actuator_logs import rig_actuator_logs

    rig = ctx.rig
    if not rig.evidence.actuator_logs and rig.evidence.recording is None:
        return [not_measured(SPEC)]
    if joint_dynamics.applies(rig):
        from simgap.branches.evidence_gate import not_run, time_base_refusal

        refused = time_base_refusal(ctx)
        if refused is not None:
            return [not_run("actuator", "Actuator dynamics", refused)]
        ctx.progress("actuator: identifying the joint dynamics against the rig's model", 0.0)
        return [actuator_dataset.finding(ctx)]
    logs = ctx.evidence.get("actuator_logs", rig_actuator_logs)
    if not logs:
        return [not_measured(SPEC)]
    out_dir = None if ctx.out_dir is None else Path(ctx.out_dir) / "actuator"
    ctx.progress("actuator: fitting the ladder", 0.0)
    out, _ = analyse(
        logs,
        rig=rig,
        seed=ctx.seed,
        out_dir=out_dir,
        use_net=bool(ctx.options.get("actuator_net", True)),
    )
    return [finding_from(out)]


SPEC = Branch(
    name="actuator",
    cost=3.0,
    needs=("evidence.actuator_logs or evidence.dataset",),
    assess=assess,
    plots=lambda f: plots_actuator.plots(f),  # looked up when drawn: a test may replace it
    randomization=actuator_entries,
)
"""The actuator branch's contract: its plots and its randomisation entries (servo delay,
lag, gains)."""
