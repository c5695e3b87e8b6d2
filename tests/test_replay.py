"""Batched replay: equals a Python mj_step loop; hold/linear/delay; bad input."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simgap.errors import InputError
from simgap.sim.model import load_spec, spec_from_xml, with_params
from simgap.sim.replay import Replayer, ReplayLog, expand_commands

XML = """<mujoco><compiler angle="radian"/><option timestep="0.005"/>
<worldbody><body name="link"><joint name="j" axis="0 1 0" range="-2 2" damping="0.2"/>
<geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5"/>
<site name="tip" pos="0.2 0 0"/></body></worldbody>
<actuator><position name="a" joint="j" kp="30" kv="0.5"/></actuator></mujoco>"""


def _log(n: int = 40, dt: float = 0.02) -> ReplayLog:
    t = np.arange(n) * dt
    return ReplayLog(t=t, commands=(0.5 * np.sin(4 * t))[:, None], joints=("j",),
                     q0=np.array([0.1]))


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
    assert hold[:, 0].tolist() == [0, 0, 1, 1, 2]
    lin = expand_commands(t, c, 0.05, 5, "linear")
    np.testing.assert_allclose(lin[:, 0], [0, 0.5, 1, 1.5, 2])
    late = expand_commands(t, c, 0.05, 5, "hold", delay_s=0.1, hold_before=np.array([-1.0]))
    assert late[:, 0].tolist() == [-1, -1, 0, 0, 1]


def test_bad_inputs_are_clear_errors(tmp_path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><geom type='sphere'/></worldbody></mujoco>")
    with pytest.raises(InputError, match="bad.xml"):
        Replayer.build(load_spec(bad), ["j"], source=bad)
    rep = Replayer.build(spec_from_xml(XML), ["j"], delay_s=1.0, nthread=1)
    with pytest.raises(InputError, match="longer than the command delay"):
        rep.controls(_log(10))
    wrong = ReplayLog(t=np.arange(3) * 0.1, commands=np.zeros((3, 1)), joints=("elbow",),
                      q0=np.zeros(1))
    with pytest.raises(InputError, match="elbow") as e:
        rep.initial_state(wrong)
    assert "'j'" in str(e.value) or "['j']" in str(e.value)
    outside = ReplayLog(t=np.arange(3) * 0.1, commands=np.zeros((3, 1)), joints=("j",),
                        q0=np.array([2.5]))
    with pytest.raises(InputError, match="joint range"):
        rep.initial_state(outside)
    rep.close()
