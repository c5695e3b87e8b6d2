"""Exports: the MuJoCo patch compiles with the fitted values; Isaac Lab delays are in
physics steps; the randomisation entry spans the joints' delays."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.ladder import JointResult, RungResult
from simgap.export.joint_snippets import bam_params, delay_steps, delayed_pd_cfg, randomisation
from simgap.sim.actuator_patch import ActuatorSettings, write_actuator_patch
from simgap.sim.model import actuator_for_joint, load_model, object_id


def _result(joint: str, delay: float) -> JointResult:
    rungs = (
        RungResult("ideal", 0.3, 0.3, {}),
        RungResult("servo", 0.01, 0.012, {}, validation_per_log_rad=(0.01, 0.014)),
    )
    # km, dm, armature, friction_base, friction_viscous, lag_s
    params = (0.07, 0.08, 0.0016, 0.007, 0.01, 0.0)
    return JointResult(
        joint=joint,
        delay_s=delay,
        xcorr_delay_s=0.1,
        selected="servo",
        rungs=rungs,
        stop_reason="",
        dt=0.005,
        servo_params=params,
        servo_free=("km", "dm", "armature", "friction_base", "friction_viscous"),
        servo_delay_s=delay,
    )


def test_mjcf_patch_compiles_with_values(demo_model: Path, tmp_path: Path) -> None:
    before = demo_model.read_bytes()
    out = write_actuator_patch(
        demo_model,
        tmp_path / "patch.xml",
        {
            "shoulder_pan": ActuatorSettings(
                kp=50.0,
                kv=0.5,
                delay_s=0.012,
                lag_s=0.03,
                damping=0.3,
                frictionloss=0.07,
                armature=0.02,
                force_limit=2.0,
            )
        },
    )
    assert demo_model.read_bytes() == before  # the original is never edited
    m = load_model(out)
    a = actuator_for_joint(m, "shoulder_pan")
    j = object_id(m, "joint", "shoulder_pan")
    assert m.actuator_gainprm[a, 0] == pytest.approx(50.0)
    assert m.actuator_biasprm[a, 1] == pytest.approx(-50.0)
    assert m.actuator_biasprm[a, 2] == pytest.approx(-0.5)
    assert m.actuator_delay[a] == pytest.approx(0.012)
    assert m.actuator_dynprm[a, 0] == pytest.approx(0.03)
    assert m.actuator_forcerange[a, 1] == pytest.approx(2.0)
    dof = m.jnt_dofadr[j]
    assert m.dof_damping[dof] == pytest.approx(0.3)
    assert m.dof_frictionloss[dof] == pytest.approx(0.07)
    assert m.dof_armature[dof] == pytest.approx(0.02)
    head = out.read_text()[:300]
    assert "simgap actuator patch of" in head
    # the original is named from the patch's folder, never by an absolute path
    named = head.split("simgap actuator patch of ", 1)[1].split(" (the original", 1)[0]
    assert not Path(named).is_absolute() and (out.parent / named).resolve() == demo_model.resolve()


def test_patch_header_names_baked_values_the_fit_did_not_identify(
    demo_model: Path, tmp_path: Path
) -> None:
    why = "masked by force saturation (the servo sits at its\n torque limit 72 % of the time)"
    out = write_actuator_patch(
        demo_model,
        tmp_path / "patch.xml",
        {
            "shoulder_pan": ActuatorSettings(kp=1.5234, kv=0.25, damping=0.3),
            "elbow_flex": ActuatorSettings(kp=2.0),
        },
        unidentified={
            "shoulder_pan": {"kp": why, "frictionloss": "no sliding"},
            "elbow_flex": {"armature": "masked"},
        },
    )
    text = out.read_text()
    head = text[: text.index("-->")]
    assert "'shoulder_pan': kp 1.52 baked at its best fit; not identified: masked by force" in (
        " ".join(head.split())
    )
    # identified values and kinds the patch does not bake are not named as unidentified
    baked = head.split("Not identified, baked all the same:", 1)[1]
    assert "kv" not in baked and "frictionloss" not in baked and "elbow_flex" not in baked
    m = load_model(out)  # the header keeps the file a loadable MJCF
    assert m.actuator_gainprm[actuator_for_joint(m, "shoulder_pan"), 0] == pytest.approx(1.5234)


def test_patch_header_is_silent_when_everything_baked_was_identified(
    demo_model: Path, tmp_path: Path
) -> None:
    out = write_actuator_patch(
        demo_model, tmp_path / "patch.xml", {"shoulder_pan": ActuatorSettings(kp=50.0)}
    )
    assert "Not identified" not in out.read_text()


def test_patch_refuses_to_overwrite_the_original(demo_model: Path) -> None:
    from simgap.errors import InputError

    with pytest.raises(InputError, match="other than the original"):
        write_actuator_patch(demo_model, demo_model, {})


def test_isaac_delayed_pd_in_physics_steps() -> None:
    res = _result("j", 0.012)
    assert delay_steps(0.012, 0.005) == 2
    cfg = delayed_pd_cfg("j", res, 0.005, delays_s=[0.004, 0.012, 0.021])
    assert "min_delay=1" in cfg and "max_delay=4" in cfg
    # stiffness = km * gain * vin; damping = back-EMF + viscous
    cfg2 = delayed_pd_cfg("j", res, 0.005, gain=2.0, vin=7.0)
    assert f"stiffness={0.07 * 2 * 7:.6g}" in cfg2 and f"damping={0.08 + 0.01:.6g}" in cfg2


def test_bam_params_names() -> None:
    p = bam_params(_result("xl330", 0.0), "xl330")
    assert p["kt"] == pytest.approx(0.08 / 0.07)
    assert p["R"] == pytest.approx(0.08 / 0.07 / 0.07)
    assert {"armature", "friction_base", "friction_viscous", "model"} <= set(p)


def test_randomisation_spans_delays() -> None:
    r = randomisation({"a": _result("a", 0.01), "b": _result("b", 0.03)})
    assert r["delay_s"]["min"] == pytest.approx(0.01)
    assert r["delay_s"]["max"] == pytest.approx(0.03)
    lo, hi = r["joints"]["a"]["scale"]["km"]
    spread = float(np.std([0.01, 0.014]) / np.mean([0.01, 0.014]))
    assert lo == pytest.approx(1 - max(0.1, spread)) and hi == pytest.approx(1 + max(0.1, spread))


def test_report_plots_show_every_rung() -> None:
    from simgap.report.plots_actuator import plots

    finding = {
        "branch": "actuator",
        "kind": "ladder",
        "details": {
            "noise_floor_rad": 0.0015,
            "joints": {
                "j": {
                    "selected": "servo",
                    "rungs": [
                        {"model": "ideal", "train_mae_rad": 0.5, "validation_mae_rad": 0.5},
                        {
                            "model": "servo",
                            "train_mae_rad": 0.05,
                            "validation_mae_rad": 0.06,
                            "validation_per_log_rad": [0.05, 0.07],
                        },
                    ],
                }
            },
        },
    }
    out = plots(finding)
    assert len(out) == 3  # the overview, the joint's ladder, its held-out error per log
    assert all("<svg" in o for o in out)
    assert "ideal" in out[1] and "noise floor" in out[1] and "j: actuator ladder" in out[1]
    assert "held-out error per trajectory" in out[2]


def test_isaaclab_snippet_states_its_gain_and_what_it_cannot_carry() -> None:
    """A PD drive has no load-dependent friction: the snippet names such terms instead of
    dropping them silently, and says which firmware gain its stiffness is for."""
    from simgap.actuator.ladder import JointResult
    from simgap.export.joint_snippets import delayed_pd_cfg

    res = JointResult(
        joint="xl330",
        delay_s=0.0,
        xcorr_delay_s=0.0,
        selected="servo",
        rungs=(),
        stop_reason="",
        dt=0.005,
        servo_params=(0.1, 0.04, 0.0015, 0.01, 0.004, 0.0),
        bam_params={
            "kt": 0.35,
            "R": 3.1,
            "armature": 0.0015,
            "friction_base": 0.01,
            "friction_viscous": 0.004,
            "load_friction_base": 0.12,
            "q_offset": 0.02,
        },
    )
    text = delayed_pd_cfg("xl330", res, 0.005, gain=0.9, vin=7.4)
    assert "not representable" in text and "load_friction_base" in text
    assert "q_offset" not in text.split("not representable")[1].splitlines()[0]
    assert "drive gain 0.9 duty/rad and 7.4 V" in text
    assert "back-EMF 0.04 + viscous 0.004" in text and "damping=0.044," in text
    m1 = delayed_pd_cfg("xl330", replace(res, bam_params={"kt": 0.35, "R": 3.1}), 0.005)
    assert "not representable" not in m1 and "drive gain" not in m1
    compile(text, "snippet", "exec")
