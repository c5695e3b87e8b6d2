"""``simgap selftest``: synthesis in the user's own format, and recovery scored end to end.

The quick end-to-end test runs on a two-joint SO-101 rig (the Menagerie model, short
episodes) so that its two diagnoses fit in the default suite; the demo rig's selftest, at
the demo's own size, is marked slow.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simgap.evidence.lerobot import read_lerobot_dataset
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.finding import figures_of
from simgap.rig import load_rig
from simgap.selftest.plan import FAMILIES, Plan, Trial
from simgap.selftest.score import score_cells

GRIPPER = (
    '[joints.gripper]\nrecorded = "gripper.pos"\nunit = "pct"\n'
    "range_rad = [-0.174533, 1.745329]\ngripper = true\n"
)


@pytest.fixture(scope="module")
def small_rig(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's rig of two SO-101 joints over 3 healthy episodes of 6 s at 30 fps (12 s
    fitted, 6 s held out: enough data for a joint finding to implicate)."""
    from simgap.demo.factory import make_so101_bench

    root = tmp_path_factory.mktemp("user")
    bench = make_so101_bench(
        root / "bench",
        shared_data / "so101" / "so101.xml",
        3,
        faults=None,
        n_episodes=3,
        duration_s=6.0,
        n_heldout=0,
    )
    head = bench.rig.read_text().partition("[joints.")[0]
    rig = root / "rig.toml"
    rig.write_text(
        head
        + '[joints.elbow_flex]\nrecorded = "elbow_flex.pos"\nunit = "deg"\n'
        + GRIPPER
        + "[noise]\nencoder_rad = 0.0015339808\n[evidence]\n"
        'dataset = "bench/dataset"\n'
    )
    return rig


def _plan(*trials: Trial) -> Plan:
    return Plan(
        trials=(Trial("null", 0), *trials),
        families=FAMILIES,
        eligible={f: ("elbow_flex", "gripper") for f in FAMILIES},
        not_planted={},
        seed=0,
    )


def test_null_trial_is_the_users_format_with_the_users_commands(
    small_rig: Path, tmp_path: Path
) -> None:
    from simgap.selftest.synthesise import rig_dataset, synthesise_trial

    user = load_rig(small_rig)
    ds = rig_dataset(user)
    before = {p: p.read_bytes() for p in user.evidence.dataset.rglob("*") if p.is_file()}
    files = synthesise_trial(user, ds, Trial("null", 0), tmp_path / "null", rig_digest="x")
    trial = load_rig(files.rig)
    syn = read_lerobot_dataset(trial.evidence.dataset)
    assert syn.fps == ds.fps and len(syn.episode_indices) == 3
    assert files.heldout_episode == ds.episode_indices[-1]
    for e in syn.episode_indices:
        for j in trial.joints:
            np.testing.assert_array_equal(
                syn.named("action", e)[j.recorded], ds.named("action", e)[j.recorded]
            )
    assert str(syn.table.schema.field("timestamp").type) == "float"  # float32, as LeRobot
    q = syn.vector("observation.state", 0)[:, 0] * np.pi / 180  # elbow, degrees
    counts = q / user.encoder_rad
    np.testing.assert_allclose(counts, np.rint(counts), atol=1e-3)  # whole encoder counts
    # a planted fault shows in the readings, never in the commands
    slow = synthesise_trial(
        user, ds, Trial("trial-01", 1, {"damping": {"elbow_flex": 3.0}}), tmp_path / "t1"
    )
    faulty = read_lerobot_dataset(load_rig(slow.rig).evidence.dataset)
    np.testing.assert_array_equal(faulty.vector("action", 0), syn.vector("action", 0))
    diff = np.abs(faulty.vector("observation.state", 0) - syn.vector("observation.state", 0))
    assert diff[:, 0].max() > 1.0 and diff[:, 1].max() < diff[:, 0].max()  # [deg]
    assert (
        json.loads((slow.folder / "truth.json").read_text())["joints"]["elbow_flex"]["multiplier"][
            "damping"
        ]
        == 3.0
    )
    assert slow.truth_model is not None and slow.truth_model.is_file()
    assert {p: p.read_bytes() for p in before} == before  # inputs never modified
    # a second call with the same stamp keeps the folder as it is
    stamp = (files.folder / "dataset/data/chunk-000/file-000.parquet").stat().st_mtime_ns
    synthesise_trial(user, ds, Trial("null", 0), tmp_path / "null", rig_digest="x")
    assert (files.folder / "dataset/data/chunk-000/file-000.parquet").stat().st_mtime_ns == stamp


def test_a_planted_delay_is_recovered_and_the_null_run_implicates_nothing(
    small_rig: Path, tmp_path: Path
) -> None:
    from simgap.selftest.run import run_plan

    res = run_plan(
        small_rig, tmp_path / "st", _plan(Trial("trial-01", 1, {"delay_s": 0.07})), jobs=2
    )
    assert [t.status for t in res.trials] == ["done", "done"]
    null, faulty = res.trials
    assert null.implicated == () and all(c.outcome == "clean" for c in null.cells)
    delay = [c for c in faulty.cells if c.family == "delay"]
    assert [c.joint for c in delay] == ["elbow_flex", "gripper"]
    # each joint states the planted delay inside its interval, or declares it on the ridge
    # with the servo's own lag (the effective delay identified, the split not: honest, and
    # what this machine's MuJoCo 4.0 gives for the gripper, the same at 1ebb9bb); none missed
    inside = [c for c in delay if c.outcome == "inside"]
    ridge = [c for c in delay if c.outcome == "declared"]
    assert all(c.planted for c in delay) and inside
    assert len(inside) + len(ridge) == len(delay)
    assert all(
        "the effective delay" in c.note and "is identified, the split is not" in c.note
        for c in ridge
    )
    assert any(s.startswith("actuator") for s in faulty.implicated)
    assert faulty.gap is not None and faulty.gap.patch_offered and faulty.gap.closed > 0.8
    rows = {r.family: r for r in res.rows}
    assert rows["delay"].seen and rows["delay"].counts.inside == len(inside)
    assert rows["delay"].counts.declared == len(ridge)
    assert "sees delay" in res.sentence and "implicated nothing" in res.sentence
    # the same findings scored against another truth are not inside: the check can fail
    doc = json.loads((tmp_path / "st/diagnoses/selftest-trial-01/findings.json").read_text())
    fig = figures_of(
        next(f for f in doc["findings"] if f["branch"] == "actuator"), JointDynamicsFigures
    )
    from simgap.demo.faults import resolve_faults

    nominal = {
        c.joint: {
            k: 1.0 for k in ("kp", "kv", "damping", "frictionloss", "armature", "force_limit")
        }
        for c in delay
    }
    stated = {c.joint for c in inside}
    far = score_cells("x", resolve_faults({"delay_s": 0.2}, 0, nominal), fig, ["delay"])
    assert {c.outcome for c in far if c.joint in stated} == {"missed"}
    null_truth = score_cells("x", resolve_faults({}, 0, nominal), fig, ["delay"])
    assert {c.outcome for c in null_truth if c.joint in stated} == {"false"}
    out = json.loads((tmp_path / "st/selftest.json").read_text())
    assert out["null"]["implicated"] == [] and out["families"][0]["family"] == "delay"
    html = (tmp_path / "st/report.html").read_text()
    assert res.sentence.split(".")[0] in html and "trial-01" in html
    row = f"| delay | 2 | {len(inside)} | {len(ridge)} |"
    assert (tmp_path / "st/selftest.md").read_text().count(row) == 1
    # resumed: nothing is diagnosed again
    again = run_plan(
        small_rig, tmp_path / "st", _plan(Trial("trial-01", 1, {"delay_s": 0.07})), jobs=1
    )
    assert [t.status for t in again.trials] == ["cached", "cached"]
    assert again.rows == res.rows


def test_an_out_folder_inside_the_rigs_inputs_is_refused(small_rig: Path) -> None:
    from simgap.errors import InputError
    from simgap.selftest.run import run_plan

    inside = load_rig(small_rig).evidence.dataset / "selftest"
    with pytest.raises(InputError) as e:
        run_plan(small_rig, inside, _plan())
    assert "nothing was written" in str(e.value)
    assert not inside.exists()


def test_cli_refuses_a_rig_without_a_dataset(tmp_path: Path, demo_model: Path) -> None:
    from typer.testing import CliRunner

    from simgap.cli import app

    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'name = "r"\n[model]\npath = "{demo_model}"\n[control]\ndt_s = 0.05\n' + GRIPPER
    )
    r = CliRunner().invoke(
        app, ["selftest", str(rig), "--out", str(tmp_path / "o"), "--trials", "1"]
    )
    assert r.exit_code == 2
    assert "evidence.dataset" in r.output and not (tmp_path / "o").exists()


@pytest.mark.slow  # 3 diagnoses of the demo rig: about 3-4 min on 2 cores
def test_selftest_on_the_demo_rig(tmp_path: Path) -> None:
    from simgap.demo import prepare_demo
    from simgap.selftest.run import run_selftest

    rig = prepare_demo(tmp_path / "cache", seed=0)
    res = run_selftest(rig, tmp_path / "st", trials=2, seed=0, jobs=2)
    assert [t.name for t in res.trials] == ["null", "trial-01", "trial-02"]
    assert all(t.status == "done" for t in res.trials)
    assert res.null.implicated == ()
    assert not [c for c in res.null.cells if c.outcome == "false"]
    assert [r.family for r in res.rows] == list(FAMILIES)
    for r in res.rows:
        assert r.counts.planted == sum(
            c.planted for t in res.trials[1:] for c in t.cells if c.family == r.family
        )
        assert set(r.joints) == set(load_rig(rig).joint_names)
    delay = next(r for r in res.rows if r.family == "delay")
    assert delay.counts.planted and delay.counts.missed == 0 and delay.counts.inside
    assert "not planted" not in res.sentence and res.plan.not_planted["camera"]
