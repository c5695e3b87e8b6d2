"""The contact branch: lint the rig model's contacts, then sweep the finger friction and
the object's mass against the logged pushes, one coefficient at a time.

Implicated when a coefficient's best-fitting value differs materially from the model's
(by more than ``MATERIAL_FRACTION``) AND moving it there reduces the RMS object-position
error by more than ``NOISE_MULTIPLE`` times the tracker noise (``options['object_noise_m']``,
default 2 mm). A pair patch with the fitted sliding friction is written as an artifact
(a new MJCF that includes the rig's model; the model itself is never edited).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.contact.lint import lint_model
from simgap.contact.sweep import Coefficient, sweep
from simgap.evidence.push_log import PushLog, push_logs
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

MATERIAL_FRACTION = 0.2
NOISE_MULTIPLE = 3.0
OBJECT_NOISE_M = 0.002
FRICTION_GRID = tuple(float(v) for v in np.geomspace(0.2, 3.0, 25))
MASS_GRID = tuple(float(v) for v in np.geomspace(0.3, 6.0, 25))


def _friction_target(rig: Rig) -> tuple[str, str]:
    if rig.gripper_geoms:
        return "geom_friction", "+".join(rig.gripper_geoms)
    assert rig.object_geom is not None
    return "geom_friction", rig.object_geom


def contact_sweeps(rig: Rig, logs: list[PushLog]) -> dict[str, dict[str, Any]]:
    """One 1-D sweep per coefficient (friction, mass), each a multiple of the nominal."""
    from simgap.contact.sweep import nominal_of

    model = str(rig.model_path)
    assert rig.object_body is not None
    kind, target = _friction_target(rig)
    out = {}
    for name, (k, tgt, grid) in {"friction": (kind, target, FRICTION_GRID),
                                 "mass": ("mass", rig.object_body, MASS_GRID)}.items():
        nom = nominal_of(model, k, tgt)
        values = tuple(nom * g for g in grid)
        out[name] = sweep(model, rig.joint_names, logs, rig.object_body,
                          [Coefficient(k, tgt, values)], interp=rig.command_interp,
                          physics_dt=rig.physics_dt_s)
    return out


def judge(curve: dict[str, Any], noise_m: float) -> tuple[bool, float]:
    """(implicated, best value) of one sweep."""
    best = curve["refined_value"] if curve["refined_value"] is not None else curve[
        "best_value"]
    gain = curve["nominal_loss"] - curve["best_loss"]
    material = abs(best / curve["nominal"] - 1.0) > MATERIAL_FRACTION
    return bool(material and gain > NOISE_MULTIPLE * noise_m and not curve["flat"]), best


def assess(ctx: Any) -> list[Finding]:
    """The contact finding for ``ctx.rig`` (its evidence.push_logs)."""
    from simgap.contact.pair import write_pair
    from simgap.ladder import LADDER, not_measured

    spec = next(s for s in LADDER if s.name == "contact")
    rig: Rig = ctx.rig
    if not rig.evidence.push_logs or rig.object_body is None or (
            not rig.gripper_geoms and rig.object_geom is None):
        return [not_measured(spec)]
    problems = [p.to_dict() for p in lint_model(rig.model_path)]
    logs = ctx.evidence.get("push_logs", push_logs)
    noise = float(ctx.options.get("object_noise_m", OBJECT_NOISE_M))
    curves = contact_sweeps(rig, logs)
    verdicts = {n: judge(c, noise) for n, c in curves.items()}
    implicated = [n for n, (imp, _) in verdicts.items() if imp]
    figures: dict[str, Any] = {"lint_problems": len(problems), "object_noise_m": noise}
    for n, c in curves.items():
        figures[f"{n}_nominal"] = c["nominal"]
        figures[f"{n}_best"] = verdicts[n][1]
        figures[f"{n}_rms_nominal_m"] = c["nominal_loss"]
        figures[f"{n}_rms_best_m"] = c["best_loss"]
    artifacts: dict[str, str] = {}
    if "friction" in implicated and ctx.out_dir is not None and rig.object_geom and \
            rig.gripper_geoms:
        mu = verdicts["friction"][1]
        path = write_pair(rig.model_path, ctx.out_dir / "contact_pair.xml", rig.object_geom,
                          list(rig.gripper_geoms), friction=(mu, mu, 0.005, 0.0001, 0.0001),
                          condim=4, solref=(0.01, 1.0))
        artifacts["pair_patch"] = str(path)
    if implicated:
        verdict = Verdict.IMPLICATED
        parts = [f"{n} {curves[n]['nominal']:.3g} -> {verdicts[n][1]:.3g}" for n in implicated]
        summary = ("The logged pushes fit better with " + ", ".join(parts)
                   + f" (RMS object error {min(curves[n]['nominal_loss'] for n in implicated):.3g}"
                   f" -> {min(curves[n]['best_loss'] for n in implicated):.3g} m).")
        nxt = "Measure the implicated coefficient on the bench (tilt test, scale) and apply " \
              "the pair patch."
        if len(implicated) > 1 and np.ptp([curves[n]["best_loss"] for n in implicated]) \
                <= noise:
            summary += (" Each of " + " and ".join(implicated) + " alone explains the pushes "
                        "equally: they are confounded in these logs (a quasi-static push "
                        "sees friction x mass); weigh the object or tilt-test it to split "
                        "them.")
            nxt = "Weigh the object and tilt-test the contact, then re-sweep with one fixed."
    elif all(c["nominal_loss"] <= NOISE_MULTIPLE * noise for c in curves.values()):
        verdict, summary = Verdict.ELIMINATED, "The model reproduces the logged pushes " \
                                               "within tracker noise."
        nxt = "Contact is not the gap; continue down the ladder."
    else:
        verdict = Verdict.INCONCLUSIVE
        summary = "No single coefficient explains the pushes' error."
        nxt = "Log more pushes (different directions and speeds) or check the object pose."
    best_rms = min(c["best_loss"] for c in curves.values())
    return [Finding(branch="contact", verdict=verdict, title="Contact", summary=summary,
                    next_step=nxt, figures=figures, key_figure="friction_best",
                    residual=best_rms, noise_floor=noise, residual_unit="m",
                    artifacts=artifacts,
                    details={"sweeps": curves, "lint": problems[:50]})]
