"""The actuator's torque limit as a fitted kind (issue 40): a servo that saturates is
decided by its force limit, so a planted limit is recovered inside its interval or
declared with its reason, the saturation is measured against the candidate's own limit,
and the patch carries the fitted limit."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from simgap.errors import InputError


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


def test_force_limit_reads_and_writes_the_actuators_symmetric_range(so101: Path) -> None:
    from simgap.sim.model import get_param, load_model, set_param

    m = load_model(so101)
    assert get_param(m, "force_limit", "elbow_flex") == pytest.approx(2.94)
    set_param(m, "force_limit", "elbow_flex", 1.5)
    a = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, "elbow_flex")
    assert m.actuator_forcelimited[a] == 1 and m.actuator_forcerange[a].tolist() == [-1.5, 1.5]
    # an actuator without a force range has no finite limit, and the fit refuses the kind
    xml = (
        '<mujoco><worldbody><body><joint name="j" type="hinge"/><geom size="0.1"/></body>'
        '</worldbody><actuator><position name="j" joint="j" kp="10"/></actuator></mujoco>'
    )
    free = mujoco.MjModel.from_xml_string(xml)
    assert get_param(free, "force_limit", "j") == float("inf")


def test_a_fit_of_the_force_limit_needs_a_limited_actuator(tmp_path: Path) -> None:
    from simgap.actuator.joint_id import JointProblem
    from simgap.sim.replay import ReplayLog

    path = tmp_path / "free.xml"
    path.write_text(
        '<mujoco><worldbody><body><joint name="j" type="hinge"/><geom size="0.1" '
        'mass="1"/></body></worldbody><actuator><position name="j" joint="j" '
        'kp="10"/></actuator></mujoco>'
    )
    t = np.arange(10) / 30.0
    log = ReplayLog(
        t=t, commands=np.zeros((10, 1)), joints=("j",), q0=np.zeros(1), hold_before=np.zeros(1)
    )
    with pytest.raises(InputError) as e:
        JointProblem(path, ["j"], [log], [np.zeros((10, 1))], ("force_limit",))
    assert "force range" in str(e.value) and "none on j" in str(e.value)
    assert str(path) in str(e.value)


def test_planted_force_limit_inside_its_interval_or_declared(so101: Path, tmp_path: Path) -> None:
    """Force limit x0.6 on every joint (the servo at its limit most of the time): each
    joint's limit is inside its interval or declared not identifiable with numbers, at least
    two are identified, the saturation is counted against the fitted limit (at the
    nominal 2.94 N m it would read 0), and the patch carries the fitted limit."""
    from simgap.branches.actuator_dataset import patch_settings
    from simgap.branches.joint_dynamics import identify_rig
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    b = make_so101_bench(
        tmp_path,
        so101,
        3,
        fps=30,
        n_episodes=2,
        duration_s=6.0,
        faults={"force_limit": 0.6},
        n_heldout=0,
    )
    rig = load_rig(b.rig)
    js = identify_rig(
        rig,
        read_lerobot_dataset(rig.evidence.dataset),
        options={
            "joint_id_seconds": 6.0,
            "joint_id_episodes": 1,
            "joint_id_kinds": ("force_limit", "armature"),
        },
    )
    identified = 0
    for t in b.truth:
        truth = t.value("force_limit")
        assert truth == pytest.approx(0.6 * 2.94)
        if "force_limit" in js["params_interval"][t.name]:
            lo, hi = js["params_interval"][t.name]["force_limit"]
            assert lo <= truth <= hi, (t.name, lo, hi)
            identified += 1
        else:
            why = js["not_identifiable"][t.name]["force_limit"]
            assert any(ch.isdigit() for ch in why), why
    assert identified >= 2, js["not_identifiable"]
    sat = js["force_saturation"]
    assert sum(v >= 0.5 for v in sat.values()) >= 3, sat
    settings = patch_settings(js, {})
    for j, s in settings.items():
        assert s.force_limit == pytest.approx(js["params_fitted"][j]["force_limit"])
