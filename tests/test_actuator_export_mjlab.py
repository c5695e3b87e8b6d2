"""mjlab actuator configurations: only fields of the pinned mjlab release, the servo's
gains mapped as the firmware P law on a DC motor, delays in physics steps."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from simgap.actuator import export_mjlab as em
from simgap.actuator.families import XL330

# Field names read from mjlab 1.6.0 (pip download mjlab==1.6.0 --no-deps):
# mjlab/actuator/actuator.py ActuatorCfg, builtin_actuator.py BuiltinPositionActuatorCfg,
# pd_actuator.py IdealPdActuatorCfg, dc_actuator.py DcMotorActuatorCfg,
# learned_actuator.py LearnedMlpActuatorCfg.
ACTUATOR_CFG = {"target_names_expr", "transmission_type", "armature", "frictionloss",
                "viscous_damping", "delay_min_lag", "delay_max_lag", "delay_hold_prob",
                "delay_update_period", "delay_per_env_phase"}
FIELDS = {
    "BuiltinPositionActuatorCfg": ACTUATOR_CFG | {"stiffness", "damping", "effort_limit"},
    "DcMotorActuatorCfg": ACTUATOR_CFG | {"stiffness", "damping", "effort_limit",
                                          "saturation_effort", "velocity_limit"},
    "LearnedMlpActuatorCfg": ACTUATOR_CFG | {"stiffness", "damping", "effort_limit",
                                             "saturation_effort", "velocity_limit",
                                             "network_file", "pos_scale", "vel_scale",
                                             "torque_scale", "input_order", "history_length"},
}
PARAMS = {"kt": 0.38, "R": 3.4, "armature": 0.0019, "friction_base": 0.009,
          "friction_viscous": 0.0044, "delay_s": 0.012, "load_friction_base": 0.12}


def _call(src: str) -> tuple[str, dict[str, object]]:
    tree = ast.parse(src)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert isinstance(call.func, ast.Name)
    return call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords
                          if k.arg is not None}


def test_release_is_named() -> None:
    assert em.MJLAB_RELEASE == "1.6.0"


@pytest.mark.parametrize("make", [em.builtin_position_cfg, em.dc_motor_cfg])
def test_servo_snippets_use_release_fields_and_map_the_motor(make) -> None:  # type: ignore[no-untyped-def]
    gain = 400 * XL330.error_gain
    src = make("shoulder_.*", PARAMS, gain, 7.4, 1.0, 0.005, [0.012, 0.021], family="m3")
    cls, kw = _call(src)
    assert set(kw) <= FIELDS[cls], set(kw) - FIELDS[cls]
    assert f"mjlab {em.MJLAB_RELEASE}" in src and "load_friction_base" in src  # unmapped
    assert kw["target_names_expr"] == ("shoulder_.*",)
    assert kw["stiffness"] == pytest.approx(0.38 / 3.4 * 7.4 * gain, rel=1e-5)
    assert kw["damping"] == pytest.approx(0.38 ** 2 / 3.4, rel=1e-5)
    assert kw["delay_min_lag"] == 2 and kw["delay_max_lag"] == 4     # 12 / 21 ms at 5 ms
    assert kw["frictionloss"] == pytest.approx(0.009) and kw["armature"] == pytest.approx(0.0019)
    if cls == "DcMotorActuatorCfg":
        assert kw["velocity_limit"] == pytest.approx(7.4 / 0.38, rel=1e-5)
        assert kw["saturation_effort"] == pytest.approx(0.38 / 3.4 * 7.4, rel=1e-5)


def test_the_firmware_current_limit_caps_the_effort_below_the_stall_torque() -> None:
    gain = 400 * XL330.error_gain
    assert XL330.current_limit_a == 1.75
    _, kw = _call(em.dc_motor_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005,
                                  current_limit_a=XL330.current_limit_a))
    assert kw["saturation_effort"] == pytest.approx(0.38 / 3.4 * 7.4, rel=1e-5)  # 0.83
    assert kw["effort_limit"] == pytest.approx(0.38 * 1.75, rel=1e-5)           # 0.67
    _, kw = _call(em.dc_motor_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005, current_limit_a=5.0))
    assert kw["effort_limit"] == kw["saturation_effort"]      # a limit above stall: none


def test_learned_mlp_snippet_and_history_wrapper() -> None:
    torch = pytest.importorskip("torch")
    src = em.learned_mlp_cfg("j", "net.pt", 5, 0.8, 19.0, 0.005)
    cls, kw = _call(src)
    assert set(kw) <= FIELDS[cls] and kw["history_length"] == 5 and kw["pos_scale"] == 1.0
    inner = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(6, 1)).eval())
    wrapped, H = em.history_wrapper(inner, stride=2)
    assert H == 5
    x = torch.as_tensor(np.random.default_rng(0).normal(size=(7, 10)), dtype=torch.float32)
    picked = x[:, [0, 2, 4, 5, 7, 9]]
    assert torch.allclose(wrapped(x), inner(picked))
