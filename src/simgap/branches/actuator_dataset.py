"""The actuator finding of a LeRobot dataset, from the joint dynamics of record.

Figures (the JSON contract): ``delay_s {joint: s}``, ``delay_interval_s {joint: [lo, hi]}``,
``params {joint: {kind: value}}``, ``params_interval {joint: {kind: [lo, hi]}}`` (only the
parameters the data identify), ``not_identifiable {joint: {kind: reason}}``, plus the
effective delay and its interval, the delay account against the loop's latency, and the
noise floor with its parts. ``artifacts.mjcf_patch`` is written only when the patch replays
the held-out episodes stable and better than the rig's model; otherwise the finding says why.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from simgap.branches.joint_dynamics import delay_account, identification, loop_latency
from simgap.figures.joint_dynamics import DelayAccount, JointDynamicsDetails, JointDynamicsFigures
from simgap.finding import Finding, Verdict

CONTRACT = ("delay_s", "delay_interval_s", "params", "params_interval", "not_identifiable")


def patch_settings(js: dict[str, Any], account: DelayAccount) -> dict[str, Any]:
    """ActuatorSettings per joint of ``patch_joints`` (the implicated, and those held at
    inconclusive only because nothing on them is identified): the fitted values (identified
    or not, the model that replays the training episodes best) and the servo's share of the
    delay (the loop's part belongs to the latency branch). On a delay/lag ridge the delay is the
    profile's best point, carried with the ridge stated, rather than left out: a patch
    without the delay it found replays like the nominal model (measured on independent
    benches: the stated 70 ms delay alone took a held-out replay from 53.3 to 5.85 mrad).
    The proof on held-out episodes decides whether it is offered."""
    from simgap.sim.actuator_patch import ActuatorSettings

    out = {}
    for j in js.get(
        "patch_joints", [j for j, v in js["joint_verdicts"].items() if v == "implicated"]
    ):
        # the best fit whole: a value declared not identifiable is still the point that
        # replays the training episodes best; the held-out proof decides whether it is
        # offered, and the finding states each one's interval or reason
        p = {**js.get("params_fitted", {}).get(j, {}), **js["params"].get(j, {})}
        dl = account.delays.get(j)  # the servo's share where the loop was measured
        d = dl.servo_s if dl is not None and math.isfinite(dl.servo_s) else float(js["delay_s"][j])
        out[j] = ActuatorSettings(
            kp=p.get("kp"),
            kv=p.get("kv"),
            damping=p.get("damping"),
            frictionloss=p.get("frictionloss"),
            armature=p.get("armature"),
            force_limit=p.get("force_limit"),
            delay_s=d if d > 0 and math.isfinite(d) else None,
        )
    return out


TRACE_POINTS = 400
"""Samples kept of a held-out trace for the report's real-against-simulated plot."""


def held_out_traces(
    rig: Any,
    episode: Any,
    patch: str | None,
    clock: str = "exact",
) -> dict[str, Any]:
    """Per joint, one held-out episode as recorded, replayed on the rig's model and (when a
    patch was proven) on the patched model: ``{joint: {"traces": {t_s, real_rad,
    before_rad, after_rad}}}``, thinned to ``TRACE_POINTS`` samples."""
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    def run(path: Any) -> Any:
        return replay(compile_spec(strip_visuals(load_spec(path)), path), episode, clock)[0]

    before = run(rig.model_path)
    after = run(patch) if patch else None
    k = max(1, len(episode.t) // TRACE_POINTS)
    t = (episode.t[::k] - episode.t[0]).tolist()
    out: dict[str, Any] = {}
    for i, j in enumerate(episode.joint_names):
        tr = {
            "t_s": t,
            "real_rad": episode.q[::k, i].tolist(),
            "before_rad": before[::k, i].tolist(),
        }
        if after is not None:
            tr["after_rad"] = after[::k, i].tolist()
        out[j] = {"traces": tr, "selected": "identified" if after is not None else "nominal"}
    return out


def finding(ctx: Any) -> Finding:
    """The actuator Finding from the identification of record."""
    js = identification(ctx)
    rig = ctx.rig
    account = delay_account(js, loop_latency(ctx))
    figures: dict[str, Any] = {k: js[k] for k in CONTRACT}
    for k in (
        "shared_delay_s",
        "shared_delay_interval_s",
        "effective_delay_s",
        "effective_delay_interval_s",
        "delay_ridge",
        "nominal_rms_rad",
        "identified_rms_rad",
        "noise_floor_rad",
        "force_saturation",
        "params_nominal",
        "bounds_x_nominal",
        "joint_verdicts",
        "fitted_episodes",
        "fit_seconds",
        "clock",
    ):
        figures[k] = js[k]
    for k in ("joint_held", "excitation"):
        if k in js:
            figures[k] = js[k]
    figures["delay_account"] = account
    worst = max(js["nominal_rms_rad"].values())
    # the residual's own joint's floor: the largest residual against the largest floor
    # compared two joints (wrist_roll's residual against elbow_flex's floor)
    resid_joint = max(js["identified_rms_rad"], key=lambda j: js["identified_rms_rad"][j])
    residual = js["identified_rms_rad"][resid_joint]
    floor = js["noise_floor_rad"][resid_joint]["total_rad"]
    figures["worst_nominal_rms_rad"] = worst
    figures["estimate_of_record"] = (
        "the joint-dynamics fit of the actuator branch (the "
        "controller's SIMPLER pose fit is a cross-check)"
    )
    artifacts: dict[str, str] = {}
    patch_note = "no joint implicated: no patch"
    verdict = js["verdict"]
    settings = patch_settings(js, account)
    stretches, skip = js["_proof"]
    clock = str(js.get("clock", {}).get("chosen", "exact"))
    if settings and ctx.out_dir is not None and stretches:
        from simgap.sim.patch_proof import offer_patch

        out_dir = Path(ctx.out_dir) / "actuator"
        out_dir.mkdir(parents=True, exist_ok=True)
        offer = offer_patch(
            rig.model_path,
            out_dir / f"{rig.model_path.stem}_actuator_patch.xml",
            settings,
            stretches,
            encoder_rad=rig.encoder_rad,
            scored_from_s=skip,
            clock=clock,
            unidentified=js.get("not_identifiable", {}),
        )
        figures["patch_proof"] = offer.to_dict()
        if offer.path is not None:
            artifacts["mjcf_patch"] = str(offer.path)
            patch_note = f"MJCF patch proven: {offer.proof.reason}"
        else:
            patch_note = f"no patch offered: {offer.proof.reason}"
    elif settings:
        patch_note = (
            "no patch offered: nothing to prove it on (no held-out episode or no output folder)"
        )
    figures["patch"] = patch_note
    if verdict == "implicated" and ctx.out_dir is not None:
        isl = isaaclab_file(js, rig, Path(ctx.out_dir) / "actuator")
        if isl is not None:
            artifacts["isaaclab"] = str(isl[0])
            figures["isaaclab_not_offered"] = isl[1]
    parts = []
    for j, v in js["joint_verdicts"].items():
        d = js["delay_s"][j]
        lo, hi = js["delay_interval_s"][j]
        parts.append(
            f"{j}: {v}, replay {js['nominal_rms_rad'][j] * 1e3:.2g} -> "
            f"{js['identified_rms_rad'][j] * 1e3:.2g} mrad (floor "
            f"{js['noise_floor_rad'][j]['total_rad'] * 1e3:.2g}), delay "
            f"{d * 1e3:.1f} ms [{lo * 1e3:.1f}, {hi * 1e3:.1f}]"
        )
    held = js.get("joint_held") or {}
    for j, why in held.items():
        parts.append(f"{j} held at inconclusive: {why}")
    step = next_step(
        verdict,
        "mjcf_patch" in artifacts,
        patch_note,
        any(v for v in js["params"].values()),
        bool(held),
    )
    if account.loop_s is not None and verdict == "implicated":
        step = then(step, account.note)
    details = {k: v for k, v in js.items() if not k.startswith("_")}
    if js["_held_out"]:
        details["joints"] = held_out_traces(
            rig, js["_held_out"][0], artifacts.get("mjcf_patch"), clock
        )
    return Finding(
        branch="actuator",
        verdict=Verdict(verdict),
        figures=JointDynamicsFigures.from_mapping(figures),
        title="Actuator dynamics",
        summary="; ".join(parts),
        key_figure="worst_nominal_rms_rad",
        residual=residual,
        noise_floor=floor,
        residual_unit="rad",
        artifacts=artifacts,
        next_step=step,
        details=JointDynamicsDetails.from_mapping(details, where="details"),
    )


def then(text: str, clause: str) -> str:
    """``text`` followed by ``clause`` as a sentence of its own (capitalised, with a full
    stop): the delay account's note reads "the loop's own latency ..." inside a finding's
    figures, and starts a sentence after the fix's "... then re-train."."""
    clause = clause.strip().rstrip(".")
    sentence = f"{clause[:1].upper()}{clause[1:]}."
    return f"{text} {sentence}" if text else sentence


def next_step(
    verdict: str, patch_proven: bool, patch_note: str, identified_any: bool, held: bool = False
) -> str:
    """The actuator finding's next step: apply a proven patch, else set what was identified
    (the delays alone, when no dynamics parameter was), else record better excitation (the
    episode ``simgap excite --for`` designs, where a joint was held at inconclusive)."""
    if verdict != "implicated" and held:
        use = (
            " The proven patch (artifacts.mjcf_patch) replays better, but nothing in it is "
            "a measurement: use it to replay, not to set the model."
            if patch_proven
            else ""
        )
        return (
            "The replay is off, but this recording cannot say by what "
            "(figures.joint_held says why per joint): record the episode 'simgap excite "
            "--for DIR' designs (or longer, livelier episodes) and diagnose again." + use
        )
    if verdict == "implicated" and patch_proven:
        return (
            "Apply the proven MJCF patch (artifacts.mjcf_patch) and randomise what stays "
            "uncertain, then re-train."
        )
    if verdict == "implicated" and identified_any:
        return f"Set the identified values (figures.params) in the model; {patch_note}."
    if verdict == "implicated":
        return (
            "Only the delays were identified (figures.delay_s, with "
            "figures.delay_interval_s); no dynamics parameter was (figures.not_identifiable "
            "says why for each). Set the delay in the model (MuJoCo's actuator delay) or "
            f"randomise it over its interval; {patch_note}."
        )
    return {
        "eliminated": "The rig's model replays the recording within the noise floor; look "
        "at the next branch.",
        "inconclusive": "Record richer, slower excitation (the servo saturates less) and "
        "fit again.",
    }[verdict]


def isaaclab_file(
    js: dict[str, Any],
    rig: Any,
    out_dir: Path,
) -> tuple[Path, dict[str, str]] | None:
    """The Isaac Lab actuator module of the identified joints (``DelayedPDActuatorCfg`` with
    the identified kp/kv and the delay's 95 % interval), written only from finite
    identified values: a parameter declared not identifiable is left out, and a joint
    whose stiffness or damping is not identified is not offered (listed with its reason).
    None when no joint can be offered."""
    import math

    from simgap.export.isaaclab import drive_from_params, isaaclab_export

    drives = []
    for j, params in js["params"].items():
        good = {k: float(v) for k, v in params.items() if math.isfinite(float(v))}
        lo, hi = js["delay_interval_s"][j]
        d = float(js["delay_s"][j])
        why = "; ".join(
            f"{k} not identifiable: {r}"
            for k, r in js["not_identifiable"][j].items()
            if k in ("kp", "kv")
        )
        drives.append(
            drive_from_params(
                j,
                "delay",
                good,
                delay_s=d if math.isfinite(d) else None,
                delay_interval_s=(float(lo), float(hi)),
                reason=why,
            )
        )
    dt = rig.physics_dt_s or js.get("physics_dt_s") or 0.005
    export = isaaclab_export(drives, float(dt))
    if not export.groups:
        return None
    out_dir.mkdir(parents=True, exist_ok=True)
    path = export.write(out_dir / "isaaclab_actuators.py")
    return path, {j: r for j, r in export.not_offered}
