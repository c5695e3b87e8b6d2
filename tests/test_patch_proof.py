"""A patch is offered only when a held-out replay proves it stable and better than nominal."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from simgap.demo.factory import make_so101_bench
from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
from simgap.rig import load_rig
from simgap.series import Trajectory
from simgap.sim.actuator_patch import ActuatorSettings, write_actuator_patch
from simgap.sim.model import load_model, load_spec, strip_visuals
from simgap.sim.patch_proof import offer_patch, prove_patch, step_controls


@pytest.fixture(scope="module")
def bench(
    shared_data: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[Trajectory], dict[str, ActuatorSettings]]:
    """A bench with a 40 ms delay, kp x0.55 and damping x1.4; its held-out episode; the true
    settings as a patch."""
    model = shared_data / "so101" / "so101.xml"
    b = make_so101_bench(
        tmp_path_factory.mktemp("bench"),
        model,
        11,
        duration_s=5.0,
        n_episodes=1,
        faults={"delay_s": 0.04, "kp": 0.55, "damping": 1.4},
    )
    assert b.heldout is not None
    held = dataset_trajectories(read_lerobot_dataset(b.heldout), load_rig(b.rig))
    true = {
        t.name: ActuatorSettings(kp=t.value("kp"), damping=t.value("damping"), delay_s=t.delay_s)
        for t in b.truth
    }
    return model, held, true


def test_true_patch_is_stable_better_and_offered(bench: tuple, tmp_path: Path) -> None:
    model, held, true = bench
    offer = offer_patch(model, tmp_path / "p.xml", true, held)
    assert offer.proof.passed, offer.proof.reason
    assert offer.path is not None and offer.path.is_file()
    p = offer.proof
    assert p.patched_total_rad < 0.2 * p.nominal_total_rad
    assert all(np.isfinite(v) for v in p.patched_rms_rad.values())
    m = load_model(offer.path)
    assert m.actuator_delay[0] == pytest.approx(0.04)  # MuJoCo's native actuator delay


def test_a_joint_that_does_not_gain_keeps_the_models_dynamics(bench: tuple, tmp_path: Path) -> None:
    """Each joint earns its change on the held-out episode: one joint given a damping far
    from its truth replays worse than nominal, so the offered patch leaves that joint as
    the model has it (delay included) and names it, and the rest of the patch is proven
    without it."""
    model, held, true = bench
    bad = "wrist_flex"
    nominal = load_model(model)
    dof = nominal.jnt_dofadr[nominal.joint(bad).id]
    wrong = dict(true)
    wrong[bad] = ActuatorSettings(
        kp=true[bad].kp, damping=5.0 * true[bad].damping, delay_s=true[bad].delay_s
    )
    whole = prove_patch(
        nominal, load_model(write_actuator_patch(model, tmp_path / "w.xml", wrong)), held
    )
    assert whole.patched_rms_rad[bad] > whole.nominal_rms_rad[bad]  # the premise
    offer = offer_patch(model, tmp_path / "p.xml", wrong, held)
    assert offer.proof.passed, offer.proof.reason
    assert offer.path is not None
    m = load_model(offer.path)
    assert m.dof_damping[dof] == pytest.approx(nominal.dof_damping[dof])
    a = next(i for i in range(m.nu) if m.actuator_trnid[i, 0] == m.joint(bad).id)
    assert m.actuator_delay[a] == pytest.approx(nominal.actuator_delay[a])
    assert m.actuator_gainprm[a, 0] == pytest.approx(nominal.actuator_gainprm[a, 0])
    other = m.jnt_dofadr[m.joint("elbow_flex").id]
    assert m.dof_damping[other] == pytest.approx(true["elbow_flex"].damping)
    assert any(bad in n and "as the model has them" in n for n in offer.notes), offer.notes
    assert offer.proof.patched_rms_rad[bad] <= 1.1 * offer.proof.nominal_rms_rad[bad]


def test_filter_below_the_physics_step_is_never_written(bench: tuple, tmp_path: Path) -> None:
    model, held, _ = bench
    lag = {j: ActuatorSettings(lag_s=0.0012) for j in held[0].joint_names}
    out = write_actuator_patch(model, tmp_path / "lag.xml", lag)
    m = load_model(out)
    assert np.all(m.actuator_dyntype == mujoco.mjtDyn.mjDYN_NONE)
    assert "below the 5 ms physics step" in out.read_text()[:2000]
    offer = offer_patch(model, tmp_path / "lag2.xml", lag, held)
    # the patch changes nothing that matters, so it is not better and not offered
    assert offer.path is None and not (tmp_path / "lag2.xml").exists()
    assert not offer.proof.better and "not better" in offer.proof.reason
    assert any("below the 5 ms physics step" in n for n in offer.notes)


def test_an_unstable_patch_is_caught(bench: tuple) -> None:
    """The issue's failure: a 1.2 ms filter under a 5 ms step diverges within seconds."""
    model, held, _ = bench
    spec = strip_visuals(load_spec(model))
    nominal = spec.compile()
    for act in spec.actuators:
        act.dyntype = mujoco.mjtDyn.mjDYN_FILTER
        act.dynprm[0] = 0.0012
    proof = prove_patch(nominal, spec.compile(), held)
    assert not proof.stable and not proof.passed
    assert proof.diverged_at_s is not None and proof.diverged_at_s < 5.0
    assert "diverges" in proof.reason


def test_wrong_patch_is_not_better(bench: tuple) -> None:
    model, held, true = bench
    spec = strip_visuals(load_spec(model))
    nominal = spec.compile()
    for act in spec.actuators:  # kp x3: faster still, while the true arm is slower and late
        act.gainprm[0] = 3000.0
        act.biasprm[1] = -3000.0
    proof = prove_patch(nominal, spec.compile(), held)
    assert proof.stable and not proof.better
    assert proof.patched_total_rad > proof.nominal_total_rad


def test_step_controls_average_a_command_inside_a_step() -> None:
    t = np.array([0.0, 0.0125, 0.025])
    q = np.array([[0.0], [1.0], [1.0]])
    u = step_controls(t, q, 0.005, 5)
    np.testing.assert_allclose(u[:, 0], [0.0, 0.0, 0.5, 1.0, 1.0])


def test_scored_from_leaves_the_settling_start_out_of_the_score(bench: tuple) -> None:
    """A stretch cut out of a moving episode starts at rest; its first seconds are replayed
    but not scored, and the proof's RMS is over the scored frames only."""
    from simgap.sim.patch_proof import replay

    model, held, _ = bench
    nominal = load_model(model)
    ep = held[0]
    qn, _ = replay(nominal, ep)
    rel = ep.t - ep.t[0]
    keep = rel >= 2.0 - 1e-9
    want = np.sqrt(np.mean((qn - ep.q)[keep] ** 2, axis=0))
    p = prove_patch(nominal, nominal, held, scored_from_s=[2.0])
    assert list(p.nominal_rms_rad.values()) == pytest.approx(want.tolist())
    whole = prove_patch(nominal, nominal, held)
    assert whole.nominal_total_rad != pytest.approx(p.nominal_total_rad)
    assert f"1 held-out stretch(es), {rel[-1] - 2.0:.0f} s scored" in p.reason
    with pytest.raises(Exception, match="scored_from_s"):
        prove_patch(nominal, nominal, held, scored_from_s=[0.0, 1.0])


def test_proof_stretches_add_what_the_fit_did_not_replay() -> None:
    """The held-out episodes whole, then each fitted episode from a second before the end
    of the fit's seconds (that second not scored), where enough is left after the fit."""
    from simgap.branches.joint_dynamics import MIN_TAIL_S, TAIL_WARMUP_S, proof_stretches

    def ep(seconds: float, k: int) -> Trajectory:
        t = np.arange(0.0, seconds + 1e-9, 0.05) + 10.0 * k
        q = np.zeros((t.size, 1))
        return Trajectory(t=t, q_cmd=q, q=q, joint_names=("j",), episode=k)

    whole = [ep(6.0, 0), ep(3.0, 1), ep(5.0, 2)]
    out, skip = proof_stretches(whole, 2, 2.0)
    # the held-out episode first, whole; then the first fitted episode's stretch from 1 s;
    # the second fitted episode has 1 s after the fit, under MIN_TAIL_S: no stretch
    assert 3.0 - 2.0 < MIN_TAIL_S <= 6.0 - 2.0
    assert [o.episode for o in out] == [2, 0]
    assert skip[0] == 0.0 and skip[1] == pytest.approx(TAIL_WARMUP_S)
    assert out[0].t.size == whole[2].t.size
    assert out[1].t[0] - whole[0].t[0] == pytest.approx(2.0 - TAIL_WARMUP_S)
    assert out[1].t[-1] == whole[0].t[-1]
