"""Batched replay: equals a Python mj_step loop; hold/linear/delay; bad input."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simgap.errors import InputError
from simgap.sim.clock import expand_commands
from simgap.sim.model import load_spec, spec_from_xml, with_params
from simgap.sim.replay import Replayer, ReplayLog

XML = """<mujoco><compiler angle="radian"/><option timestep="0.005"/>
<worldbody><body name="link"><joint name="j" axis="0 1 0" range="-2 2" damping="0.2"/>
<geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5"/>
<site name="tip" pos="0.2 0 0"/></body></worldbody>
<actuator><position name="a" joint="j" kp="30" kv="0.5"/></actuator></mujoco>"""


def _log(n: int = 40, dt: float = 0.02) -> ReplayLog:
    t = np.arange(n) * dt
    return ReplayLog(
        t=t, commands=(0.5 * np.sin(4 * t))[:, None], joints=("j",), q0=np.array([0.1])
    )


def test_replay_matches_python_step_loop_for_every_candidate() -> None:
    log = _log()
    with Replayer.build(spec_from_xml(XML), ["j"], ee_site="tip", nthread=2) as rep:
        models = [with_params(rep.model, {("kp", "a"): kp}) for kp in (10.0, 30.0, 60.0)]
        res = rep.replay(models, log)
        for b, m in enumerate(models):
            d = mujoco.MjData(m)
            d.qpos[0] = 0.1
            d.ctrl[0] = 0.1
            want, k = [], 0
            for i in range(int(round(log.t[-1] / 0.005)) + 1):
                if k < len(log.t) and abs(i * 0.005 - log.t[k]) < 1e-9:
                    mujoco.mj_forward(m, d)
                    want.append((d.qpos[0], d.site_xpos[0].copy()))
                    k += 1
                d.ctrl[0] = log.commands[min(int(i * 0.005 / 0.02 + 1e-9), 39), 0]
                mujoco.mj_step(m, d)
            np.testing.assert_allclose(res.q[b, :, 0], [w[0] for w in want], atol=1e-12)
            np.testing.assert_allclose(res.ee_pos[b], [w[1] for w in want], atol=1e-12)
    assert not np.allclose(res.q[0], res.q[2])  # the candidates really differ


def test_expand_hold_linear_and_delay() -> None:
    t = np.array([0.0, 0.1, 0.2])
    c = np.array([[0.0], [1.0], [2.0]])
    hold = expand_commands(t, c, 0.05, 5, "hold")
    np.testing.assert_allclose(hold[:, 0], [0, 0, 1, 1, 2], atol=1e-12)
    lin = expand_commands(t, c, 0.05, 5, "linear")
    np.testing.assert_allclose(lin[:, 0], [0, 0.5, 1, 1.5, 2])
    late = expand_commands(t, c, 0.05, 5, "hold", delay_s=0.1, hold_before=np.array([-1.0]))
    np.testing.assert_allclose(late[:, 0], [-1, -1, 0, 0, 1], atol=1e-12)


def test_onsets_act_at_their_own_times_not_the_nearest_step() -> None:
    # 30 fps commands against a 5 ms step: onsets fall inside steps; each step applies
    # the time average of the held command over it (its integral is exact)
    t = np.arange(4) / 30.0
    c = np.array([[0.0], [1.0], [2.0], [3.0]])
    u = expand_commands(t, c, 0.005, 21, "hold", delay_s=0.0123)
    edges = np.arange(22) * 0.005
    fine = np.arange(0, 21 * 0.005, 1e-6)
    held = c[np.clip(np.searchsorted(t + 0.0123, fine, side="right") - 1, 0, 3), 0]
    held[fine < 0.0123] = 0.0
    want = [
        held[(fine >= a) & (fine < b)].mean() for a, b in zip(edges[:-1], edges[1:], strict=True)
    ]
    np.testing.assert_allclose(u[:, 0], want, atol=2e-3)
    # a delay shifts the response continuously: half a step is not rounded away
    a = expand_commands(t, c, 0.005, 21, "hold", delay_s=0.010)
    b = expand_commands(t, c, 0.005, 21, "hold", delay_s=0.0125)
    assert not np.allclose(a, b)


def test_sample_times_between_steps_are_interpolated() -> None:
    # a log at 30 fps on a 5 ms model: the replay at t[k] equals a fine-step reference
    t = np.arange(31) / 30.0
    log = ReplayLog(t=t, commands=(0.4 * np.sin(3 * t))[:, None], joints=("j",), q0=np.array([0.0]))
    with (
        Replayer.build(spec_from_xml(XML), ["j"], nthread=1) as coarse,
        Replayer.build(spec_from_xml(XML), ["j"], nthread=1, physics_dt=0.0005) as fine,
    ):
        qc = coarse.replay(None, log).q[0, :, 0]
        qf = fine.replay(None, log).q[0, :, 0]
    # the 5 ms replay follows the 0.5 ms one within its own discretisation error
    assert np.max(np.abs(qc - qf)) < 0.05 * np.ptp(qf)


def test_bad_inputs_are_clear_errors(tmp_path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><geom type='sphere'/></worldbody></mujoco>")
    with pytest.raises(InputError, match="bad.xml"):
        Replayer.build(load_spec(bad), ["j"], source=bad)
    rep = Replayer.build(spec_from_xml(XML), ["j"], delay_s=1.0, nthread=1)
    with pytest.raises(InputError, match="longer than the command delay"):
        rep.controls(_log(10))
    wrong = ReplayLog(
        t=np.arange(3) * 0.1, commands=np.zeros((3, 1)), joints=("elbow",), q0=np.zeros(1)
    )
    with pytest.raises(InputError, match="elbow") as e:
        rep.initial_state(wrong)
    assert "'j'" in str(e.value) or "['j']" in str(e.value)
    outside = ReplayLog(
        t=np.arange(3) * 0.1, commands=np.zeros((3, 1)), joints=("j",), q0=np.array([2.5])
    )
    with pytest.raises(InputError, match="joint range"):
        rep.initial_state(outside)
    rep.close()
