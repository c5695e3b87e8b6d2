"""Contact lint and converters: each problem with file and line; bench conversions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.contact import converters
from simgap.contact.lint import lint_model

MAIN = """<mujoco>
  <option timestep="0.005"/>
  <default>
    <default class="pad">
      <geom condim="3" friction="0.8 0.02 0.0001" solref="0.004 1" solimp="0.9 0.95 0.001"/>
    </default>
  </default>
  <include file="parts.xml"/>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
  </worldbody>
  <contact>
    <pair geom1="finger" geom2="floor" friction="0.5 0.5 0.01 0.001 0.001" condim="4"/>
  </contact>
</mujoco>
"""
PARTS = """<mujoco>
  <worldbody>
    <body name="b" pos="0 0 0.1">
      <freejoint/>
      <geom name="finger" class="pad" type="box" size="0.01 0.01 0.01"/>
      <geom name="ghost" type="sphere" size="0.01" contype="0" conaffinity="0"/>
      <geom name="slick" type="sphere" size="0.01" friction="4 0.005 0.0001" condim="6"
            solref="0.02 1" solimp="0.95 0.9 0.001"/>
    </body>
  </worldbody>
</mujoco>
"""


def _write(tmp: Path) -> Path:
    (tmp / "parts.xml").write_text(PARTS)
    (tmp / "main.xml").write_text(MAIN)
    return tmp / "main.xml"


def test_lint_finds_each_kind_of_problem_with_file_and_line(tmp_path: Path) -> None:
    probs = lint_model(_write(tmp_path))
    rows = [((Path(p.file).name, p.line, p.element), p.problem) for p in probs]
    by = {k for k, _ in rows}
    text = "\n".join(f"{k} {v}" for k, v in rows)
    finger = [v for (f, ln, el), v in rows if el == "geom 'finger'"]
    assert any("torsional friction 0.02 does nothing with condim=3" in v for v in finger)
    assert ("parts.xml", 5, "geom 'finger'") in by  # the included file and its line
    assert any("solref time constant 0.004" in v for v in finger)
    assert any(
        el == "geom 'floor'" and ln == 10 and "MuJoCo's defaults" in v for (f, ln, el), v in rows
    ), text
    slick = [v for (f, ln, el), v in rows if el == "geom 'slick'"]
    assert any("implausible sliding friction 4" in v for v in slick)
    assert any("implausible solimp" in v for v in slick)
    assert not any(el == "geom 'ghost'" for (_, _, el) in by)  # visual-only: skipped
    pair = [v for (f, ln, el), v in rows if el == "pair 'finger|floor'"]
    assert any("overrides friction of geom 'finger'" in v for v in pair)
    assert any("overrides condim of geom 'finger'" in v for v in pair)
    assert all(p.fix for p in probs)


def test_lint_cli_json_keys_and_bad_model(tmp_path: Path) -> None:
    out = tmp_path / "lint.json"
    res = CliRunner().invoke(app, ["contact", "lint", str(_write(tmp_path)), "--json", str(out)])
    assert res.exit_code == 0, res.output
    d = json.loads(out.read_text())
    assert set(d) == {"problems"} and d["problems"]
    assert {"line", "element", "problem", "fix"} <= set(d["problems"][0])
    assert isinstance(d["problems"][0]["line"], int)
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><geom type='box' size='1'/><joint/></worldbody></mujoco>")
    res = CliRunner().invoke(app, ["contact", "lint", str(bad)])
    assert res.exit_code == 2
    assert "bad.xml" in res.output and "compile" in res.output


def test_converters_closed_forms() -> None:
    assert converters.sliding_from_tilt(30.0) == pytest.approx(1 / math.sqrt(3))
    # uniform-pressure disc: torque = integral of mu p r dA = (2/3) mu N a
    n, mu, d = 200, 0.6, 0.012
    r = (0.5 + __import__("numpy").arange(n)) / n * d / 2
    torque = float((mu * 2 * math.pi * r * r).sum() * (d / 2 / n)) / (math.pi * (d / 2) ** 2)
    assert converters.torsional_from_patch(d, mu) == pytest.approx(torque, rel=1e-4)
    five = converters.friction_five(45.0, 0.01, 0.0005)
    assert five[0] == five[1] == pytest.approx(1.0) and five[3] == five[4] == 0.0005
    with pytest.raises(Exception, match="tilt angle"):
        converters.sliding_from_tilt(95)
