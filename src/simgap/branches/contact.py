"""The contact branch: lint the rig model's contacts, then identify the contact through
explicit pairs, one coefficient per run, against every logged push (``contact.identify``).

Implicated when a pair coefficient is identified (a bounded 95 % interval), the model's own
value lies outside it (likelihood ratio), and the fit beats the model by more than
``NOISE_MULTIPLE`` tracker noises. Eliminated when the model already reproduces the pushes
within that many noises. The tracker's noise is the rig's ``[contact] tracker_noise_m`` /
``tracker_noise_rad``, position default 2 mm; orientation is scored (and torsional and
rolling friction profiled) only where its noise is stated.

The pair patch (a new MJCF that includes the rig's model; the model is never edited) holds
exactly the fitted coefficients, every other number at the model's own value for that
contact, condim raised only where torsional (4) or rolling (6) friction was fitted. It is
replayed before it is offered, and offered only when it beats the model on held-out pushes
(leave one push out).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simgap.branches.branch import Branch
from simgap.contact.identify import NOISE_MULTIPLE, ContactFit, Stage, identify
from simgap.contact.lint import lint_model
from simgap.contact.profile import MAX_SPAN, Noise, score
from simgap.evidence.push_log import push_logs
from simgap.figures.contact import ContactDetails, ContactFigures
from simgap.finding import Finding, Verdict
from simgap.randomize import contact_entries
from simgap.report import plots_contact
from simgap.rig import Rig

OBJECT_NOISE_M = 0.002
NAMES = {
    ("grip", "sliding"): "friction",
    ("support", "sliding"): "support_friction",
    ("grip", "torsional"): "torsional",
    ("grip", "rolling"): "rolling",
    ("grip", "solref"): "solref",
    ("grip", "solimp"): "solimp",
}
"""Figure prefix of each (pair group, coefficient)."""


def _figures(fit: ContactFit, primary: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for st in fit.stages:
        key = (st.group, st.field)
        name = "friction" if key == (primary, "sliding") else NAMES.get(key)
        if name is None or (name == "support_friction" and primary == "support"):
            continue
        out.update(_stage_figures(name, st))
    if fit.mass is not None:
        out.update(_stage_figures("mass", fit.mass))
    om = fit.sliding_over_mass
    name = "friction" if om is not None and om["group"] == primary else "support_friction"
    if om is not None and f"{name}_interval" in out:
        # the pushes cannot pin the mass: the interval holds over the whole mass box
        lo, hi = om["interval"]
        out[f"{name}_interval_at_model_mass"] = out[f"{name}_interval"]
        out[f"{name}_interval"] = [lo, hi]
        out[f"{name}_over_mass"] = om
        wide = lo is None or hi is None or hi / max(lo, 1e-12) > MAX_SPAN
        if wide and out.get(f"{name}_best") is not None:
            out[f"{name}_best_at_model_mass"] = out[f"{name}_best"]
            out[f"{name}_best"] = None
            out[f"{name}_identifiable"] = False
    return out


def _num(v: float | None) -> str:
    return "open" if v is None else f"{v:.3g}"


def _stage_figures(name: str, st: Stage) -> dict[str, Any]:
    iv = st.interval
    f: dict[str, Any] = {
        f"{name}_nominal": st.nominal,
        f"{name}_best": iv.best,
        f"{name}_interval": [iv.lo, iv.hi],
        f"{name}_identifiable": iv.identifiable,
        f"{name}_rms_nominal_m": st.base_rms_m,
    }
    if st.skipped:
        f[f"{name}_status"] = f"not run: {st.skipped}"
        return f
    k = st.best_index
    f[f"{name}_rms_best_m"] = float(st.rms_m[k])
    if st.rms_rad.any():
        f[f"{name}_rms_nominal_rad"] = st.base_rms_rad
        f[f"{name}_rms_best_rad"] = float(st.rms_rad[k])
    f[f"{name}_status"] = (
        "fitted"
        if st.accepted
        else (("the model's value is excluded; " if st.excluded else "") + iv.reason)
        or "model within interval"
    )
    return f


def _noise(rig: Rig) -> Noise:
    """The stated tracker noise; orientation is scored only where its noise is stated."""
    rad = rig.tracker_noise_rad
    return Noise(m=rig.tracker_noise_m or OBJECT_NOISE_M, rad=None if rad is None else float(rad))


def patch_entries(fit: ContactFit) -> list[dict[str, Any]]:
    """The fitted pairs: per pair its model values with the fitted coefficients in."""
    out = []
    for (group, geoms), v in fit.values.items():
        fitted = {f: val for (g, f), val in fit.writes.items() if g == group}
        if not fitted:
            continue
        fr = list(v.friction)
        sr, si = list(v.solref), list(v.solimp)
        condim = v.condim
        if "sliding" in fitted:
            fr[0] = fr[1] = fitted["sliding"]
        if "torsional" in fitted:
            fr[2] = fitted["torsional"]
            condim = max(condim, 4)
        if "rolling" in fitted:
            fr[3] = fr[4] = fitted["rolling"]
            condim = max(condim, 6)
        if "solref" in fitted:
            sr[0] = fitted["solref"]
        if "solimp" in fitted:
            si[1] = fitted["solimp"]
            si[0] = min(si[0], si[1])
        g1, g2 = geoms.split("|")
        out.append(
            {
                "geom1": g1,
                "geom2": g2,
                "condim": condim,
                "friction": fr,
                "solref": sr,
                "solimp": si,
                "fitted": sorted(fitted),
                "rule": v.rule,
            }
        )
    return out


def offer_patch(
    rig: Rig, fit: ContactFit, logs: list[Any], noise: Noise, out_dir: Any
) -> tuple[dict[str, str], dict[str, Any]]:
    """Write, replay and judge the pair patch: (artifacts, details)."""
    from simgap.contact.pair import pair_entry, patch_xml, write_checked
    from simgap.contact.sweep import replay_logs
    from simgap.sim.contact_pair import replay_file

    entries = patch_entries(fit)
    ho = fit.holdout
    info: dict[str, Any] = {"pairs": entries, "holdout": ho}
    if not entries:
        return {}, info
    if ho is None or not (ho["better"] and all(ho["better_each"])):
        info["offered"] = False
        info["why"] = (
            "one push only: no held-out push to prove the patch on"
            if ho is None
            else "the refitted model does not beat the model on every held-out push"
        )
        return {}, info
    path = out_dir / "contact_pair.xml"
    text = patch_xml(
        rig.model_path,
        path,
        [
            pair_entry(e["geom1"], e["geom2"], e["condim"], e["friction"], e["solref"], e["solimp"])
            for e in entries
        ],
        comment="fitted: " + ", ".join(f"{g}.{f} = {v:.4g}" for (g, f), v in fit.writes.items()),
    )
    write_checked(rig.model_path, path, text)
    assert rig.object_body is not None
    sim = replay_file(
        str(path),
        rig.joint_names,
        rig.object_body,
        replay_logs(logs, rig.joint_names),
        interp=rig.command_interp,
        physics_dt=rig.physics_dt_s,
    )
    s = score(sim, [(lg.obj_pos, lg.obj_quat) for lg in logs], noise)
    info.update(
        offered=True,
        replayed_rms_m=float(s.rms_m()[0]),
        replayed_rms_rad=float(s.rms_rad()[0]),
        model_rms_m=float(fit.nominal.rms_m()[0]),
    )
    return {"pair_patch": str(path)}, info


def _not_measured(spec: Any, rig: Rig) -> Finding:
    """The not-measured Finding naming only what the rig lacks of what the branch reads."""
    from simgap.branches.context import not_measured

    missing = [
        what
        for what, absent in (
            ("evidence.push_logs (logged pushes)", not rig.evidence.push_logs),
            ("model.object_body (the pushed object's body)", rig.object_body is None),
            ("model.object_geom (the pushed object's geom)", rig.object_geom is None),
        )
        if absent
    ]
    needs = " and ".join(missing)
    step = (
        "Add "
        + needs
        + " to rig.toml"
        + (
            " (log pushes of the object first: one CSV per push, docs/formats.md)."
            if not rig.evidence.push_logs
            else "."
        )
    )
    return replace(
        not_measured(spec, f"Not measured: the rig gives no {needs}."),
        next_step=step,
        needs=tuple(missing),
    )


def assess(ctx: Any) -> list[Finding]:
    """The contact finding for ``ctx.rig`` (its evidence.push_logs)."""
    rig: Rig = ctx.rig
    if not rig.evidence.push_logs or rig.object_body is None or rig.object_geom is None:
        return [_not_measured(SPEC, rig)]
    problems = [p.to_dict() for p in lint_model(rig.model_path)]
    logs = ctx.evidence.get("push_logs", push_logs)
    noise = _noise(rig)
    fit = identify(
        str(rig.model_path),
        rig.joint_names,
        logs,
        rig.object_body,
        rig.object_geom,
        rig.gripper_geoms,
        noise,
        support_geoms=rig.support_geoms,
        interp=rig.command_interp,
        physics_dt=rig.physics_dt_s,
    )
    primary = "grip" if "grip" in fit.pairs else "support"
    figures: dict[str, Any] = {
        "lint_problems": len(problems),
        "object_noise_m": noise.m,
        "object_noise_rad": noise.rad,
        "pushes": len(logs),
        "rms_nominal_m": float(fit.nominal.rms_m()[0]),
        "rms_fitted_m": float(fit.fitted.rms_m()[0]),
    }
    figures.update(_figures(fit, primary))
    accepted = [s for s in fit.stages if s.accepted]
    excluded = [s for s in fit.stages if s.excluded and not s.accepted]
    artifacts: dict[str, str] = {}
    patch_info: dict[str, Any] = {}
    if accepted and ctx.out_dir is not None:
        artifacts, patch_info = offer_patch(rig, fit, logs, noise, ctx.out_dir)
    groups = {s.group for s in accepted + excluded}
    rules = sorted({v.rule for (g, _), v in fit.values.items() if g in groups})
    if accepted or excluded:
        verdict = Verdict.IMPLICATED
        parts = [
            f"{s.group}.{s.field} {s.nominal:.3g} -> {s.interval.best:.3g} (95 % "
            f"{s.interval.lo:.3g}..{s.interval.hi:.3g})"
            for s in accepted
            if s.interval.best is not None
            and s.interval.lo is not None
            and s.interval.hi is not None
        ]
        summary = (
            "Identified through explicit pairs: "
            + ", ".join(parts)
            + f"; RMS object error {fit.nominal.rms_m()[0]:.3g} -> "
            f"{fit.fitted.rms_m()[0]:.3g} m over {len(logs)} push(es)."
            if parts
            else ""
        )
        for s in excluded:
            k = s.best_index
            summary += (
                f" The model's {s.group}.{s.field} {s.nominal:.3g} is excluded by "
                f"the pushes (RMS {s.base_rms_m:.3g} m against {s.rms_m[k]:.3g} m "
                f"within the range that fits), but {s.interval.reason}."
            )
        summary = summary.strip()
        if any("equal priority" in r for r in rules):
            summary += (
                " A geom-level value would have been inert here: MuJoCo mixes two "
                "geoms by priority, then takes the larger friction, so only the "
                "pair decides."
            )
        if any(s.field == "torsional" for s in accepted):
            summary += " Torsional friction needs condim 4: the patch raises it."
        m = fit.mass
        if (
            m is not None
            and m.interval.identifiable
            and float(m.rms_m.min()) <= float(fit.fitted.rms_m()[0]) + noise.m
        ):
            summary += (
                " The object's mass alone explains the pushes equally: they are "
                "confounded in these logs (a quasi-static push sees friction x "
                "mass); weigh the object or tilt-test it to split them."
            )
        om = fit.sliding_over_mass
        if om is not None:
            lo, hi = om["interval"]
            at_m0 = om["intervals"][0]
            summary += (
                f" The pushes do not pin the object's mass (the model's "
                f"{om['masses_kg'][0]:.3g} kg could be anything from "
                f"{om['masses_kg'][1]:.3g} to {om['masses_kg'][2]:.3g} kg), and a "
                f"quasi-static push sees friction x mass: over that mass range the "
                f"{om['group']} sliding friction fits {_num(lo)}..{_num(hi)} (at the "
                f"model's mass {_num(at_m0[0])}..{_num(at_m0[1])}); weigh the object "
                "to read the friction at its real mass."
            )
        nxt = (
            "Measure the identified coefficient on the bench (simgap contact measure) "
            "and apply the pair patch"
            + ("" if artifacts else " once a held-out push confirms it")
            + "."
        )
    elif np.all(fit.nominal.rms_m() <= NOISE_MULTIPLE * noise.m) and (
        fit.nominal.n_rot.sum() == 0
        or noise.rad is None
        or fit.nominal.rms_rad()[0] <= NOISE_MULTIPLE * noise.rad
    ):
        verdict = Verdict.ELIMINATED
        summary = "The model reproduces the logged pushes within tracker noise."
        nxt = "Contact is not the gap; continue down the ladder."
    else:
        verdict = Verdict.INCONCLUSIVE
        summary = "No single pair coefficient explains the pushes' error."
        nxt = "Log more pushes (different directions and speeds) or check the object pose."
    flat = [s for s in fit.stages if not s.skipped and not s.interval.identifiable]
    if flat:
        summary += (
            " " + "; ".join(f"{s.group}.{s.field}: {s.interval.reason}" for s in flat[:2]) + "."
        )
    return [
        Finding(
            branch="contact",
            verdict=verdict,
            title="Contact",
            summary=summary,
            next_step=nxt,
            figures=ContactFigures.from_mapping(figures),
            key_figure="friction_best",
            residual=float(fit.fitted.rms_m()[0]),
            noise_floor=noise.m,
            residual_unit="m",
            artifacts=artifacts,
            details=ContactDetails.from_mapping(
                {
                    "sweeps": {
                        f"{s.group}.{s.field}": s.to_dict() for s in fit.stages if not s.skipped
                    },
                    "mass": fit.mass.to_dict() if fit.mass else None,
                    "mixing": {f"{g}:{k}": v.to_dict() for (g, k), v in fit.values.items()},
                    "patch": patch_info,
                    "lint": problems[:50],
                },
                where="details",
            ),
        )
    ]


SPEC = Branch(
    name="contact",
    cost=2.0,
    needs=("evidence.push_logs (logged pushes) and model.object_body",),
    assess=assess,
    plots=lambda f: plots_contact.plots(f),  # looked up when drawn: a test may replace it
    randomization=contact_entries,
)
"""The contact branch's contract: its plots and its randomisation entries (pad friction,
object mass)."""
