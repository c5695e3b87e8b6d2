"""The training envelope: noise, speed, control rate, grasp margin and initial states, found
on scripted episodes with a known mismatch, and absent on episodes that match training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import fisher_exact

from simgap.branches import envelope as envelope_branch
from simgap.branches.context import Context
from simgap.episodes.envelope_noise import noise_check
from simgap.episodes.envelope_speed import speed_check
from simgap.episodes.placements import edge_distance, placements_check
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.finding import Finding, Verdict
from simgap.report.plots_envelope import plots
from simgap.rig import load_rig
from tests.episode_scripts import (
    GRIP_HI,
    GRIP_LO,
    RAMP_AMP,
    manifest_text,
    pick_place,
    ramps,
    write_manifest,
)
from tests.factories import write_rig, write_v3_dataset

SIGMA = 1e-4  # real reading noise [rad]
TRAIN_SIGMA = float(np.deg2rad(5.0))
SPEED = 0.15 * 1.5  # action scale 0.15 x rate 15/10: the seed's 22 %
STATES = [(0.25, 0.0), (0.2, 0.05), (0.45, 0.0), (0.25, 0.3)]  # two inside, two outside

TRAINING = """
[training]
control_dt_s = 0.1
obs_noise_std_rad = {noise}
action_scale = 1.0
workspace_x_m = [0.15, 0.35]
workspace_y_m = [-0.10, 0.10]
servo_p_gain = 16
[deploy]
action_scale = {scale}
servo_p_gain = {gain}
gripper_torque_limit = 0.5
[evidence]
dataset = "real"
sim_dataset = "sim"
real_manifest = "real.toml"
"""


def _ctx(rig_path: Path) -> Context:
    rig = load_rig(rig_path)
    return Context(rig=rig, evidence=EvidenceBundle(rig))


def mismatch_rig(tmp: Path, model: Path) -> Path:
    """Real: 15 Hz, 22.5 % of sim's speed, clean readings; two placements outside."""
    rng = np.random.default_rng(11)
    write_v3_dataset(
        tmp / "real",
        [ramps(fps=15, ramp_s=1.0 / SPEED, rng=rng, noise_rad=SIGMA) for _ in range(4)],
        fps=15,
    )
    write_v3_dataset(tmp / "sim", [ramps(fps=10, ramp_s=1.0, rng=rng) for _ in range(2)], fps=10)
    write_manifest(
        tmp / "real.toml",
        manifest_text(
            "real", [True, True, False, False], states=STATES, state_of_trial=[0, 1, 2, 3]
        ),
    )
    return write_rig(tmp, model, TRAINING.format(noise=TRAIN_SIGMA, scale=0.15, gain=8))


def test_real_readings_noisier_than_training_are_outside(tmp_path: Path, demo_model: Path) -> None:
    rng = np.random.default_rng(5)
    trained, noisy = 0.002, 0.02  # both above one encoder count (1.5 mrad)
    for name, sigma in (("real", noisy), ("sim", 0.0)):
        write_v3_dataset(
            tmp_path / name,
            [ramps(fps=10, ramp_s=1.0, rng=rng, noise_rad=sigma) for _ in range(3)],
            fps=10,
        )
    write_manifest(
        tmp_path / "real.toml",
        manifest_text("real", [True] * 3, states=STATES[:1], state_of_trial=[0, 0, 0]),
    )
    rig = write_rig(tmp_path, demo_model, TRAINING.format(noise=trained, scale=1.0, gain=16))
    noise = _by_check(envelope_branch.assess(_ctx(rig)))["observation_noise"]
    assert noise.verdict is Verdict.IMPLICATED and not noise.figures.covered_by_training
    assert noise.figures.real_noise_std_rad == pytest.approx(noisy, rel=0.1)
    assert noise.figures.training_to_real_ratio == pytest.approx(trained / noisy, rel=0.1)


def _no_object(ep: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v for k, v in ep.items() if k != "observation.object_pos"}


def matched_rig(tmp: Path, model: Path) -> Path:
    """Real = sim scripts at training's rate and speed, noise as trained, firm grasps."""
    rng = np.random.default_rng(12)

    def eps() -> list[dict[str, np.ndarray]]:
        return [ramps(fps=10, ramp_s=1.0, rng=rng, noise_rad=SIGMA) for _ in range(3)] + [
            _no_object(pick_place("success", fps=10, rng=rng, noise_rad=SIGMA, squeeze_pct=10.0))
            for _ in range(2)
        ]

    write_v3_dataset(tmp / "real", eps(), fps=10)
    write_v3_dataset(tmp / "sim", eps(), fps=10)
    write_manifest(
        tmp / "real.toml",
        manifest_text("real", [True] * 5, states=STATES[:2], state_of_trial=[0, 1, 0, 1, 0]),
    )
    return write_rig(tmp, model, TRAINING.format(noise=SIGMA, scale=1.0, gain=16))


def _by_check(findings: list[Finding]) -> dict[str, Finding]:
    return {str(f.figures.check): f for f in findings}


def test_a_known_mismatch_is_found_with_its_figures(tmp_path: Path, demo_model: Path) -> None:
    found = _by_check(envelope_branch.assess(_ctx(mismatch_rig(tmp_path, demo_model))))
    noise, speed, rate = found["observation_noise"], found["speed"], found["control_rate"]
    # readings far cleaner than training's noise: inside the envelope, reported as a spread
    assert noise.verdict is Verdict.ELIMINATED and noise.figures.covered_by_training
    assert noise.figures.training_to_real_ratio > 3 and "inside" in noise.summary
    assert noise.figures.real_noise_std_rad == pytest.approx(SIGMA, rel=0.1)
    assert noise.figures.training_noise_std_rad == pytest.approx(TRAIN_SIGMA)
    assert speed.verdict is Verdict.IMPLICATED
    assert speed.figures.top_speed_ratio == pytest.approx(SPEED, rel=0.05)
    causes = speed.figures.causes
    assert causes["action_scale_ratio"] == pytest.approx(0.15)
    assert causes["rate_ratio"] == pytest.approx(1.5, rel=1e-3)
    assert causes["servo_gain_ratio"] == pytest.approx(0.5)
    assert speed.figures.named_causes_product == pytest.approx(0.225, rel=1e-3)
    assert rate.verdict is Verdict.IMPLICATED
    assert rate.figures.real_rate_hz == pytest.approx(15.0, rel=1e-3)
    assert rate.figures.training_rate_hz == pytest.approx(10.0)
    init = found["initial_states"]
    assert init.verdict is Verdict.IMPLICATED
    real = init.figures.real
    assert (
        real.outside,
        real.inside_successes,
        real.inside_trials,
        real.outside_successes,
        real.outside_trials,
    ) == (2, 2, 2, 0, 2)
    # (0.45, 0) is 0.10 m beyond x = 0.35; (0.25, 0.3) is 0.20 m beyond y = 0.10
    assert real.farthest_outside_m == pytest.approx(0.20)
    assert found["grasp_margin"].verdict is Verdict.NOT_MEASURED  # ramps never hold
    for key in ("observation_noise", "speed", "control_rate", "initial_states"):
        svg = plots(found[key].to_dict())
        assert len(svg) == 1 and "<svg" in svg[0], key


def test_episodes_that_match_training_implicate_nothing(tmp_path: Path, demo_model: Path) -> None:
    findings = envelope_branch.assess(_ctx(matched_rig(tmp_path, demo_model)))
    assert len(findings) == 5
    assert not [f for f in findings if f.verdict is Verdict.IMPLICATED]
    found = _by_check(findings)
    for key in ("observation_noise", "speed", "control_rate", "grasp_margin", "initial_states"):
        assert found[key].verdict is Verdict.ELIMINATED, key
    squeeze = 10.0 / 100.0 * np.rad2deg(GRIP_HI - GRIP_LO)
    assert found["grasp_margin"].figures.real_squeeze_median_deg == pytest.approx(squeeze, rel=0.02)
    _check_typed(found)


def _check_typed(found: dict[str, Finding]) -> None:
    """Each check's Finding carries its records of simgap.figures.envelope, which survive
    findings.json's round trip."""
    from simgap.figures.envelope import envelope_records
    from tests.typed_records import check_typed

    for check, f in found.items():
        figures, details = envelope_records(check)
        check_typed(f, figures, details if f.details else None)


def test_not_measured_checks_carry_their_typed_figures(tmp_path: Path, demo_model: Path) -> None:
    """Without a dataset every check is not measured, its figures only its name."""
    rig = write_rig(tmp_path, demo_model, "")
    found = _by_check(envelope_branch.assess(_ctx(rig)))
    assert set(found) == {
        "observation_noise",
        "speed",
        "control_rate",
        "grasp_margin",
        "initial_states",
    }
    assert {f.verdict for f in found.values()} == {Verdict.NOT_MEASURED}
    _check_typed(found)


def test_a_policy_that_never_squeezes_is_a_marginal_grasp(tmp_path: Path, demo_model: Path) -> None:
    rng = np.random.default_rng(13)
    eps = [pick_place("success", fps=15, rng=rng, squeeze_pct=1.8) for _ in range(3)]
    write_v3_dataset(tmp_path / "real", eps, fps=15)
    rig = write_rig(
        tmp_path,
        demo_model,
        '\n[deploy]\ngripper_torque_limit = 0.5\n[evidence]\ndataset = "real"\n',
    )
    f = _by_check(envelope_branch.assess(_ctx(rig)))["grasp_margin"]
    assert f.verdict is Verdict.IMPLICATED
    squeeze = 1.8 / 100.0 * np.rad2deg(GRIP_HI - GRIP_LO)  # ~2 deg: the seed's 0 to 3
    assert f.figures.real_squeeze_median_deg == pytest.approx(squeeze, rel=0.02)
    assert f.figures.gripper_torque_limit_fraction == 0.5 and "50%" in f.summary
    assert plots(f.to_dict())


def test_speed_ratio_is_exact_on_constant_velocity_ramps(tmp_path: Path, demo_model: Path) -> None:
    rig = load_rig(write_rig(tmp_path, demo_model))
    rng = np.random.default_rng(0)
    real = write_v3_dataset(tmp_path / "r", [ramps(fps=15, ramp_s=4.0, rng=rng)], fps=15)
    sim = write_v3_dataset(tmp_path / "s", [ramps(fps=10, ramp_s=0.9, rng=rng)], fps=10)
    tr = dataset_trajectories(read_lerobot_dataset(real), rig)
    ts = dataset_trajectories(read_lerobot_dataset(sim), rig)
    body = [0, 1, 2, 3, 4]
    c = speed_check(tr, ts, body, [f"j{i}" for i in body], training_top_rad_s=None, causes={})
    assert c.figures["real_top_speed_rad_s"] == pytest.approx(RAMP_AMP.max() / 4.0, rel=1e-4)
    assert c.figures["top_speed_ratio"] == pytest.approx(0.9 / 4.0, rel=1e-4)
    assert c.status == "outside"
    n = noise_check(tr, body, None, 0.0015)
    assert n.status == "not_measured" and "obs_noise_std_rad" in n.next_step


def test_placements_against_the_training_area() -> None:
    d = edge_distance(
        np.array([[0.25, 0.0], [0.16, 0.05], [0.40, 0.15], [0.25, -0.13]]),
        (0.15, 0.35),
        (-0.1, 0.1),
    )
    np.testing.assert_allclose(d, [0.1, 0.01, -np.hypot(0.05, 0.05), -0.03], atol=1e-12)
    # the seed: 25/25 inside vs 1/31 outside in simulation
    xy = np.array([[0.25, 0.0]] * 25 + [[0.5, 0.0]] * 31)
    trials = [(i, True) for i in range(25)] + [(25 + i, i == 0) for i in range(31)]
    c = placements_check({"sim": (xy, trials)}, (0.15, 0.35), (-0.1, 0.1))
    sim = c.figures["sim"]
    assert (sim["inside_successes"], sim["inside_trials"]) == (25, 25)
    assert (sim["outside_successes"], sim["outside_trials"]) == (1, 31)
    assert sim["fisher_p"] == pytest.approx(fisher_exact([[25, 0], [1, 30]]).pvalue)
    assert c.status == "outside"
    assert placements_check({}, None, None).status == "not_measured"


@pytest.mark.parametrize(
    ("area", "need"),
    [
        (None, "[training] workspace_x_m and workspace_y_m"),
        ((0.15, 0.35), "evidence.real_manifest with initial_states"),
    ],
)
def test_initial_states_not_measured_names_what_is_missing(
    area: tuple[float, float] | None, need: str
) -> None:
    """A rig with evidence.dataset and a [training] section (simgap init's) was told to add
    'evidence.dataset and a [training] section': each not-measured check names its own."""
    from simgap.cli._app import key_text

    c = placements_check({}, area, area)
    f = envelope_branch.to_finding(c)
    assert f.verdict is Verdict.NOT_MEASURED
    assert f.needs and f.needs[0].startswith(need), f.needs
    assert key_text(f.to_dict()).startswith(f"add {need}")
    assert "evidence.dataset and a [training] section" not in " ".join(f.needs)
