"""mjlab actuator configurations: only fields of the pinned mjlab release, the servo's
gains mapped as the firmware P law on a DC motor, delays in physics steps."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from simgap.actuator.families import XL330
from simgap.export import mjlab as em

# Field names read from mjlab 1.6.0 (pip download mjlab==1.6.0 --no-deps):
# mjlab/actuator/actuator.py ActuatorCfg, builtin_actuator.py BuiltinPositionActuatorCfg,
# pd_actuator.py IdealPdActuatorCfg, dc_actuator.py DcMotorActuatorCfg,
# learned_actuator.py LearnedMlpActuatorCfg. A stand-in for the default suite: CI reads the
# release wheel itself (test_fields_are_those_of_the_real_release_wheel).
ACTUATOR_CFG = {
    "target_names_expr",
    "transmission_type",
    "armature",
    "frictionloss",
    "viscous_damping",
    "delay_min_lag",
    "delay_max_lag",
    "delay_hold_prob",
    "delay_update_period",
    "delay_per_env_phase",
}
FIELDS = {
    "BuiltinPositionActuatorCfg": ACTUATOR_CFG | {"stiffness", "damping", "effort_limit"},
    "DcMotorActuatorCfg": ACTUATOR_CFG
    | {"stiffness", "damping", "effort_limit", "saturation_effort", "velocity_limit"},
    "LearnedMlpActuatorCfg": ACTUATOR_CFG
    | {
        "stiffness",
        "damping",
        "effort_limit",
        "saturation_effort",
        "velocity_limit",
        "network_file",
        "pos_scale",
        "vel_scale",
        "torque_scale",
        "input_order",
        "history_length",
    },
}
PARAMS = {
    "kt": 0.38,
    "R": 3.4,
    "armature": 0.0019,
    "friction_base": 0.009,
    "friction_viscous": 0.0044,
    "delay_s": 0.012,
    "load_friction_base": 0.12,
}


def _call(src: str) -> tuple[str, dict[str, object]]:
    tree = ast.parse(src)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert isinstance(call.func, ast.Name)
    return call.func.id, {
        k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg is not None
    }


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
    assert kw["damping"] == pytest.approx(0.38**2 / 3.4, rel=1e-5)
    assert kw["delay_min_lag"] == 2 and kw["delay_max_lag"] == 4  # 12 / 21 ms at 5 ms
    assert kw["frictionloss"] == pytest.approx(0.009) and kw["armature"] == pytest.approx(0.0019)
    if cls == "DcMotorActuatorCfg":
        assert kw["velocity_limit"] == pytest.approx(7.4 / 0.38, rel=1e-5)
        assert kw["saturation_effort"] == pytest.approx(0.38 / 3.4 * 7.4, rel=1e-5)


def test_the_firmware_current_limit_caps_the_effort_below_the_stall_torque() -> None:
    gain = 400 * XL330.error_gain
    assert XL330.current_limit_a == 1.75
    _, kw = _call(
        em.dc_motor_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005, current_limit_a=XL330.current_limit_a)
    )
    assert kw["saturation_effort"] == pytest.approx(0.38 / 3.4 * 7.4, rel=1e-5)  # 0.83
    assert kw["effort_limit"] == pytest.approx(0.38 * 1.75, rel=1e-5)  # 0.67
    _, kw = _call(em.dc_motor_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005, current_limit_a=5.0))
    assert kw["effort_limit"] == kw["saturation_effort"]  # a limit above stall: none


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


def _release_fields(wheel: str) -> dict[str, tuple[set[str], set[str]]]:
    """class name -> (every dataclass field, the fields without a default), read from the
    ``mjlab/actuator/*.py`` sources of the release's wheel, bases followed by name."""
    import zipfile

    classes: dict[str, tuple[list[str], dict[str, bool]]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if not (name.startswith("mjlab/actuator/") and name.endswith(".py")):
                continue
            for node in ast.parse(zf.read(name)).body:
                if not isinstance(node, ast.ClassDef):
                    continue
                own = {
                    s.target.id: s.value is not None
                    for s in node.body
                    if isinstance(s, ast.AnnAssign)
                    and isinstance(s.target, ast.Name)
                    and "ClassVar" not in ast.unparse(s.annotation)
                }
                bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
                classes[node.name] = (bases, own)

    def collect(cls: str) -> dict[str, bool]:
        bases, own = classes.get(cls, ([], {}))
        out: dict[str, bool] = {}
        for b in bases:
            out.update(collect(b))
        out.update(own)
        return out

    return {
        c: (set(f), {k for k, has_default in f.items() if not has_default})
        for c in FIELDS
        for f in [collect(c)]
    }


def test_fields_are_those_of_the_real_release_wheel() -> None:
    """Against the release itself: .ci/run downloads mjlab 1.6.0's wheel (pip download
    --no-deps; mjlab needs mujoco-warp and a GPU stack to import) and names it in
    SIMGAP_MJLAB_WHEEL. Every field a snippet writes is a field of that class there, every
    field without a default is written, and the list above is the release's."""
    import os

    wheel = os.environ.get("SIMGAP_MJLAB_WHEEL", "")
    if not os.path.isfile(wheel):
        pytest.skip(
            "no mjlab wheel named in SIMGAP_MJLAB_WHEEL (.ci/run downloads "
            f"mjlab=={em.MJLAB_RELEASE})"
        )
    assert f"mjlab-{em.MJLAB_RELEASE}-" in os.path.basename(wheel)
    real = _release_fields(wheel)
    gain = 400 * XL330.error_gain
    snippets = [
        em.builtin_position_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005),
        em.dc_motor_cfg("j", PARAMS, gain, 7.4, 1.0, 0.005, current_limit_a=1.75),
        em.learned_mlp_cfg("j", "net.pt", 5, 0.8, 19.0, 0.005),
    ]
    for src in snippets:
        cls, kw = _call(src)
        fields, required = real[cls]
        assert FIELDS[cls] <= fields, FIELDS[cls] - fields
        assert set(kw) <= fields, set(kw) - fields
        assert required <= set(kw), required - set(kw)
