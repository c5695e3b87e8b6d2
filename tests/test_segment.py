"""Segmentation of scripted episodes into phases, forward kinematics, and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.episodes.segment import check_phase, segment
from simgap.errors import InputError
from simgap.evidence.episodes_io import read_episodes
from simgap.rig import load_rig
from simgap.sim.fk import ForwardKinematics
from simgap.values.episode import PHASES, EpisodeRecord
from tests.episode_scripts import FK, GRIP_HI, GRIP_LO, HOME, JOINTS, grasp_pose, pick_place
from tests.factories import SO101_NAMES, write_rig, write_v3_dataset

FPS = 15.0


def _record(
    ep: dict[str, np.ndarray], *, with_obj: bool = True, with_ee: bool = True
) -> EpisodeRecord:
    st, ac = ep["observation.state"], ep["action"]
    span = GRIP_HI - GRIP_LO
    ee = FK(np.deg2rad(st[:, :5])) if with_ee else None
    return EpisodeRecord(
        t=np.arange(len(st)) / FPS,
        gripper_cmd=GRIP_LO + ac[:, 5] / 100 * span,
        gripper=GRIP_LO + st[:, 5] / 100 * span,
        gripper_range=(GRIP_LO, GRIP_HI),
        ee=ee,
        obj=ep["observation.object_pos"] if with_obj else None,
    )


def test_success_is_cut_at_the_recorded_events() -> None:
    ep = pick_place("success", rng=np.random.default_rng(0))
    rec = _record(ep)
    seg = segment(rec)
    assert list(seg.bounds) == list(PHASES[:5])
    # independent event times from the raw script
    cmd = ep["action"][:, 5]
    closed = cmd < 0.5 * (cmd.max() + cmd.min())
    close = int(np.argmax(closed))
    release = close + int(np.argmax(~closed[close:]))
    obj = ep["observation.object_pos"]
    ee = FK(np.deg2rad(ep["observation.state"][:, :5]))
    contact = int(np.argmax(np.linalg.norm(ee - obj, axis=1) <= 0.03))
    lift = int(np.argmax(obj[:, 2] - obj[0, 2] > 0.01))
    assert seg.bounds["approach"] == (0, contact)
    assert seg.bounds["contact"] == (contact, close)
    assert seg.bounds["grasp"] == (close, lift)
    assert seg.bounds["lift_and_carry"] == (lift, release)
    assert seg.bounds["place"] == (release, len(cmd))
    assert seg.reached == "place"
    assert seg.holding.sum() > 0 and not seg.holding[:close].any()


def test_without_object_the_lift_comes_from_the_end_effector() -> None:
    ep = pick_place("success", rng=np.random.default_rng(1))
    seg = segment(_record(ep, with_obj=False))
    # contact and grasp coincide without the object: no separate contact phase
    assert list(seg.bounds) == ["approach", "grasp", "lift_and_carry", "place"]
    ee_z = FK(np.deg2rad(ep["observation.state"][:, :5]))[:, 2]
    g0, lift = seg.bounds["grasp"][0], seg.bounds["lift_and_carry"][0]
    settle = g0 + int(round(0.3 * FPS))
    assert ee_z[lift] - ee_z[settle] > 0.02 >= ee_z[lift - 1] - ee_z[settle]


def test_without_object_or_end_effector_an_empty_grasp_is_read_from_the_opening() -> None:
    ep = pick_place("closed_on_nothing", rng=np.random.default_rng(2))
    seg = segment(_record(ep, with_obj=False, with_ee=False))
    a = seg.attempts[seg.best or 0]
    assert a.empty and a.opening_frac < 0.08
    assert abs(a.gap_rad) < np.deg2rad(1.0)
    ok = segment(
        _record(pick_place("success", rng=np.random.default_rng(3)), with_obj=False, with_ee=False)
    )
    held = ok.attempts[ok.best or 0]
    assert not held.empty
    assert held.opening_frac == pytest.approx((25.0 / 100.0), abs=0.01)


def test_forward_kinematics_matches_mujoco(demo_model: Path) -> None:
    fk = ForwardKinematics(demo_model, JOINTS, "gripperframe")
    q = np.vstack([np.r_[HOME, 0.0], np.r_[grasp_pose(0.5), 0.3]])
    np.testing.assert_allclose(fk.positions(q), FK(q), atol=1e-12)
    with pytest.raises(InputError, match="gripperframe"):
        ForwardKinematics(demo_model, JOINTS, "no_such_site")


def test_unknown_phase_names_list_the_known_ones() -> None:
    assert check_phase("grasp") == "grasp"
    with pytest.raises(InputError) as e:
        check_phase("grab", file="m.toml", field="trials[2].phase")
    msg = str(e.value)
    assert "trials[2].phase" in msg and "grab" in msg
    for ph in PHASES:
        assert ph in msg


def test_episodes_without_a_gripper_channel_are_refused(tmp_path: Path, demo_model: Path) -> None:
    ep = pick_place("success", rng=np.random.default_rng(4))
    no_grip = {k: v[:, :5] for k, v in ep.items() if k != "observation.object_pos"}
    ds = write_v3_dataset(tmp_path / "ds", [no_grip], fps=15, names=SO101_NAMES[:5])
    rig = load_rig(write_rig(tmp_path, demo_model))
    with pytest.raises(InputError) as e:
        read_episodes(ds, rig)
    msg = str(e.value)
    assert "gripper.pos" in msg and "cannot be told apart" in msg
    for ph in ("contact", "grasp", "lift_and_carry", "place"):
        assert ph in msg
    text = (tmp_path / "rig.toml").read_text().replace("gripper = true", "")
    (tmp_path / "rig.toml").write_text(text)
    with pytest.raises(InputError, match="gripper = true"):
        read_episodes(ds, load_rig(tmp_path / "rig.toml"))


def test_record_shapes_are_checked() -> None:
    with pytest.raises(InputError, match="gripper"):
        EpisodeRecord(
            t=np.arange(3.0), gripper_cmd=np.zeros(2), gripper=np.zeros(3), gripper_range=(0.0, 1.0)
        )


def test_the_episodes_package_does_not_import_mujoco() -> None:
    import ast

    import simgap.episodes

    root = Path(simgap.episodes.__file__).parent
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith("mujoco") for a in node.names), path
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith(("mujoco", "simgap.sim")), path
