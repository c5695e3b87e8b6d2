"""The contact commands a new user meets: converters with unit checks, a patch for several
finger pads, a sweep over every logged push, and lint on a friction made inert by mixing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.contact import converters
from simgap.contact.lint import lint_model
from simgap.errors import InputError
from tests.contact_benches import make_bench


def test_measure_converts_bench_numbers(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    res = CliRunner().invoke(app, ["contact", "measure", "--tilt-deg", "19.3", "--json", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["sliding"] == pytest.approx(math.tan(math.radians(19.3)))
    res = CliRunner().invoke(
        app,
        ["contact", "measure", "--patch-diameter-mm", "6", "--sliding", "0.35", "--json", str(out)],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["torsional_m"] == pytest.approx(0.35 * 0.006 / 3)
    res = CliRunner().invoke(app, ["contact", "measure", "--patch-diameter-mm", "6"])
    assert res.exit_code == 2 and "--sliding" in res.output


def test_torsional_converter_refuses_millimetres_as_metres() -> None:
    with pytest.raises(InputError, match="millimetres") as e:
        converters.torsional_from_patch(6.0, 0.35)
    assert "0.006 m" in str(e.value)
    with pytest.raises(InputError, match="millimetres"):
        converters.rolling_from_depth(0.5)
    assert converters.torsional_from_patch(0.006, 0.35) == pytest.approx(0.0007)


def test_pair_takes_lists_and_writes_no_absolute_path(tmp_path: Path) -> None:
    import mujoco

    b = make_bench(tmp_path / "bench", "grasp", {}, seed=1)
    out = tmp_path / "elsewhere" / "patch.xml"
    res = CliRunner().invoke(
        app,
        [
            "contact",
            "pair",
            str(b.rig.model_path),
            "--geom1",
            "tip1,tip2",
            "--geom2",
            "bar",
            "--out",
            str(out),
            "--friction",
            "0.6 0.6 0.002 0.0001 0.0001",
            "--condim",
            "4",
        ],
    )
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert str(tmp_path) not in text and 'file="../bench/model.xml"' in text
    m = mujoco.MjModel.from_xml_path(str(out))
    assert m.npair == 2 and list(m.pair_dim) == [4, 4]


def test_sweep_replays_every_push_and_reports_an_interval(tmp_path: Path) -> None:
    b = make_bench(tmp_path, "push", {}, seed=2, angles=(0.6, -0.8))
    out = tmp_path / "sweep.json"
    res = CliRunner().invoke(
        app,
        [
            "contact",
            "sweep",
            str(b.rig_path),
            "--kind",
            "mass",
            "--target",
            "box",
            "--lo",
            "0.3",
            "--hi",
            "3",
            "--n",
            "9",
            "--noise-m",
            "0.0005",
            "--json",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert d["pushes"] == 2 and d["noise_m"] == 0.0005 and "interval" in d
    if not d["identifiable"]:
        assert d["best_value"] is None and "not identifiable" in d["reason"]


def test_lint_flags_a_geom_friction_its_partners_make_inert(tmp_path: Path) -> None:
    plain = make_bench(tmp_path / "a", "push", {}, seed=1, pad_friction=0.35, angles=(0.6,))
    probs = [p for p in lint_model(plain.rig.model_path) if "inert" in p.problem]
    assert len(probs) == 1 and probs[0].element == "geom 'pad'"
    assert "equal priority takes the larger" in probs[0].problem and "pair" in probs[0].fix
    prio = make_bench(
        tmp_path / "b", "push", {}, seed=1, pad_friction=0.35, priority=True, angles=(0.6,)
    )
    assert not [p for p in lint_model(prio.rig.model_path) if "inert" in p.problem]
