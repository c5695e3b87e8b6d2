"""A rig written by ``simgap init`` (a dataset and a model, no [training] section) gets no
verdict from a value nobody gave: the control rate and the grasp margin are not measured
with what to add, the contact branch names only what is missing, and the phases branch says
truly why no outcome is known."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.branches import contact as contact_branch
from simgap.branches import envelope as envelope_branch
from simgap.branches import phases as phases_branch
from simgap.branches.context import Context
from simgap.cli import app
from simgap.evidence.bundle import EvidenceBundle
from simgap.finding import Finding, Verdict
from simgap.rig import load_rig
from simgap.rig.checks import guessed_keys
from tests.episode_scripts import manifest_text, pick_place, write_manifest
from tests.factories import write_v3_dataset

FPS = 15


@pytest.fixture
def init_rig(tmp_path: Path, demo_model: Path) -> Path:
    """``simgap init`` on a real recording of three pick-and-places (the object's position
    recorded), with the demo model."""
    rng = np.random.default_rng(3)
    write_v3_dataset(
        tmp_path / "real", [pick_place("success", fps=FPS, rng=rng) for _ in range(3)], fps=FPS
    )
    write_v3_dataset(
        tmp_path / "sim", [pick_place("success", fps=FPS, rng=rng) for _ in range(3)], fps=FPS
    )
    rig = tmp_path / "rig.toml"
    r = CliRunner().invoke(
        app, ["init", str(tmp_path / "real"), "--model", str(demo_model), "--out", str(rig)]
    )
    assert r.exit_code == 0, r.output
    assert "[training]" not in rig.read_text()
    return rig


def _assess(rig_path: Path, branch: object) -> list[Finding]:
    rig = load_rig(rig_path)
    return branch.assess(Context(rig=rig, evidence=EvidenceBundle(rig)))  # type: ignore[attr-defined, no-any-return]


def _envelope(rig_path: Path) -> dict[str, Finding]:
    return {str(f.figures.check): f for f in _assess(rig_path, envelope_branch)}


def _edit(rig: Path, old: str, new: str) -> None:
    text = rig.read_text()
    assert old in text, old
    rig.write_text(text.replace(old, new))


# ----------------------------------------------------------------- what the rig records


def test_the_rig_records_what_init_guessed(init_rig: Path) -> None:
    rig = load_rig(init_rig)
    assert {
        "control.dt_s",
        "model.ee_site",
        "model.object_body",
        "joints.gripper.range_rad",
    } <= rig.guessed
    assert not rig.stated("control.dt_s") and rig.stated("control.real_dt_s")
    # the units and the encoder count are inferred from the robot type: marked, as
    # docs/rig.md promises for every value init inferred
    assert {f"joints.{j}.unit" for j in ("shoulder_pan", "elbow_flex", "gripper")} <= rig.guessed
    assert "noise.encoder_rad" in rig.guessed
    assert rig.training.control_dt_s is None  # left out: the default, no value


def test_guessed_marks_are_read_from_comments_not_strings() -> None:
    text = (
        'name = "x"  # guessed\n[model]\npath = "a # guessed.xml"\n'
        'object_body = "#"   # Guessed: the first free body\n'
        '[joints."a.b"]\nrange_rad = [0, 1]   # guessed\nunit = "pct"  # checked\n'
        "[[trials]]\nsuccess = true  # guessed\n"
    )
    assert guessed_keys(text) == {"name", "model.object_body", "joints.a.b.range_rad"}


# ----------------------------------------------------------------- envelope


def test_control_rate_is_not_measured_against_init_s_guess(init_rig: Path) -> None:
    rate = _envelope(init_rig)["control_rate"]
    assert rate.verdict is Verdict.NOT_MEASURED
    assert rate.needs == ("[training] control_dt_s = ... from your training config",)
    assert "guessed" in rate.summary and f"{FPS:g} Hz" in rate.summary
    assert "[training] control_dt_s" in rate.next_step
    assert rate.figures.real_rate_hz == pytest.approx(FPS, rel=1e-3)
    assert math.isnan(rate.figures.training_rate_hz)


def test_control_rate_is_measured_once_a_period_is_stated(init_rig: Path) -> None:
    _edit(init_rig, "   # guessed: 1 / fps of the recording", "")  # the user checked it
    rate = _envelope(init_rig)["control_rate"]
    assert rate.verdict is Verdict.ELIMINATED
    assert rate.figures.training_dt_from == "control.dt_s"
    assert "simulated control rate" in rate.summary
    init_rig.write_text(init_rig.read_text() + "\n[training]\ncontrol_dt_s = 0.1\n")
    rate = _envelope(init_rig)["control_rate"]
    assert rate.verdict is Verdict.IMPLICATED  # 15 Hz against training's 10 Hz
    assert rate.figures.training_dt_from == "training.control_dt_s"


def test_grasp_margin_is_not_measured_without_the_simulated_squeeze(init_rig: Path) -> None:
    grasp = _envelope(init_rig)["grasp_margin"]
    assert grasp.verdict is Verdict.NOT_MEASURED
    assert grasp.needs and grasp.needs[0].startswith("evidence.sim_dataset")
    assert "evidence.sim_dataset" in grasp.summary and "evidence.sim_dataset" in grasp.next_step
    assert grasp.figures.real_squeeze_median_deg > 5.0  # firm, but held against nothing


def test_grasp_margin_is_measured_against_the_simulated_rollouts(init_rig: Path) -> None:
    _edit(init_rig, 'dataset = "real"', 'dataset = "real"\nsim_dataset = "sim"')
    grasp = _envelope(init_rig)["grasp_margin"]
    assert grasp.verdict is Verdict.ELIMINATED
    assert "in simulation" in grasp.summary and not math.isnan(grasp.figures.sim_squeeze_median_deg)


# ----------------------------------------------------------------- contact


def test_contact_names_only_what_is_missing(init_rig: Path) -> None:
    assert load_rig(init_rig).object_body == "cube"  # init set it
    (f,) = _assess(init_rig, contact_branch)
    assert f.verdict is Verdict.NOT_MEASURED
    assert "evidence.push_logs" in f.summary and "model.object_geom" in f.summary
    assert "object_body" not in f.summary + f.next_step + " ".join(f.needs)
    assert [n.split(" ")[0] for n in f.needs] == ["evidence.push_logs", "model.object_geom"]


def test_contact_asks_for_pushes_alone_once_the_object_is_named(init_rig: Path) -> None:
    _edit(init_rig, 'object_body = "cube"', 'object_body = "cube"\nobject_geom = "cube"')
    (f,) = _assess(init_rig, contact_branch)
    assert f.verdict is Verdict.NOT_MEASURED and "model." not in f.summary
    assert f.needs == ("evidence.push_logs (logged pushes)",)


# ----------------------------------------------------------------- phases


def test_phases_says_why_no_outcome_is_known(init_rig: Path) -> None:
    (f,) = _assess(init_rig, phases_branch)
    assert f.verdict is Verdict.NOT_MEASURED
    # the dataset has observation.object_pos: what is missing is the place target, which
    # comes from the trials a protocol manifest labels successful
    assert "records observation.object_pos" in f.summary and "place target" in f.summary
    assert "evidence.real_manifest" in f.summary
    assert f.needs == ("evidence.real_manifest (success per trial)",)
    assert "observation.object_pos" not in f.next_step + " ".join(f.needs)


def test_phases_without_the_object_s_position_says_so(tmp_path: Path, demo_model: Path) -> None:
    rng = np.random.default_rng(4)
    eps = [
        {
            k: v
            for k, v in pick_place("success", fps=FPS, rng=rng).items()
            if k != "observation.object_pos"
        }
        for _ in range(2)
    ]
    write_v3_dataset(tmp_path / "real", eps, fps=FPS)
    rig = tmp_path / "rig.toml"
    r = CliRunner().invoke(
        app, ["init", str(tmp_path / "real"), "--model", str(demo_model), "--out", str(rig)]
    )
    assert r.exit_code == 0, r.output
    (f,) = _assess(rig, phases_branch)
    assert f.verdict is Verdict.NOT_MEASURED
    assert "records no observation.object_pos" in f.summary


def test_phases_reads_the_outcomes_a_manifest_gives(init_rig: Path) -> None:
    write_manifest(init_rig.parent / "real.toml", manifest_text("real", [True, True, False]))
    _edit(init_rig, 'dataset = "real"', 'dataset = "real"\nreal_manifest = "real.toml"')
    (f,) = _assess(init_rig, phases_branch)
    assert f.verdict is not Verdict.NOT_MEASURED
    assert f.figures.episodes == 3
