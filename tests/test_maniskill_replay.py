"""simgap's ManiSkill replay where ManiSkill is absent (the default suite): the values, the
verdict rule, the error naming the extra, and that ManiSkill is imported lazily and only in
``simgap.maniskill``. The replay, fit and export against the real ManiSkill 3.0.1 are in
tests/maniskill_real (their own CI step)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.errors import InputError, MissingExtraError
from simgap.maniskill.fit import verdict
from simgap.maniskill.replay import DriveGains

SRC = Path(__file__).resolve().parents[1] / "src" / "simgap"
HAS_MANISKILL = importlib.util.find_spec("mani_skill") is not None


def _gains() -> DriveGains:
    return DriveGains(("a", "b"), (1e3, 1e3), (1e2, 1e2), (100.0, 100.0))


def test_drive_gains_write_by_kind_and_joint() -> None:
    g = _gains().with_values({("kp", "b"): 600.0, ("kv", "a"): 160.0, ("force_limit", "a"): 50.0})
    assert g.stiffness == (1e3, 600.0) and g.damping == (160.0, 1e2)
    assert g.force_limit == (50.0, 100.0)


@pytest.mark.parametrize("bad", [(1e3,), (1e3, float("nan")), (1e3, -1.0)])
def test_drive_gains_refuse_a_wrong_stiffness(bad: tuple[float, ...]) -> None:
    with pytest.raises(InputError, match="stiffness"):
        DriveGains(("a", "b"), bad, (1e2, 1e2), (100.0, 100.0))


def test_verdict_is_the_joint_dynamics_rule_on_the_worst_joint() -> None:
    floor = 4e-4
    at_floor = np.array([4e-4, 5e-4])
    assert verdict(at_floor, at_floor, floor) == "eliminated"
    far, fixed = np.array([4e-4, 0.07]), np.array([4e-4, 4.5e-4])
    assert verdict(far, fixed, floor) == "implicated"
    # far from the floor but the fit removes too little of the error: no claim either way
    assert verdict(far, far * 0.9, floor) == "inconclusive"


@pytest.mark.skipif(HAS_MANISKILL, reason="ManiSkill is installed here")
def test_without_maniskill_the_replay_names_the_extra() -> None:
    from simgap.maniskill.replay import ManiSkillReplayer

    with pytest.raises(MissingExtraError, match=r"simgap\[maniskill\]"):
        ManiSkillReplayer(control_dt_s=0.05)


@pytest.mark.skipif(HAS_MANISKILL, reason="ManiSkill is installed here")
def test_without_maniskill_the_cli_says_what_to_install(tmp_path: Path) -> None:
    from simgap.cli import app

    res = CliRunner().invoke(
        app, ["maniskill", "replay", str(tmp_path / "rig.toml"), "--out", str(tmp_path / "out")]
    )
    assert res.exit_code != 0
    assert "pip install 'simgap[maniskill]'" in res.output
    assert "Traceback" not in res.output


def test_mani_skill_is_imported_lazily_and_only_in_simgap_maniskill() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = set(map(id, tree.body))
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if not any(n.split(".")[0] in ("mani_skill", "sapien") for n in names):
                continue
            inside = path.is_relative_to(SRC / "maniskill")
            if not inside or id(node) in top:
                wrong.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not wrong, f"ManiSkill imported outside simgap.maniskill or at module level: {wrong}"


def test_every_maniskill_install_hint_says_torch_cpu_first_and_one_release():
    """The replay's and the renderer's messages name the CPU torch before the extra (else pip
    pulls a multi-GB CUDA build), and the export and init name the same mani-skill release."""
    import importlib.util
    from pathlib import Path

    import simgap.maniskill.config as config
    import simgap.maniskill.export_config as export_config
    from simgap.maniskill.replay import TORCH_FIRST, require_maniskill

    if importlib.util.find_spec("mani_skill") is not None:
        pytest.skip("mani_skill is installed here, so its absence cannot be shown")
    with pytest.raises(MissingExtraError) as e:
        require_maniskill("Replaying")
    msg = str(e.value)
    assert TORCH_FIRST in msg
    assert msg.index("CPU build") < msg.index("pip install 'simgap[maniskill]'")
    for mod in (config, export_config):
        text = Path(str(mod.__file__)).read_text()
        assert "pip install mani-skill==3.0.1" in text
        assert "pip install mani-skill)" not in text and "pip install mani-skill:" not in text
