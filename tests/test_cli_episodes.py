"""``simgap phases`` and ``simgap envelope``: JSON output and clear errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from simgap.cli import app
from simgap.figures.phases import PhasesDetails, PhasesFigures
from simgap.finding import details_of, figures_of
from tests.episode_scripts import manifest_text, pick_place, write_manifest
from tests.factories import SO101_NAMES, write_rig, write_v3_dataset
from tests.test_envelope import mismatch_rig

runner = CliRunner()


def _phases_rig(tmp: Path, model: Path, phases: list[str | None] | None = None) -> Path:
    rng = np.random.default_rng(5)
    kinds = ["success", "closed_on_nothing", "early_release"]
    write_v3_dataset(tmp / "real", [pick_place(k, rng=rng) for k in kinds], fps=15)
    write_manifest(tmp / "real.toml", manifest_text("real", [True, False, False], phases=phases))
    return write_rig(tmp, model, '\n[evidence]\ndataset = "real"\nreal_manifest = "real.toml"\n')


def test_phases_command_writes_its_json(tmp_path: Path, demo_model: Path) -> None:
    rig = _phases_rig(tmp_path, demo_model)
    out = tmp_path / "phases.json"
    res = runner.invoke(app, ["phases", str(rig), "--json", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert set(d) == {"rig", "seed", "findings"}
    (f,) = d["findings"]
    assert f["branch"] == "phases" and f["verdict"] == "implicated"
    real = details_of(f, PhasesDetails).real_episodes
    assert real is not None
    assert [e.failure_phase for e in real] == [None, "grasp", "place"]
    assert [e.signature for e in real] == [
        None,
        "closed_on_nothing",
        "early_release_short_of_target",
    ]
    figs = figures_of(f, PhasesFigures)
    assert figs.comparison.real is not None and figs.comparison.real.by_phase["grasp"] == 1
    assert figs.branch_map and "Failure phases" in res.output


def test_envelope_command_writes_its_json(tmp_path: Path, demo_model: Path) -> None:
    rig = mismatch_rig(tmp_path, demo_model)
    out = tmp_path / "env.json"
    res = runner.invoke(app, ["envelope", str(rig), "--json", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    checks = {f["kind"]: f["verdict"] for f in d["findings"]}  # each check is its own kind
    assert checks == {
        "observation_noise": "eliminated",
        "speed": "implicated",
        "control_rate": "implicated",
        "grasp_margin": "not_measured",
        "initial_states": "implicated",
    }


def test_bad_phase_name_is_a_clear_error(tmp_path: Path, demo_model: Path) -> None:
    rig = _phases_rig(tmp_path, demo_model, phases=[None, "grab", None])
    res = runner.invoke(app, ["phases", str(rig)])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "Traceback" not in res.output and "grab" in text and "trials[1].phase" in text
    assert "approach, contact, grasp, lift_and_carry, place, after_success" in text


def test_missing_gripper_channel_is_a_clear_error(tmp_path: Path, demo_model: Path) -> None:
    ep = pick_place("success", rng=np.random.default_rng(6))
    write_v3_dataset(
        tmp_path / "real",
        [{k: ep[k][:, :5] for k in ("action", "observation.state")}],
        fps=15,
        names=SO101_NAMES[:5],
    )
    rig = write_rig(tmp_path, demo_model, '\n[evidence]\ndataset = "real"\n')
    res = runner.invoke(app, ["phases", str(rig)])
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "gripper.pos" in text and "cannot be told apart" in text
    assert "Traceback" not in res.output
