"""Contact sweep, pair patch and the contact branch on a logged push (inline pusher)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.branches.context import Context
from simgap.cli import app
from simgap.errors import InputError
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.push_log import read_push_log, write_push_log
from simgap.fit.local_backend import LocalBackend
from simgap.fit.params import Param, ParamSet
from simgap.rig import load_rig

PUSHER = """<mujoco><compiler angle="radian"/><option timestep="0.002"/>
<worldbody><geom name="floor" type="plane" size="1 1 0.1" friction="0.1"/>
<body name="pusher" pos="0 0 0.02"><joint name="slide" type="slide" axis="1 0 0"
 range="-0.5 0.5" damping="0.1"/>
<geom name="tip" type="box" size="0.01 0.03 0.015" mass="0.05"/></body>
<body name="box" pos="0.031 0 0.02"><freejoint/>
<geom name="box" type="box" size="0.02 0.02 0.02" mass="{mass}" friction="{mu}"/></body>
</worldbody>
<contact><pair name="boxfloor" geom1="box" geom2="floor" friction="{pmu} {pmu} 0.005 0.0001
 0.0001"/></contact>
<actuator><position joint="slide" kp="20" kv="2"/></actuator></mujoco>"""
RIG = """name = "pusher"
[model]
path = "model.xml"
object_body = "box"
object_geom = "box"
[control]
dt_s = 0.02
[joints.slide]
recorded = "slide"
unit = "rad"
[evidence]
push_logs = ["push.csv"]
"""


def _bench(tmp: Path, *, pmu_true: float, mu_true: float, pair: bool) -> Path:
    """Log a push on the TRUE model; the rig points at the nominal one."""
    xml = (
        PUSHER
        if pair
        else PUSHER.replace(PUSHER[PUSHER.index("<contact>") : PUSHER.index("<actuator>")], "")
    )
    (tmp / "model.xml").write_text(xml.format(mass=0.1, mu=mu_true, pmu=pmu_true))
    (tmp / "rig.toml").write_text(RIG)
    rig = load_rig(tmp / "rig.toml")
    t = np.arange(0, 1.5, 0.02)
    cmd = np.clip((t - 0.1) * 0.15, 0, 0.15)[:, None]  # a slow push by a soft servo
    start = np.tile([0.031, 0, 0.02], (len(t), 1))
    write_push_log(tmp / "push.csv", rig, t, cmd, start)  # provisional: start pose only
    from simgap.contact.sweep import push_problem

    ps = ParamSet((Param("mass", "box", 0.1, 0.01, 1.0),))
    be = LocalBackend(
        push_problem(
            str(tmp / "model.xml"),
            rig.joint_names,
            [read_push_log(tmp / "push.csv", rig)],
            "box",
            ps,
        )
    )
    obj = be.replays(ps.x_nominal[None])[0].obj_pos[0]
    be.close()
    write_push_log(tmp / "push.csv", rig, t, cmd, obj)
    (tmp / "model.xml").write_text(xml.format(mass=0.1, mu=0.9, pmu=1.0))
    return tmp / "rig.toml"


def test_sweep_cli_recovers_pair_friction_and_refuses_two(tmp_path: Path) -> None:
    rig = _bench(tmp_path, pmu_true=0.53, mu_true=0.9, pair=True)
    out = tmp_path / "sweep.json"
    res = CliRunner().invoke(
        app,
        [
            "contact",
            "sweep",
            str(rig),
            "--kind",
            "pair_friction",
            "--target",
            "boxfloor",
            "--lo",
            "0.2",
            "--hi",
            "1.5",
            "--n",
            "27",
            "--json",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["refined_value"] == pytest.approx(0.53, rel=0.05)
    assert len(d["loss"]) == 27 and min(d["loss"]) < 0.1 * d["nominal_loss"]
    two = CliRunner().invoke(
        app,
        [
            "contact",
            "sweep",
            str(rig),
            "--kind",
            "pair_friction",
            "--target",
            "boxfloor",
            "--kind",
            "mass",
            "--target",
            "box",
            "--n",
            "3",
        ],
    )
    assert two.exit_code == 2 and "couples" in two.output


def test_contact_branch_implicates_friction_and_says_mass_is_confounded(tmp_path: Path) -> None:
    from simgap.branches.contact import assess
    from simgap.figures.contact import ContactDetails, ContactFigures

    rig = load_rig(_bench(tmp_path, pmu_true=1.0, mu_true=0.45, pair=False))
    ctx = Context(rig=rig, evidence=EvidenceBundle(rig), out_dir=tmp_path / "out")
    (f,) = assess(ctx)
    assert f.verdict.value == "implicated", f.summary
    fig = f.typed(ContactFigures)
    assert fig.friction_best == pytest.approx(0.45, rel=0.05)
    # a quasi-static push sees only friction x mass: the mass sweep explains it equally
    # with m = 0.1 * 0.45 / 0.9, and the finding says the two are confounded
    assert fig.mass_best == pytest.approx(0.05, rel=0.08)
    assert "confounded" in f.summary
    assert f.typed_details(ContactDetails).lint  # the model was linted too


def test_pair_patch_includes_original_and_compiles(tmp_path: Path) -> None:
    import mujoco

    rig = _bench(tmp_path, pmu_true=1.0, mu_true=0.9, pair=False)
    model = tmp_path / "model.xml"
    before = model.read_text()
    out = tmp_path / "patch" / "with_pair.xml"
    res = CliRunner().invoke(
        app,
        [
            "contact",
            "pair",
            str(model),
            "--geom1",
            "box",
            "--geom2",
            "tip",
            "--out",
            str(out),
            "--friction",
            "0.7 0.7 0.01 0.001 0.001",
            "--condim",
            "6",
        ],
    )
    assert res.exit_code == 0, res.output
    assert model.read_text() == before and "<include" in out.read_text()
    m = mujoco.MjModel.from_xml_path(str(out))
    assert m.npair == 1 and m.pair_dim[0] == 6
    np.testing.assert_allclose(m.pair_friction[0], [0.7, 0.7, 0.01, 0.001, 0.001])
    bad = CliRunner().invoke(
        app,
        [
            "contact",
            "pair",
            str(model),
            "--geom1",
            "box",
            "--geom2",
            "nope",
            "--out",
            str(out),
            "--friction",
            "1 1 0 0 0",
        ],
    )
    assert bad.exit_code == 2 and "tip" in bad.output  # valid names listed
    del rig


def test_push_log_with_wrong_joints_names_them(tmp_path: Path) -> None:
    rig = load_rig(_bench(tmp_path, pmu_true=1.0, mu_true=0.9, pair=False))
    p = tmp_path / "wrong.csv"
    p.write_text("t,cmd_elbow,obj_x,obj_y,obj_z\n0,0,0,0,0\n0.1,0,0,0,0\n")
    with pytest.raises(InputError, match="cmd_slide") as e:
        read_push_log(p, rig)
    assert "wrong.csv" in str(e.value) and "cmd_elbow" in str(e.value)


def test_contact_and_controller_plots_render() -> None:
    from simgap.report import plots_contact, plots_controller

    svg = plots_contact.plots(
        {
            "details": {
                "sweeps": {
                    "friction": {
                        "name": "box.geom_friction",
                        "values": [0.1, 0.2, 0.3],
                        "loss": [3.0, 1.0, 2.0],
                        "nominal": 0.2,
                    }
                }
            }
        }
    )
    assert len(svg) == 1 and "<svg" in svg[0] and "polyline" in svg[0]
    svg = plots_controller.plots(
        {
            "kind": "simpler",
            "details": {
                "best": "least_squares",
                "methods": {
                    "least_squares": {
                        "table": {
                            "j1.kp": {"value": 2.0, "nominal": 1.0},
                            "j1.kv": {"value": 0.2, "nominal": 0.1},
                        }
                    }
                },
                "traces": {"t": [0, 1], "before_m": [0, 1], "after_m": [0, 0.1]},
            },
        }
    )
    assert len(svg) == 3 and all("<svg" in s for s in svg)
