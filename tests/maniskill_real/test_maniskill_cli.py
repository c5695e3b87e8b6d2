"""``simgap maniskill replay RIG`` end to end against the real ManiSkill 3.0.1: a LeRobot v3
dataset of three episodes recorded in ManiSkill with a planted stiffness and damping change
(tests/maniskill_real/test_maniskill_301.py's recorder), read through the rig like any
dataset; the command fits on the first two, proves on the third and writes the config."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    "mani_skill",
    reason="ManiSkill (mani-skill 3.0.1) is not installed: "
    ".ci/run installs it in its own cached venv",
)
from typer.testing import CliRunner  # noqa: E402

from simgap.cli import app  # noqa: E402
from tests.factories import write_v3_dataset  # noqa: E402
from tests.maniskill_real.test_maniskill_301 import CONTROL_HZ, PLANT, _record  # noqa: E402

pytestmark = [
    pytest.mark.maniskill_real,
    pytest.mark.filterwarnings("ignore:__array_wrap__ must accept context:DeprecationWarning"),
]
ROOT = Path(__file__).resolve().parents[2]
NAMES = [
    "shoulder_pan.pos",
    "shoulder_lift.pos",
    "elbow_flex.pos",
    "wrist_flex.pos",
    "wrist_roll.pos",
    "gripper.pos",
]
JOINTS = "".join(f'[joints.{n.split(".")[0]}]\nrecorded = "{n}"\nunit = "rad"\n' for n in NAMES)


@pytest.mark.slow
def test_replay_command_fits_proves_and_writes(tmp_path: Path) -> None:
    recs = [_record(s, PLANT) for s in (2, 3, 4)]
    ds = write_v3_dataset(
        tmp_path / "ds",
        [
            {"action": r.q_cmd.astype(np.float32), "observation.state": r.q.astype(np.float32)}
            for r in recs
        ],
        fps=CONTROL_HZ,
        names=NAMES,
        robot_type="so100_follower",
    )
    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'name = "ms"\n[model]\npath = "{ROOT / "src/simgap/demo/so101_demo.xml"}"\n'
        f'[control]\ndt_s = {1 / CONTROL_HZ}\n[evidence]\ndataset = "{ds}"\n'
        f"[noise]\nencoder_rad = {2 * np.pi / 4096}\n" + JOINTS
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        app,
        ["maniskill", "replay", str(rig), "--out", str(out), "--json", str(tmp_path / "r.json")],
    )
    assert res.exit_code == 0, res.output
    d = json.loads((tmp_path / "r.json").read_text())
    assert d["verdict"] == "implicated" and d["episodes_held_out"] == [2]
    assert d["control_freq_hz"] == CONTROL_HZ and d["sim_freq_hz"] == 100
    # the rig states no [training]: the agent and physics step are said to be assumed
    assert all(v.startswith("assumed") for v in d["settings_from"].values())
    assert "agent so100 (assumed" in res.output and "0.01 s (assumed" in res.output
    # no delay was planted: the profile at the fitted gains holds 0, the gains are fitted at 0
    assert d["delay_interval_95_s"][0] == 0.0 and d["command_delay_s"] == 0.0
    lo, hi = d["identified"]["shoulder_lift.kp"]["interval_95"]
    assert lo <= 1e3 * PLANT["stiffness"] <= hi
    written = json.loads((out / "maniskill_controller.json").read_text())
    assert written["class"] == "PDJointPosControllerConfig"
    assert "replays at" in res.output and "written" in d["export_note"]


@pytest.mark.slow
def test_init_exports_in_place_with_the_agent_and_env_kwargs_training_passed(
    tmp_path: Path,
) -> None:
    """``simgap init --maniskill ENV_ID --agent UID --env-kwargs JSON`` exports here with the
    arguments training passed: without domain randomisation the cube is the 3.125 g mean,
    which a randomised build (2.1-4.4 g) gives only by chance."""
    from simgap.rig import load_rig
    from tests.factories import write_so101_info

    ds = write_so101_info(tmp_path / "ds")
    out = tmp_path / "rig.toml"
    res = CliRunner().invoke(
        app,
        [
            "init",
            str(ds),
            "--model",
            str(ROOT / "src/simgap/demo/so101_demo.xml"),
            "--out",
            str(out),
            "--maniskill",
            "SO100GraspCube-v1",
            "--agent",
            "so100",
            "--env-kwargs",
            '{"domain_randomization": false}',
        ],
    )
    assert res.exit_code == 0, res.output
    export = json.loads(out.with_suffix(".maniskill.json").read_text())
    assert export["agent"]["uid"] == "so100"
    assert export["object"]["mass_kg"] == pytest.approx(0.003125, rel=1e-6)
    rig = load_rig(out)
    assert rig.provenance("training.object_mass_kg") == "from ManiSkill"
