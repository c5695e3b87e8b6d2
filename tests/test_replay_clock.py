"""The recorder's clock: reads and command arrivals at the frame stamps (``exact``) or on the
first physics step at or after them (``step``), in the replay and in the bench factory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError
from simgap.sim.clock import CLOCKS, expand_commands, sample_weights

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "so101" / "so101.xml"


def test_step_clock_moves_reads_and_onsets_up_to_the_next_step() -> None:
    t = np.arange(4) / 30.0  # 0, 33.3, 66.7, 100 ms against a 5 ms step
    i, w = sample_weights(t, 0.005, "step")
    assert i.tolist() == [0, 7, 14, 20] and np.all(w == 0)
    i, w = sample_weights(t, 0.005, "exact")
    assert i.tolist() == [0, 6, 13, 20] and np.allclose(w, [0, 2 / 3, 1 / 3, 0])
    c = np.array([[0.0], [1.0], [2.0], [3.0]])
    u = expand_commands(t, c, 0.005, 21, "hold", clock="step")[:, 0]
    # command 1 acts from step 7 (35 ms) whole, never averaged into step 6
    assert u[6] == 0.0 and u[7] == 1.0 and u[13] == 1.0 and u[14] == 2.0
    ue = expand_commands(t, c, 0.005, 21, "hold", clock="exact")[:, 0]
    assert 0.0 < ue[6] < 1.0  # the exact clock averages the onset inside the step


def test_unknown_clock_is_refused_with_the_valid_names() -> None:
    with pytest.raises(InputError) as e:
        sample_weights(np.arange(3) / 30.0, 0.005, "late")
    assert all(c in str(e.value) for c in CLOCKS)


def test_bench_schedule_under_each_recorder_clock() -> None:
    from simgap.demo.bench_sim import schedule

    delays = np.array([0.0, 0.012])
    h, cmd, obs = schedule(6, 30, 0.005, delays, "step")
    starts = np.cumsum(np.concatenate([[0.0], h]))[:-1] - 1.0  # the settle starts at -1 s
    read = starts[obs >= 0]
    assert np.allclose(read, [0.0, 0.035, 0.070, 0.100, 0.135, 0.170], atol=1e-9)
    assert np.allclose(h, 0.005)  # no step split: every event sits on the grid
    h, cmd, obs = schedule(6, 30, 0.005, delays, "exact")
    starts = np.cumsum(np.concatenate([[0.0], h]))[:-1] - 1.0
    assert np.allclose(starts[obs >= 0], np.arange(6) / 30.0, atol=1e-9)
    off = np.array([0.0, 0.001, 0.002, 0.0005, 0.0, 0.0015])
    h, cmd, obs = schedule(6, 30, 0.005, delays, "jitter", off)
    starts = np.cumsum(np.concatenate([[0.0], h]))[:-1] - 1.0
    assert np.allclose(starts[obs >= 0], np.arange(6) / 30.0 + off, atol=1e-9)


@pytest.mark.skipif(not DATA.is_file(), reason=f"needs the SO-101 model at {DATA}")
def test_the_replay_that_keeps_the_recorders_clock_matches_it() -> None:
    """Recorded on the physics grid (a simulated rig), the step clock replays the true model
    closer than the exact clock does, by a margin far above the float noise."""
    import mujoco

    from simgap.demo.bench_sim import excitation, simulate
    from simgap.demo.nominal import nominal_model
    from simgap.demo.twin import JOINTS
    from simgap.sim.model import load_spec, strip_visuals
    from simgap.sim.replay import Replayer, ReplayLog

    m = nominal_model(DATA)
    t = np.arange(45) / 30.0
    rng = np.random.default_rng(3)
    ranges = [m.jnt_range[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)] for j in JOINTS]
    tg = np.stack(
        [
            excitation(rng, t, float(r[0]), float(r[1]), gripper=j == "gripper")
            for j, r in zip(JOINTS, ranges, strict=True)
        ],
        axis=1,
    )
    q, _ = simulate(m, tg, 30, np.zeros(len(JOINTS)), "step")
    log = ReplayLog(t=t, commands=tg, joints=JOINTS, q0=q[0], hold_before=tg[0])
    rms = {}
    with Replayer.build(strip_visuals(load_spec(DATA)), JOINTS, nthread=1) as rep:
        for c in CLOCKS:
            rep.clock = c
            rms[c] = float(np.sqrt(np.mean((rep.replay(None, log).q[0] - q) ** 2)))
    assert rms["step"] < 0.25 * rms["exact"], rms


@pytest.mark.skipif(not DATA.is_file(), reason=f"needs the SO-101 model at {DATA}")
@pytest.mark.parametrize("recorder", ["step", "exact"])
def test_the_fit_identifies_the_recorders_clock(tmp_path: Path, recorder: str) -> None:
    """A bench with a planted delay, recorded under one clock: the identification names the
    clock the recorder kept (not the replay's default), and scores every clock it tried."""
    from simgap.branches.joint_dynamics import identify_rig
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    b = make_so101_bench(
        tmp_path,
        DATA,
        5,
        fps=30,
        n_episodes=1,
        duration_s=4.0,
        faults={"delay_s": 0.020, "armature": 2.0},
        n_heldout=0,
        clock=recorder,
        amplitude=0.5,
        max_hz=2.0,
    )
    rig = load_rig(b.rig)
    js = identify_rig(
        rig,
        read_lerobot_dataset(rig.evidence.dataset),
        options={"joint_id_seconds": 4.0, "joint_id_episodes": 1, "joint_id_kinds": ("armature",)},
    )
    clock = js["clock"]
    assert clock["source"] == "identified" and set(clock["rms_rad"]) == set(CLOCKS)
    assert clock["chosen"] == recorder, clock
    lo, hi = js["shared_delay_interval_s"]
    assert lo - 0.0025 <= 0.020 <= hi + 0.0025, (lo, hi)
