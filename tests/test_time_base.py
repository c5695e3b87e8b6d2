"""The evidence gate's time base (issue 34): motion impossible at the labelled fps refuses a
dataset, and stops the fits that would read its stamps as time; healthy recordings pass."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from simgap.branches.evidence_gate import ANY_SERVO_RAD_S, speed_limits, time_base_of
from simgap.demo.factory import make_so101_bench
from simgap.episodes.time_base import (
    MIN_IMPOSSIBLE_FRAMES,
    REFUSAL_FIX,
    SPEED_MARGIN,
    assess_time_base,
    circular_steps,
    stale_counts,
)
from simgap.evidence.lerobot import read_lerobot_dataset
from simgap.figures.evidence import (
    ActuatorNotRun,
    EvidenceNotRun,
    ExcitationFigures,
    NotRunFigures,
    TimeBaseDetails,
    TimeBaseFigures,
)
from simgap.finding import Finding, figures_of
from simgap.rig import Rig, load_rig
from tests.typed_records import check_typed

NAMES = ("pan", "lift", "gripper")
LIMITS = [4.7, 4.7, 4.7]


def _sines(t: np.ndarray, amp: float = 1.0, hz: float = 0.5) -> np.ndarray:
    """(T, 3) readings [rad]: phase-shifted sines on every joint."""
    return np.stack([amp * np.sin(2 * np.pi * hz * t + k) for k in range(3)], axis=1)


def _tb(t: np.ndarray, q: np.ndarray, fps: float, **kw: object):  # noqa: ANN202
    return assess_time_base([t], [q], [q], NAMES, LIMITS, fps=fps, gripper=2, **kw)


def test_motion_at_its_own_rate_passes() -> None:
    t = np.arange(300) / 30.0
    tb = _tb(t, _sines(t), 30.0)
    assert not tb.refused and tb.impossible_frames == 0
    assert tb.figures()["peak_speed_rad_s"] == pytest.approx(np.pi, rel=0.02)  # 2 pi f A
    assert tb.gaps == 0 and tb.stale_frames == 0


def test_a_2_hz_loop_labelled_30_fps_is_refused_with_the_fix() -> None:
    real = np.arange(20) * 0.5  # what the loop did: a frame every 0.5 s
    q = _sines(real)
    labelled = np.arange(20) / 30.0  # what LeRobot stamped: frame_index / fps
    tb = _tb(labelled, q, 30.0)
    assert tb.refused and tb.impossible_frames >= MIN_IMPOSSIBLE_FRAMES
    assert "faster than" in tb.reasons[0]
    # the fastest step needs about half a second at the servo's speed: the real period
    step = circular_steps(q[:, :2]).max()
    assert tb.min_real_period_s == pytest.approx(step / 4.7)
    assert tb.min_real_period_s > 5 * tb.period_s
    assert "fewer cameras or a lower fps" in REFUSAL_FIX
    assert not _tb(real, q, 2.0).refused  # the same motion on its real clock


def test_too_little_motion_vouches_for_nothing() -> None:
    from simgap.branches.evidence_gate import finding

    t = np.arange(300) / 30.0
    fast = _tb(t, _sines(t), 30.0)
    assert fast.detectable_slowdown == pytest.approx(SPEED_MARGIN * 4.7 / np.pi, rel=0.02)
    assert finding(fast).verdict.value == "eliminated"
    slow = _tb(t, _sines(t, amp=0.02), 30.0)  # 0.06 rad/s: a 2 Hz loop would not show
    assert slow.detectable_slowdown > 20 and not slow.refused
    f = finding(slow)
    assert f.verdict.value == "inconclusive" and "too slowly" in f.summary
    still = _tb(t, np.zeros((300, 3)), 30.0)
    assert still.detectable_slowdown == math.inf
    assert finding(still).verdict.value == "inconclusive"


def test_one_or_two_glitches_do_not_refuse() -> None:
    t = np.arange(300) / 30.0
    q = _sines(t)
    q[100, 0] += 2.0  # a single wrong reading: two impossible steps (in and out)
    tb = _tb(t, q, 30.0)
    assert tb.impossible_frames == 2 and not tb.refused


def test_the_gripper_and_wraps_never_refuse() -> None:
    t = np.arange(300) / 30.0
    q = _sines(t, amp=0.1)
    q[::2, 2] += 1.5  # a gripper whose range in radians is a guess: never decides
    q[150:, 1] = np.pi - 1e-3 * np.arange(150)  # near +pi ...
    q[151::2, 1] = -np.pi + 1e-3  # ... flickering over to -pi: a wrap, not a turn
    tb = _tb(t, q, 30.0)
    assert not tb.refused
    grip = next(j for j in tb.joints if j.gripper)
    assert grip.impossible_frames > 100  # reported as it is
    assert circular_steps(np.array([[np.pi - 0.01], [-np.pi + 0.01]]))[0, 0] == pytest.approx(0.02)


def test_observations_read_twice_are_stale() -> None:
    t = np.arange(300) / 30.0
    q = _sines(t)
    q[1::3] = q[0::3][: q[1::3].shape[0]]  # every third frame repeats its predecessor
    s, m = stale_counts(q, [0, 1])
    assert s > 0.2 * m
    tb = _tb(t, q, 30.0)
    assert tb.refused and any("read twice" in r for r in tb.reasons)
    assert tb.stale_fraction == pytest.approx(s / m)
    held = _sines(t)
    held[100:150] = held[100]  # the arm holding still is not stale: no motion around it
    assert stale_counts(held, [0, 1])[0] == 0


def test_gaps_are_counted_and_float32_resolution_refuses_only_past_its_reach() -> None:
    t = np.delete(np.arange(300) / 30.0, [50, 120])  # two dropped frames
    tb = _tb(t, _sines(t, amp=0.2), 30.0)
    assert tb.gaps == 2 and not tb.refused
    assert tb.largest_step_s == pytest.approx(2 / 30.0)
    assert tb.resolution_s < 1e-6  # 10 s at float32
    far = 1e6 + np.arange(100) / 30.0  # stamps eleven days into an episode
    tb = _tb(far, _sines(far, amp=0.01), 30.0)
    assert tb.resolution_s == pytest.approx(float(np.spacing(np.float32(far[-1]))))
    assert tb.refused and any("float32" in r for r in tb.reasons)


# ---- on recorded datasets --------------------------------------------------------------


@pytest.fixture(scope="module")
def benches(tmp_path_factory: pytest.TempPathFactory, demo_model: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("time_base")
    out = {}
    for fps in (30, 100):
        for clock in ("exact", "step", "jitter"):
            make_so101_bench(
                root / f"{fps}-{clock}",
                demo_model,
                3,
                fps=fps,
                clock=clock,
                n_episodes=1,
                duration_s=6.0,
                n_heldout=0,
            )
            out[f"{fps}-{clock}"] = root / f"{fps}-{clock}" / "rig.toml"
    return out


def test_healthy_benches_pass_at_30_and_100_fps_on_every_clock(benches: dict[str, Path]) -> None:
    for name, path in benches.items():
        rig = load_rig(path)
        tb = time_base_of(rig, read_lerobot_dataset(rig.evidence.dataset))  # type: ignore[arg-type]
        assert not tb.refused, (name, tb.reasons)
        assert tb.figures()["peak_to_limit_ratio"] < 1.0 / SPEED_MARGIN, name
        # and against the SO-101's own servo, stated: still no false refusal
        stated = path.with_name("stated.toml")
        stated.write_text(path.read_text() + '\n[deploy]\nservo_model = "sts3215"\n')
        srig = load_rig(stated)
        assert speed_limits(srig)[0][0] == pytest.approx(3400 * 2 * math.pi / 4096)
        assert not time_base_of(srig, read_lerobot_dataset(srig.evidence.dataset)).refused
    assert speed_limits(load_rig(benches["30-exact"]))[0][0] == ANY_SERVO_RAD_S
    guessed = benches["30-exact"].with_name("guessed.toml")
    guessed.write_text(
        benches["30-exact"].read_text() + '\n[deploy]\nservo_model = "sts3215"  # guessed\n'
    )
    assert speed_limits(load_rig(guessed))[0][0] == ANY_SERVO_RAD_S  # a guess bounds nothing


def _relabelled(bench_rig: Path, every: int, out: Path) -> Path:
    """The bench's dataset as a loop ``every`` frames slower writes it under the same fps
    label (frame k stamped k / fps, holding what the arm did at k x every / fps)."""
    from simgap.demo.writers import write_lerobot_v3

    ds = read_lerobot_dataset(bench_rig.parent / "dataset")
    eps = [
        {key: np.asarray(ds.vector(key, e))[::every] for key in ("action", "observation.state")}
        for e in ds.episode_indices
    ]
    write_lerobot_v3(
        out / "dataset",
        eps,
        fps=int(ds.fps),
        names=ds.names("action"),
        task="slow loop",
        robot_type="so101_follower",
    )
    rig = out / "rig.toml"
    rig.write_text(bench_rig.read_text())
    return rig


def test_diagnose_refuses_a_slow_loop_and_fits_nothing_on_it(
    benches: dict[str, Path], tmp_path: Path
) -> None:
    from simgap.diagnose import diagnose_rig

    rig = _relabelled(benches["100-exact"], 50, tmp_path / "slow")  # 2 Hz, labelled 100 fps
    diagnose_rig(rig, tmp_path / "out")
    found = json.loads((tmp_path / "out" / "findings.json").read_text())
    first = found["findings"][0]
    assert (first["branch"], first["title"], first["verdict"]) == (
        "evidence",
        "Time base",
        "implicated",
    )
    tb = figures_of(first, TimeBaseFigures)
    assert tb.refused and tb.impossible_frames >= 3
    assert tb.speed_limit_from.startswith("no deploy.servo_model")
    assert tb.provenance == {"deploy.servo_model": "default"}
    assert REFUSAL_FIX in first["next_step"]
    assert found["stop"]["branch"] == "evidence"
    by = {(f["branch"], f["title"]): f for f in found["findings"]}
    for key in (
        ("actuator", "Actuator dynamics"),
        ("controller", "Controller"),
        ("evidence", "Command shaping"),
    ):  # its clip search replays the stamps too
        assert by[key]["verdict"] == "inconclusive" and by[key]["kind"] == "not_run"
        assert figures_of(by[key], NotRunFigures.of(key[0])).not_run
    for key in (("envelope", "Speed"), ("envelope", "Control rate")):
        assert by[key]["verdict"] == "not_measured" and REFUSAL_FIX in by[key]["needs"][0]
    assert not [
        f
        for f in found["findings"]
        if f["verdict"] == "eliminated" and f["branch"] in ("actuator", "controller", "envelope")
    ]
    assert "Time base" in (tmp_path / "out" / "report.html").read_text()


def rig_found(rig: Rig) -> list[Finding]:
    """The evidence gate's Findings on ``rig``."""
    from simgap.branches.context import Context
    from simgap.branches.evidence_gate import assess
    from simgap.evidence.bundle import EvidenceBundle

    return assess(Context(rig=rig, evidence=EvidenceBundle(rig)))


def test_one_branch_and_the_actuator_alone_are_stopped_too(
    benches: dict[str, Path], tmp_path: Path
) -> None:
    """``simgap envelope`` (``assess_branch``) and ``simgap actuator`` on a dataset
    (``actuator_from_dataset``) run the gate first, as diagnose does."""
    from simgap.diagnose import actuator_from_dataset, assess_branch

    rig_path = _relabelled(benches["100-exact"], 50, tmp_path / "slow")
    rig, found = assess_branch(rig_path, "envelope")
    rate = next(f for f in found if f.title == "Control rate")
    assert rate.verdict.value == "not_measured" and REFUSAL_FIX in rate.needs[0]
    f = actuator_from_dataset(rig)
    assert f.verdict.value == "inconclusive" and f.typed(ActuatorNotRun).not_run
    check_typed(f, ActuatorNotRun)
    gate = [g for g in rig_found(rig) if g.branch == "evidence"]
    assert [g.title for g in gate] == ["Time base", "Excitation and data", "Command shaping"]
    check_typed(gate[0], TimeBaseFigures, TimeBaseDetails)
    assert gate[0].typed(TimeBaseFigures).refused
    check_typed(gate[1], ExcitationFigures)
    check_typed(gate[2], EvidenceNotRun)
    _, healthy = assess_branch(benches["100-exact"], "envelope")
    assert "time base" not in next(f for f in healthy if f.title == "Control rate").summary
