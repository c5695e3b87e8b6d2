"""The effective command (issue 36): LeRobot's max_relative_target and the servo's goal
speed in the rig, the command as it reached the servo in the fit, and a clip the rig does
not state found in the data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.actuator.clip_search import piled_bound
from simgap.branches import effective_command
from simgap.branches.joint_dynamics import dataset_logs, identify_rig
from simgap.demo.factory import make_so101_bench
from simgap.episodes.command_shaping import (
    Shaping,
    clip_relative,
    rate_limit,
    shape_commands,
    shaped_trajectory,
    shaping_of,
)
from simgap.errors import InputError
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.figures.evidence import CommandShapingFigures
from simgap.finding import Finding, Verdict
from simgap.rig import Rig, load_rig, rig_from_dict
from tests.typed_records import check_typed

PLANTED = 4.0
"""The planted max_relative_target [deg; % for the gripper]."""
DELAY_S = 0.033


def _raw(deploy: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "r",
        "model": {"path": "m.xml"},
        "control": {"dt_s": 1 / 30},
        "joints": {
            "shoulder_pan": {"recorded": "shoulder_pan.pos", "unit": "deg"},
            "gripper": {
                "recorded": "gripper.pos",
                "unit": "pct",
                "range_rad": [0.0, 1.0],
                "gripper": True,
            },
        },
        "deploy": deploy,
    }


def test_rig_states_max_relative_target_as_lerobot_takes_it(tmp_path: Path) -> None:
    rig = rig_from_dict(_raw({"max_relative_target": 5}), source=tmp_path / "rig.toml")
    assert rig.deploy.max_relative_target == (5.0, 5.0)
    assert rig.provenance("deploy.max_relative_target") == "given"
    assert rig.provenance("deploy.goal_speed_rad_s") == "default"
    # a table by LeRobot motor name, recorded name or model joint name, in rig order
    rig = rig_from_dict(
        _raw(
            {
                "max_relative_target": {"gripper.pos": 10, "shoulder_pan": 3.5},
                "goal_speed_rad_s": 2.0,
            }
        )
    )
    assert rig.deploy.max_relative_target == (3.5, 10.0)
    assert rig.deploy.goal_speed_rad_s == 2.0
    s = shaping_of(rig)
    assert s.bound_rad == pytest.approx((np.deg2rad(3.5), 0.1))  # 10 % of a 1 rad range
    assert rig_from_dict(_raw({})).deploy.max_relative_target is None


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        (0, "deploy.max_relative_target", "a positive number in the joint's recorded unit"),
        ({"shoulder_pan": 3}, "deploy.max_relative_target", "none for gripper"),
        (
            {"shoulder_pan": 3, "gripper": 1, "elbow": 2},
            "deploy.max_relative_target.elbow",
            "one of gripper, shoulder_pan",
        ),
        ({"shoulder_pan": 3, "gripper": -1}, "deploy.max_relative_target.gripper", "positive"),
        ("ten", "deploy.max_relative_target", "int or float or dict"),
    ],
)
def test_a_wrong_max_relative_target_names_field_expected_and_fix(
    tmp_path: Path, value: Any, field: str, words: str
) -> None:
    with pytest.raises(InputError) as e:
        rig_from_dict(_raw({"max_relative_target": value}), source=tmp_path / "rig.toml")
    assert e.value.field == field and str(tmp_path / "rig.toml") in str(e.value)
    assert words in str(e.value)


def test_goal_speed_must_be_positive_rad_s() -> None:
    with pytest.raises(InputError, match="goal_speed_rad_s") as e:
        rig_from_dict(_raw({"goal_speed_rad_s": 0}))
    assert "Goal_Velocity" in str(e.value)


def test_clip_is_lerobots_ensure_safe_goal_position() -> None:
    # goal 10, present 2, bound 3 -> 5; goal -4, present 0 -> -3; inside the bound: as is
    got = clip_relative(
        np.array([[10.0, -4.0, 1.0]]), np.array([[2.0, 0.0, 0.5]]), np.array([3.0, 3.0, 3.0])
    )
    assert got.tolist() == [[5.0, -3.0, 1.0]]
    assert clip_relative(np.array([[9.0]]), np.array([[0.0]]), np.array([np.inf]))[0, 0] == 9


def test_rate_limit_moves_the_goal_at_most_speed_times_dt() -> None:
    g = np.array([[0.0], [1.0], [1.0], [1.0], [0.0]])
    out = rate_limit(g, 0.1, 3.0)
    assert out[:, 0] == pytest.approx([0.0, 0.3, 0.6, 0.9, 0.6])
    sent, frac = shape_commands(g, np.zeros_like(g), 0.1, Shaping(speed_rad_s=3.0))
    assert sent == pytest.approx(out) and frac[0] == pytest.approx(0.8)


def test_piled_gap_is_the_clip_of_a_recorded_sent_goal() -> None:
    rng = np.random.default_rng(0)
    gap = np.abs(rng.normal(0, 4, 3000))
    assert piled_bound(gap, 0.088) is None  # the policy's action: no pile
    assert piled_bound(np.minimum(gap, 3.0), 0.088) == pytest.approx(3.0)  # sent: piled


@pytest.fixture(scope="module")
def benches(
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Any]:
    from simgap.demo import demo_model_path

    out = {}
    for name, mrt, faults in (
        ("clean", None, {"delay_s": DELAY_S}),
        ("clipped", PLANTED, {"delay_s": DELAY_S}),
        # an arm slower than its model, no clip: its replay prefers a clipped action too
        ("slow", None, {"kp": 0.5, "armature": 2.0, "damping": 2.0}),
    ):
        b = make_so101_bench(
            tmp_path_factory.mktemp(name),
            demo_model_path(),
            5,
            n_episodes=2,
            duration_s=4.0,
            n_heldout=0,
            faults=faults,
            max_relative_target=mrt,
        )
        out[name] = b
    return out


def _with_deploy(bench: Any, line: str) -> tuple[Rig, Any]:
    path = bench.rig.with_name("rig_deploy.toml")
    path.write_text(bench.rig.read_text() + f"\n[deploy]\n{line}\n")
    rig = load_rig(path)
    return rig, read_lerobot_dataset(rig.evidence.dataset)  # type: ignore[arg-type]


def _load(bench: Any) -> tuple[Rig, Any]:
    rig = load_rig(bench.rig)
    return rig, read_lerobot_dataset(rig.evidence.dataset)  # type: ignore[arg-type]


def test_bench_plants_the_clip_and_records_the_action_before_it(
    benches: dict[str, Any],
) -> None:
    import json

    rig, ds = _load(benches["clipped"])
    truth = json.loads(benches["clipped"].rig.with_name("truth.json").read_text())
    assert truth["max_relative_target"] == PLANTED
    (tr, *_) = dataset_trajectories(ds, rig)
    gap_deg = np.rad2deg(np.abs(tr.q_cmd[:, 0] - tr.q[:, 0]))
    assert np.mean(gap_deg > PLANTED) > 0.3  # the recorded action is not the sent goal
    # the arm never moves more than about the bound in a frame (the follower was asked for
    # no more), while the action steps much further
    assert np.rad2deg(np.abs(np.diff(tr.q[:, 0]))).max() < 2 * PLANTED
    assert np.rad2deg(np.abs(np.diff(tr.q_cmd[:, 0]))).max() > 5 * PLANTED
    # without a clip in the rig the fit's logs are the action as recorded; with it, clipped
    logs, _, _ = dataset_logs(rig, ds)
    assert np.array_equal(logs[0].commands, tr.q_cmd)
    assert shaped_trajectory(rig, tr) is tr
    rig2, _ = _with_deploy(benches["clipped"], f"max_relative_target = {PLANTED}")
    logs2, _, trajs2 = dataset_logs(rig2, ds)
    sent_deg = np.rad2deg(np.abs(logs2[0].commands - tr.q))
    assert sent_deg[:, :5].max() <= PLANTED + 1e-9
    assert np.array_equal(trajs2[0].q_cmd, logs2[0].commands)


def test_clean_bench_reports_no_clip(benches: dict[str, Any]) -> None:
    rig, ds = _load(benches["clean"])
    f = effective_command.finding(rig, ds)
    assert f.verdict is Verdict.ELIMINATED, f.summary
    assert f.title == "Command shaping" and f.branch == "evidence"
    assert _figs(f).provenance["deploy.max_relative_target"] == "default"
    assert "No clip" in f.summary
    check_typed(f, CommandShapingFigures)


def test_clip_absent_from_the_rig_is_reported_with_its_bound(benches: dict[str, Any]) -> None:
    """lerobot-record 0.6.1 keeps the action before the clip: the clip shows only in the
    model's replay, a lead with its bound and the line to set, never an implication."""
    rig, ds = _load(benches["clipped"])
    f = effective_command.finding(rig, ds)
    assert f.verdict is Verdict.INCONCLUSIVE, f.summary
    assert "a lead, not a measurement" in f.summary
    found = _figs(f).bound_found
    body = [v for j, v in found.items() if j != "gripper"]
    assert len(body) >= 4 and all(abs(v / PLANTED - 1) < 0.15 for v in body), found
    assert _figs(f).rig_line.startswith("max_relative_target = ")
    bound = float(_figs(f).rig_line.split("=")[1])
    assert bound == pytest.approx(PLANTED, rel=0.15)
    assert "[deploy]" in f.next_step and "max_relative_target" in f.next_step
    for j in found:  # its evidence: the clipped replay removes most of the residual
        row = _figs(f).clip_search.joints[j]
        assert row.replay_rms_clipped_rad <= 0.5 * row.replay_rms_unclipped_rad
    _has_a_key_figure(f)


def _figs(f: Finding) -> CommandShapingFigures:
    """The command-shaping figures, typed."""
    return f.typed(CommandShapingFigures)


def _has_a_key_figure(f: Any) -> None:
    """The terminal's key figure is the best clip's share of the replay RMS, never empty
    (it was: the key figure was the per-joint bound table, which prints as nothing)."""
    from simgap.cli._app import key_text
    from simgap.report.headline import sig

    gain = _figs(f).best_clip_gain_fraction
    assert 0.5 <= gain <= 1.0, gain
    assert key_text(f.to_dict()) == f"best clip gain fraction {sig(100 * gain)}%"


def test_clip_in_the_rig_is_explained_and_the_delay_stays_inside(
    benches: dict[str, Any],
) -> None:
    bench = benches["clipped"]
    rig, ds = _with_deploy(bench, f"max_relative_target = {PLANTED}")
    f = effective_command.finding(rig, ds)
    assert f.verdict is Verdict.ELIMINATED, f.summary
    assert _figs(f).median_explained_fraction > 0.6
    assert _figs(f).provenance["deploy.max_relative_target"] == "given"
    check_typed(f, CommandShapingFigures)  # the stated shaping's figures, the clip's left out
    js = identify_rig(rig, ds, options={"joint_id_seconds": 4.0, "joint_id_episodes": 1})
    for t in bench.truth:
        lo, hi = js["delay_interval_s"][t.name]
        assert lo <= t.delay_s <= hi, (t.name, lo, hi)
        if t.name in js.get("effective_delay_interval_s", {}):  # delay + lag, where a ridge
            lag = (t.value("kv") + t.value("damping")) / t.value("kp")
            elo, ehi = js["effective_delay_interval_s"][t.name]
            assert elo <= t.delay_s + lag <= ehi, (t.name, elo, ehi)
    assert js["verdict"] != "implicated", js["joint_verdicts"]


def test_an_arm_slower_than_its_model_is_no_clip(benches: dict[str, Any]) -> None:
    rig, ds = _load(benches["slow"])
    f = effective_command.finding(rig, ds)
    assert f.verdict is not Verdict.IMPLICATED, f.summary


def test_a_recorded_gap_piled_at_a_bound_implicates(
    benches: dict[str, Any], tmp_path: Path
) -> None:
    """A recording of the goal as sent (a deploy script that logs it): the gap itself piles
    up at the bound, a measurement."""
    from simgap.demo.writers import write_lerobot_v3

    rig, ds = _load(benches["clipped"])
    eps = []
    for e in ds.episode_indices:
        obs = np.asarray(ds.vector("observation.state", e), dtype=float)
        act = np.asarray(ds.vector("action", e), dtype=float)
        sent = act.copy()
        sent[:, :5] = np.clip(act[:, :5], obs[:, :5] - PLANTED, obs[:, :5] + PLANTED)
        eps.append({"action": sent, "observation.state": obs})
    write_lerobot_v3(
        tmp_path / "dataset",
        eps,
        fps=int(ds.fps),
        names=ds.names("action"),
        task="sent goals",
        robot_type="so101_follower",
    )
    path = tmp_path / "rig.toml"
    path.write_text(
        benches["clipped"]
        .rig.read_text()
        .replace('dataset = "dataset"', f'dataset = "{tmp_path / "dataset"}"')
    )
    srig = load_rig(path)
    f = effective_command.finding(srig, read_lerobot_dataset(srig.evidence.dataset))
    assert f.verdict is Verdict.IMPLICATED, f.summary
    body = [v for j, v in _figs(f).bound_found.items() if j != "gripper"]
    assert body and all(abs(v / PLANTED - 1) < 0.1 for v in body)
    _has_a_key_figure(f)
