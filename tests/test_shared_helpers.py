"""The routines that replaced code written twice: each serves both of its former callers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError
from simgap.series import Trajectory
from simgap.validate import csv_records, numeric_rows


def _traj(**extra: object) -> Trajectory:
    t = np.arange(6) * 0.1
    q = np.arange(12, dtype=float).reshape(6, 2)
    return Trajectory(
        t=t, q_cmd=q + 1.0, q=q, joint_names=("a", "b"), episode=3, source="ep", **extra
    )


def test_rows_cuts_every_array_alike_and_keeps_the_rest() -> None:
    tr = _traj(qd=np.ones((6, 2)) * 2.0, tau=np.ones((6, 2)) * 3.0, meta={"gain": 1})
    keep = np.array([False, True, True, False, True, False])
    cut = tr.rows(keep)
    assert cut.t.tolist() == pytest.approx([0.1, 0.2, 0.4])
    assert cut.q.tolist() == [[2.0, 3.0], [4.0, 5.0], [8.0, 9.0]]
    assert cut.q_cmd.tolist() == [[3.0, 4.0], [5.0, 6.0], [9.0, 10.0]]
    assert cut.qd is not None and cut.qd.shape == (3, 2)
    assert cut.tau is not None and cut.tau.shape == (3, 2)
    assert (cut.episode, cut.source, dict(cut.meta)) == (3, "ep", {"gain": 1})
    assert tr.rows(keep, "ep, tail").source == "ep, tail"
    assert _traj().rows(keep).qd is None  # absent arrays stay absent


@pytest.mark.parametrize("read", ["records", "numbers"])
def test_a_ragged_row_is_refused_on_both_csv_paths(read: str) -> None:
    rows = [["1", "2"], ["3"]]
    with pytest.raises(InputError, match="row 3") as e:
        if read == "records":
            csv_records(rows, ["x", "y"], "f.csv")
        else:
            numeric_rows(rows, ["x", "y"], "f.csv")
    assert "2 fields, as in the header" in str(e.value)


def test_forward_kinematics_and_arm_poser_share_one_posing(demo_model: Path) -> None:
    from simgap.sim.arm_pose import ArmPoser
    from simgap.sim.fk import ForwardKinematics, JointPoser

    joints = ("shoulder_pan", "elbow_flex")
    fk = ForwardKinematics(demo_model, joints, "gripperframe")
    arm = ArmPoser(demo_model, joints)
    assert isinstance(fk, JointPoser) and isinstance(arm, JointPoser)
    assert fk.qadr.tolist() == arm.qadr.tolist()
    q = np.array([[0.0, 0.0], [0.5, -0.4]])
    p = fk.positions(q)
    assert not np.allclose(p[0], p[1])  # the joints move the end effector
    pos, _ = arm.poses(q)
    assert pos.shape[:2] == (2, len(arm.shapes.shapes))
