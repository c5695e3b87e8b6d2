"""simgap randomize: pinned vs ranged entries, sources, exporters, bad input."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import mujoco
import pytest
from typer.testing import CliRunner

from simgap.branches.ladder_list import entry_builders
from simgap.cli import app
from simgap.errors import InputError
from simgap.export.randomization import to_isaaclab
from simgap.figures.actuator import LadderFigures
from simgap.figures.contact import ContactFigures
from simgap.figures.controller import SimplerDetails, SimplerFigures
from simgap.finding import Diagnosis, Finding, Verdict
from simgap.randomize import PENG_TABLE, build_spec, load_spec_from_findings
from tests.factories import write_rig


def _diag(rig: str = "test-so101", with_fits: bool = True) -> Diagnosis:
    fs = []
    if with_fits:
        fs = [
            Finding(
                "latency",
                Verdict.IMPLICATED,
                figures={
                    "control_dt_s": 0.0667,
                    "added_delay": {"rate_per_s_min": 60.0, "rate_per_s_max": 160.0},
                },
            ),
            Finding(
                "contact", Verdict.IMPLICATED, figures={"friction_best": 0.55, "mass_best": 0.028}
            ),
            Finding(
                "actuator",
                Verdict.IMPLICATED,
                figures=LadderFigures.from_mapping(
                    {
                        "joints": {
                            "elbow_flex": {
                                "delay": {"total_s": 0.0},
                                "selected": "servo",
                                "params": {"lag_s": 0.041, "kp_scale": 0.5},
                            }
                        }
                    }
                ),
            ),
        ]
    return Diagnosis(rig=rig, findings=tuple(fs), stop={}, seed=3)


def _write(tmp: Path, diag: Diagnosis) -> Path:
    p = tmp / "findings.json"
    p.write_text(diag.to_json())
    return p


def test_fitted_values_pinned_and_latency_range_measured() -> None:
    spec = build_spec(_diag(), entry_builders())
    rate = spec.entry("action_delay_rate_per_s")
    assert (rate.kind, rate.source, rate.low, rate.high) == ("range", "measured", 60.0, 160.0)
    fr = spec.entry("pad_friction")
    assert (fr.kind, fr.source, fr.value) == ("pinned", "fitted", 0.55)
    assert spec.entry("servo_lag_time_constant_s").value == pytest.approx(0.041)
    mass = spec.entry("object_mass_kg")
    assert mass.kind == "range" and mass.source == "defaulted"
    assert mass.low == pytest.approx(0.014) and mass.high == pytest.approx(0.056)
    assert "not measured" in mass.note


@pytest.mark.parametrize("verdict", [Verdict.IMPLICATED, Verdict.INCONCLUSIVE])
def test_controller_gains_pinned_only_where_identified(verdict: Verdict) -> None:
    params = {
        "shoulder_pan": {"kp": 500.0, "kv": 3.0},
        "elbow_flex": {"kp": 700.0, "kv": 9.0},
        "wrist_flex": {"kp": 5000.0, "kv": 1.0},
    }
    ident = {
        "shoulder_pan": {"kp": True, "kv": False},
        "elbow_flex": {"kp": True, "kv": False},
        "wrist_flex": {"kp": False, "kv": False},
    }
    ctl = Finding(
        "controller",
        verdict,
        figures=SimplerFigures.from_mapping({"params": params}),
        details=SimplerDetails.from_mapping({"identified": ident}),
    )
    spec = build_spec(Diagnosis(rig="r", findings=(ctl,), stop={}, seed=0), entry_builders())
    names = {e.name for e in spec.entries}
    if verdict is Verdict.IMPLICATED:
        kp = spec.entry("kp")
        assert (kp.kind, kp.source, kp.value) == ("pinned", "fitted", 600.0)  # median of 500, 700
        assert "wrist_flex" not in kp.note
    else:  # an inconclusive fit pins nothing
        assert "kp" not in names
    assert "kv" not in names  # never identified


def test_nothing_measured_falls_back_to_peng_marked_as_default() -> None:
    spec = build_spec(_diag(with_fits=False), entry_builders())
    for e in spec.entries:
        assert e.source == "defaulted"
    rate = spec.entry("action_delay_rate_per_s")
    assert (rate.low, rate.high) == PENG_TABLE["action_delay_rate_per_s"] == (125.0, 1000.0)


def test_findings_from_another_rig_are_refused(tmp_path: Path) -> None:
    p = _write(tmp_path, _diag(rig="other-rig"))
    with pytest.raises(InputError, match="other-rig"):
        load_spec_from_findings(p, entry_builders(), "test-so101")
    rig = write_rig(tmp_path / "rig", tmp_path / "m.xml")
    res = CliRunner().invoke(
        app,
        [
            "randomize",
            str(p),
            "--format",
            "json",
            "--out",
            str(tmp_path / "s.json"),
            "--rig",
            str(rig),
        ],
    )
    assert res.exit_code == 2 and "other-rig" in res.output


def test_json_export_through_the_cli(tmp_path: Path) -> None:
    p = _write(tmp_path, _diag())
    out = tmp_path / "spec.json"
    res = CliRunner().invoke(app, ["randomize", str(p), "--format", "json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["rig"] == "test-so101" and d["seed"] == 3
    assert all(e["source"] in ("measured", "fitted", "defaulted") for e in d["entries"])


def _fake_isaaclab(monkeypatch: pytest.MonkeyPatch) -> None:
    class Cfg:
        def __init__(self, *args: object, **kw: object) -> None:
            self.__dict__.update(kw)

    root = types.ModuleType("isaaclab")
    mods = {
        n: types.ModuleType(n)
        for n in ("isaaclab.envs", "isaaclab.envs.mdp", "isaaclab.actuators", "isaaclab.managers")
    }
    for fn in (
        "randomize_rigid_body_mass",
        "randomize_rigid_body_material",
        "randomize_actuator_gains",
        "randomize_joint_parameters",
    ):
        setattr(mods["isaaclab.envs.mdp"], fn, fn)
    mods["isaaclab.envs"].mdp = mods["isaaclab.envs.mdp"]  # type: ignore[attr-defined]
    mods["isaaclab.actuators"].DelayedPDActuatorCfg = Cfg  # type: ignore[attr-defined]
    mods["isaaclab.managers"].EventTermCfg = Cfg  # type: ignore[attr-defined]
    mods["isaaclab.managers"].SceneEntityCfg = Cfg  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "isaaclab", root)
    for n, m in mods.items():
        monkeypatch.setitem(sys.modules, n, m)


def test_isaaclab_snippet_imports_and_counts_delay_in_physics_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_isaaclab(monkeypatch)
    path = tmp_path / "dr_cfg.py"
    path.write_text(to_isaaclab(build_spec(_diag(), entry_builders()), physics_dt_s=0.005))
    spec = importlib.util.spec_from_file_location("dr_cfg", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # mean added delay 1/160 s .. 1/60 s at 5 ms steps -> floor(1.25) .. ceil(3.33)
    assert (mod.ARM_ACTUATOR.min_delay, mod.ARM_ACTUATOR.max_delay) == (1, 4)
    term = mod.EVENT_TERMS["object_mass"]
    assert term.mode == "reset" and term.func == "randomize_rigid_body_mass"
    assert term.params["mass_distribution_params"] == pytest.approx((0.014, 0.056))
    assert mod.EVENT_TERMS["pad_friction"].params["static_friction_range"] == (0.55, 0.55)


def test_mujoco_variants_compile_within_the_ranges(tmp_path: Path, demo_model: Path) -> None:
    p = _write(tmp_path, _diag())
    rig = write_rig(tmp_path / "rig", demo_model)
    out = tmp_path / "variants"
    res = CliRunner().invoke(
        app,
        [
            "randomize",
            str(p),
            "--format",
            "mujoco",
            "--out",
            str(out),
            "--rig",
            str(rig),
            "--n",
            "4",
        ],
    )
    assert res.exit_code == 0, res.output
    table = json.loads((out / "variants.json").read_text())["variants"]
    assert len(table) == 4
    for row in table:
        m = mujoco.MjModel.from_xml_path(str(out / row["file"]))
        assert 0.014 <= m.body("cube").mass[0] <= 0.056
        assert m.body("cube").mass[0] == pytest.approx(row["object_mass_kg"], rel=1e-5)
        assert m.geom("fixed_jaw_pad").friction[0] == pytest.approx(0.55)
        assert m.actuator("elbow_flex").dynprm[0] == pytest.approx(0.041)
        assert 60.0 <= row["action_delay_rate_per_s"] <= 160.0


def test_pad_friction_at_the_model_mass_is_read_with_its_interval() -> None:
    """The demo's contact finding: the pushes cannot pin the mass, so friction_best is empty
    and the friction identified at the model's mass (0.371, 95 % 0.139..0.593) is the one to
    randomise over, not Peng et al.'s default."""
    diag = Diagnosis(
        rig="r",
        stop={},
        findings=(
            Finding(
                "contact",
                Verdict.IMPLICATED,
                figures=ContactFigures.from_mapping(
                    {
                        "friction_best": None,
                        "friction_interval": [None, 1.078],
                        "friction_status": "fitted",
                        "friction_best_at_model_mass": 0.371,
                        "friction_interval_at_model_mass": [0.139, 0.593],
                        "mass_nominal": 0.003,
                    }
                ),
            ),
        ),
    )
    fr = build_spec(diag, entry_builders()).entry("pad_friction")
    assert (fr.kind, fr.source, fr.value) == ("range", "fitted", 0.371)
    assert (fr.low, fr.high) == (0.139, 0.593)
    assert "at the model's object mass (0.003 kg)" in fr.note and "open..1.08" in fr.note


def test_actuator_selected_rung_and_contact_best_fit_are_read() -> None:
    """Figures as the branches write them: per-joint selected rungs (the median over the
    joints), a best-fit friction."""
    joints = {
        j: {
            "selected": "delay_lag",
            "delay": {"total_s": d},
            "params": {"delay_s": d, "lag_s": lag},
        }
        for j, d, lag in (("a", 0.008, 0.040), ("b", 0.010, 0.045), ("c", 0.012, 0.043))
    }
    diag = Diagnosis(
        rig="r",
        stop={},
        findings=(
            Finding(
                "actuator",
                Verdict.IMPLICATED,
                figures=LadderFigures.from_mapping({"noise_floor_rad": 0.0015, "joints": joints}),
            ),
            Finding(
                "contact",
                Verdict.IMPLICATED,
                figures={"friction_best": 0.476, "mass_nominal": 0.003},
            ),
        ),
    )
    spec = build_spec(diag, entry_builders())
    assert spec.entry("servo_lag_time_constant_s").value == pytest.approx(0.043)  # median
    assert spec.entry("servo_delay_s").value == pytest.approx(0.010)
    assert spec.entry("pad_friction").value == pytest.approx(0.476)
    mass = spec.entry("object_mass_kg")
    assert (mass.low, mass.high, mass.source) == (
        pytest.approx(0.0015),
        pytest.approx(0.006),
        "defaulted",
    )


def test_passive_joint_damping_is_never_pinned_as_the_pd_gain() -> None:
    """A joint fit that identified the joint's passive damping but not kv (masked by a
    saturating force) gives no kv entry: the damping is not the actuator's velocity gain."""
    from simgap.figures.actuator import JointDynamicsFigures

    fig = JointDynamicsFigures.from_mapping(
        {
            "delay_s": {"wrist_flex": 0.045},
            "params": {"wrist_flex": {"kp": 20.0, "damping": 0.615}},
            "not_identifiable": {"wrist_flex": {"kv": "masked: force saturated"}},
        },
        strict=False,
    )
    diag = Diagnosis(
        rig="r",
        stop={},
        findings=(Finding("actuator", Verdict.IMPLICATED, kind="joint_dynamics", figures=fig),),
    )
    names = {e.name for e in build_spec(diag, entry_builders()).entries}
    assert "kp" in names and "kv" not in names


@pytest.mark.parametrize(
    ("interval", "low", "high"),
    [((0.0276, None), 0.0276, 0.0552), ((0.01, 0.02), 0.01, 0.02), ((None, 0.02), 0.01, 0.02)],
)
def test_mass_range_keeps_to_what_the_pushes_bound(
    interval: tuple[float | None, float | None], low: float, high: float
) -> None:
    """Pushes that leave the mass's best fit open but bound it (the demo's: at least 27.6 g,
    its model says 3 g) give a range inside what they allow, not a default about the model's
    mass that the evidence excludes."""
    diag = Diagnosis(
        rig="r",
        stop={},
        findings=(
            Finding(
                "contact",
                Verdict.IMPLICATED,
                figures=ContactFigures.from_mapping(
                    {"mass_nominal": 0.003, "mass_interval": list(interval)}
                ),
            ),
        ),
    )
    mass = build_spec(diag, entry_builders()).entry("object_mass_kg")
    assert (mass.low, mass.high, mass.source) == (pytest.approx(low), pytest.approx(high), "fitted")
