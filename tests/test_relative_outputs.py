"""An output folder survives a move: findings.json names its paths relative to its own
folder, its readers resolve them there, and the actuator patch names its asset folders
relative to itself. Also: ``simgap randomize`` reads the pad friction the contact branch
identified (at the model's mass when the pushes cannot pin the mass)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import pytest

from simgap.branches.ladder_list import entry_builders
from simgap.finding import Diagnosis, Finding, Verdict, load_diagnosis
from simgap.outputs import relative_paths, resolve_paths
from simgap.randomize import PENG_TABLE, build_spec, load_spec_from_findings


def _strings(obj: Any, where: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, f"{where}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{where}/{i}")
    elif isinstance(obj, str):
        yield where, obj


def _absolute(doc: Any) -> list[tuple[str, str]]:
    return [(w, s) for w, s in _strings(doc) if os.path.isabs(s) or s[1:3] == ":\\"]


@pytest.fixture(scope="module")
def moved(demo_run: tuple[Path, Path, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo's output folder, moved elsewhere (the session's demo is shared)."""
    root = tmp_path_factory.mktemp("moved")
    a = root / "a" / "out"
    shutil.copytree(demo_run[0], a)
    b = root / "b" / "deeper" / "moved"
    b.parent.mkdir(parents=True)
    shutil.move(a, b)
    return b


def test_demo_findings_hold_no_absolute_path(demo_run: tuple[Path, Path, str]) -> None:
    doc = json.loads((demo_run[0] / "findings.json").read_text(encoding="utf-8"))
    assert _absolute(doc) == []
    act = next(f for f in doc["findings"] if f["branch"] == "actuator")
    assert act["artifacts"]["mjcf_patch"] == "actuator/so101_demo_actuator_patch.xml"
    assert all("\\" not in p for p in act["artifacts"].values())


def test_moved_folder_loads_and_names_its_own_files(moved: Path) -> None:
    diag = load_diagnosis(moved / "findings.json")
    act = diag.by_branch("actuator")[0]
    assert act.artifacts  # the demo writes the patch, nets, BAM files and Isaac Lab file
    for name, p in act.artifacts.items():
        assert Path(p).is_file() and moved.resolve() in Path(p).resolve().parents, (name, p)


def test_moved_folder_report_renders(moved: Path, tmp_path: Path) -> None:
    from simgap.report import write_report

    html = write_report(load_diagnosis(moved / "findings.json"), tmp_path / "report.html")
    assert "so101_demo_actuator_patch.xml" in html.read_text(encoding="utf-8")


def test_moved_patch_loads_and_replays_the_same(
    demo_run: tuple[Path, Path, str], moved: Path
) -> None:
    from simgap.cli.view import _diagnosis
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.report.rerun_layers import offered_patch
    from simgap.rig import load_rig
    from simgap.sim.patch_proof import replay

    patch, clock = offered_patch(_diagnosis(moved))  # as 'simgap view' finds it
    assert patch is not None and patch.resolve().parent.parent == moved.resolve()
    text = patch.read_text(encoding="utf-8")
    for attr in ("meshdir", "texturedir"):
        for value in _attr_values(text, attr):
            assert not os.path.isabs(value), (attr, value)
    there = mujoco.MjModel.from_xml_path(str(patch))
    here = mujoco.MjModel.from_xml_path(
        str(demo_run[0] / "actuator" / "so101_demo_actuator_patch.xml")
    )
    (rig_file,) = demo_run[1].glob("seed-*/rig.toml")
    rig = load_rig(rig_file)
    assert rig.evidence.dataset is not None
    episode = dataset_trajectories(read_lerobot_dataset(rig.evidence.dataset), rig)[0]
    np.testing.assert_array_equal(replay(there, episode, clock)[0], replay(here, episode, clock)[0])


def _attr_values(xml: str, attr: str) -> list[str]:
    import re

    return re.findall(rf'\b{attr}="([^"]*)"', xml)


def test_actuator_patch_names_meshes_relative_to_itself(tmp_path: Path) -> None:
    """A model with a mesh in its own folder: the patch, written elsewhere, still loads once
    the whole tree (model, meshes and output) is moved."""
    from simgap.sim.actuator_patch import ActuatorSettings, write_actuator_patch

    proj = tmp_path / "proj"
    (proj / "model" / "meshes").mkdir(parents=True)
    (proj / "model" / "meshes" / "box.obj").write_text(
        "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"
    )
    (proj / "model" / "arm.xml").write_text(
        '<mujoco><compiler meshdir="meshes"/><asset><mesh name="box" file="box.obj"/>'
        '</asset><worldbody><body name="link"><joint name="j" axis="0 0 1"/>'
        '<geom type="mesh" mesh="box"/></body></worldbody>'
        '<actuator><position name="j" joint="j" kp="10"/></actuator></mujoco>'
    )
    patch = write_actuator_patch(
        proj / "model" / "arm.xml",
        proj / "out" / "actuator" / "arm_patch.xml",
        {"j": ActuatorSettings(kp=20.0)},
    )
    (meshdir,) = _attr_values(patch.read_text(), "meshdir")
    assert meshdir == "../../model/meshes"
    shutil.move(proj, tmp_path / "elsewhere")
    m = mujoco.MjModel.from_xml_path(
        str(tmp_path / "elsewhere" / "out" / "actuator" / "arm_patch.xml")
    )
    assert m.nmesh == 1 and m.actuator_gainprm[0, 0] == pytest.approx(20.0)


def test_paths_round_trip_and_old_absolute_paths_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "actuator").mkdir(parents=True)
    (out / "actuator" / "p.xml").write_text("<mujoco/>")
    data = tmp_path / "data.csv"
    data.write_text("t\n")
    doc = {
        "artifacts": {"mjcf_patch": str(out / "actuator" / "p.xml")},
        "details": {
            "file": str(data),
            "units": "/s",
            "branch": "actuator",
            "gone": str(tmp_path / "never-written.csv"),
        },
    }
    rel = relative_paths(doc, out)
    assert rel["artifacts"]["mjcf_patch"] == "actuator/p.xml"
    assert rel["details"]["file"] == "../data.csv"
    assert rel["details"]["units"] == "/s"  # not a file: not a path
    assert resolve_paths(rel, out)["artifacts"]["mjcf_patch"] == str(out / "actuator" / "p.xml")
    assert resolve_paths(rel, out)["details"] == doc["details"]  # "actuator" is a branch
    # an older findings.json with absolute paths is read as it is
    old = Diagnosis(
        rig="r",
        stop={},
        findings=(
            Finding("actuator", Verdict.IMPLICATED, artifacts={"mjcf_patch": "/elsewhere/p.xml"}),
        ),
    )
    (out / "findings.json").write_text(old.to_json())
    assert load_diagnosis(out / "findings.json").findings[0].artifacts == {
        "mjcf_patch": "/elsewhere/p.xml"
    }


def test_randomize_reads_the_demo_pad_friction(demo_run: tuple[Path, Path, str]) -> None:
    doc = json.loads((demo_run[0] / "findings.json").read_text(encoding="utf-8"))
    fig = next(f for f in doc["findings"] if f["branch"] == "contact")["figures"]
    best, (lo, hi) = fig["friction_best_at_model_mass"], fig["friction_interval_at_model_mass"]
    fr = load_spec_from_findings(demo_run[0] / "findings.json", entry_builders()).entry(
        "pad_friction"
    )
    assert (fr.kind, fr.source) == ("range", "fitted")
    assert (fr.value, fr.low, fr.high) == (best, lo, hi)
    assert "identified from logged pushes" in fr.note and "model's object mass" in fr.note


def _contact(figures: dict[str, Any]) -> Diagnosis:
    return Diagnosis(
        rig="r", stop={}, findings=(Finding("contact", Verdict.IMPLICATED, figures=figures),)
    )


def test_randomize_pad_friction_interval_and_default() -> None:
    fitted = build_spec(
        _contact({"friction_best": 0.4, "friction_interval": [0.3, 0.5]}), entry_builders()
    )
    e = fitted.entry("pad_friction")
    assert (e.kind, e.source, e.value, e.low, e.high) == ("range", "fitted", 0.4, 0.3, 0.5)
    # not identifiable: best empty at any mass, the interval open at one end
    none = build_spec(
        _contact(
            {
                "friction_best": None,
                "friction_identifiable": False,
                "friction_interval": [None, 1.08],
                "friction_interval_at_model_mass": [None, 0.9],
                "friction_status": "not identifiable from these pushes",
            }
        ),
        entry_builders(),
    )
    d = none.entry("pad_friction")
    assert (d.kind, d.source, d.value) == ("range", "defaulted", None)
    assert (d.low, d.high) == PENG_TABLE["object_friction"]
