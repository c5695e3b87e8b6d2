"""Names from input files never become code or structure in a generated file (issue 33).

For every writer of a generated file (mjlab and Isaac Lab snippets, the Isaac Lab module,
the randomisation snippet, the MJCF actuator patch, ``simgap init``'s rig.toml) hypothesis
feeds hostile names (newlines, CR, quotes, backslashes, ``]``, ``#``, ``\"\"\"``, ``--``,
unicode, NUL where the format can hold it) and checks that the file parses, that the name
reads back exactly where it is stored as data, and that nothing in it runs: the Python is
parsed with ``ast`` and must hold only the expected imports and assignments, then executed
with stand-in classes in a namespace where a payload would set a marker. A name a format
cannot hold (a lone surrogate, a control character in XML) is an ``InputError``.

The default profile runs a third of the profile's examples per writer (40); the long one
(``--hypothesis-profile=long``) a thousand.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simgap.actuator.ladder import JointResult, RungResult
from simgap.errors import InputError
from simgap.export import mjlab as em
from simgap.export.isaaclab import JointDrive, isaaclab_export
from simgap.export.joint_snippets import actuator_net_cfg, delayed_pd_cfg
from simgap.safe_names import (
    GeneratedFileError,
    checked_python,
    py_comment,
    py_literal,
    toml_key,
    toml_string,
    xml_attr,
    xml_comment,
    xml_text,
)

N = max(10, settings.default.max_examples // 3)
SLOW_N = max(5, settings.default.max_examples // 8)
PAYLOAD = "HIT = 1"  # what an injected line would run: the marker must stay unset

HOSTILE = [
    "x\nHIT = 1\n#",
    "x\rHIT = 1",
    "x\r\nHIT = 1",
    '"""\nHIT = 1\n"""',
    "x'\nHIT = 1\n'",
    "x\\\nHIT = 1",
    'x]\n[compute]\nbackend = "ray"\naddress = "ray://evil:10001"\n[joints.y',
    "a b",
    'q"uote',
    "d.ot",
    "ü",
    "ds_😀",
    "#comment",
    "a]b",
    "x -->\n<evil/><!--",
    "a--b-",
    "\\u0041",
    "tab\there",
    "\u2028ls",
    "\x7fdel",
    "__import__('os').system('true')",
    "{x}",
    "\x0c\x0b",
]
"""Names that broke, or would break, a writer that pastes them raw."""

_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=24)
names = st.one_of(
    st.sampled_from(HOSTILE), _text, st.builds(lambda a, b: a + b, st.sampled_from(HOSTILE), _text)
)
"""Any name without a lone surrogate (those are refused, tested on their own)."""
xml_names = names.filter(lambda s: not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", s))
"""Names XML 1.0 can hold (a model's joint names come from XML)."""


# ----------------------------------------------------------------- the escaping module


@settings(max_examples=N)
@given(names)
def test_python_literal_and_comment_hold_any_name_in_one_token(name: str) -> None:
    src = f"# {py_comment(name)}\nX = {py_literal(name)}  # {py_comment(name)}\n"
    tree = ast.parse(src)
    assert [type(n).__name__ for n in tree.body] == ["Assign"]
    ns: dict[str, object] = {}
    exec(compile(tree, "<t>", "exec"), ns)  # noqa: S102 - the point: nothing else runs
    assert ns["X"] == name and "HIT" not in ns


@settings(max_examples=N)
@given(names, names)
def test_toml_key_and_string_round_trip_any_name(key: str, value: str) -> None:
    text = f"{toml_key(key)} = {toml_string(value)}\n[t.{toml_key(key)}]\nv = 1\n"
    assert tomllib.loads(text) == {key: value, "t": {key: {"v": 1}}}


def test_bare_keys_stay_bare_and_surrogates_are_refused() -> None:
    assert toml_key("shoulder_pan") == "shoulder_pan" and toml_key("a.b") == '"a.b"'
    for bad in ("x\ud800", "\udfffy"):
        with pytest.raises(InputError, match="surrogate"):
            toml_string(bad, "model joint")


@settings(max_examples=N)
@given(xml_names)
def test_xml_attribute_text_and_comment_round_trip(name: str) -> None:
    doc = f"<a n={xml_attr(name)}><!-- {xml_comment(name)} --><b>{xml_text(name)}</b></a>"
    root = ET.fromstring(doc)
    assert root.attrib == {"n": name} and [c.tag for c in root] == ["b"]
    assert root[0].text == name


def test_xml_refuses_what_it_cannot_hold() -> None:
    for bad in ("a\x00b", "\x01", "x\ud800"):
        with pytest.raises(InputError):
            xml_attr(bad, "geom name")


def test_checked_python_refuses_a_call_statement_or_broken_source() -> None:
    with pytest.raises(GeneratedFileError):
        checked_python("X = 1\n__import__('os').getcwd()\n")
    with pytest.raises(GeneratedFileError):
        checked_python("X = (\n")
    assert checked_python('"""doc"""\nfrom a import B\nX = B(y=1)\n')


# ----------------------------------------------------------------- generated Python


class _Module:
    """A stand-in module whose every attribute is a name (``mdp.randomize_...``)."""

    def __getattr__(self, name: str) -> str:
        return name


def _run(src: str, classes: set[str]) -> dict[str, object]:
    """Execute ``src`` without its imports, each configuration class a recorder of its
    keyword arguments (a module ``mdp`` a stand-in); the namespace afterwards."""
    tree = ast.parse(src)
    kinds = [type(n).__name__ for n in tree.body]
    assert set(kinds) <= {"ImportFrom", "Import", "Assign", "Expr"}, kinds
    assert all(isinstance(n.value, ast.Constant) for n in tree.body if isinstance(n, ast.Expr))
    body = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
    ns: dict[str, object] = {c: (lambda *a, **kw: kw) for c in classes}
    ns["mdp"] = _Module()
    exec(compile(ast.Module(body=body, type_ignores=[]), "<gen>", "exec"), ns)  # noqa: S102
    assert "HIT" not in ns
    return ns


PARAMS = {
    "kt": 0.38,
    "R": 3.4,
    "armature": 0.0019,
    "friction_base": 0.009,
    "friction_viscous": 0.0044,
    "delay_s": 0.012,
    "load_friction_base": 0.12,
}


@settings(max_examples=N)
@given(names, names)
def test_mjlab_snippets_hold_names_as_data_only(joint: str, family: str) -> None:
    expr = re.escape(joint)
    for make in (em.builtin_position_cfg, em.dc_motor_cfg):
        src = make(
            expr,
            PARAMS,
            66.4,
            7.4,
            1.0,
            0.005,
            family=family,
            joint=joint,
            variable="J_ACTUATOR_CFG",
        )
        ns = _run(src, {"BuiltinPositionActuatorCfg", "DcMotorActuatorCfg"})
        cfg = ns["J_ACTUATOR_CFG"]
        assert isinstance(cfg, dict) and cfg["target_names_expr"] == (expr,)
        assert re.fullmatch(cfg["target_names_expr"][0], joint)
    src = em.learned_mlp_cfg(joint, family, 5, 0.8, 19.0, 0.005)  # a hostile network file
    cfg = _run(src, {"LearnedMlpActuatorCfg"})["ACTUATOR_CFG"]
    assert isinstance(cfg, dict)
    assert cfg["target_names_expr"] == (joint,) and cfg["network_file"] == family


def _result(joint: str, selected: str = "servo") -> JointResult:
    rungs = (
        RungResult("ideal", 0.3, 0.3, {}),
        RungResult("servo", 0.01, 0.012, {}, validation_per_log_rad=(0.01,)),
    )
    return JointResult(
        joint=joint,
        delay_s=0.01,
        xcorr_delay_s=0.1,
        selected=selected,
        rungs=rungs,
        stop_reason="",
        dt=0.005,
        servo_params=(0.07, 0.08, 0.0016, 0.007, 0.01, 0.0),
        servo_free=("km", "dm", "armature", "friction_base", "friction_viscous"),
        servo_delay_s=0.01,
        bam_params={"kt": 0.3, joint: 1.0},
    )


@settings(max_examples=N)
@given(names)
def test_isaaclab_snippets_hold_names_as_data_only(joint: str) -> None:
    expr = re.escape(joint)
    ns = _run(
        delayed_pd_cfg(expr, _result(joint), 0.005, gain=2.0, vin=7.4), {"DelayedPDActuatorCfg"}
    )
    (cfg,) = [v for k, v in ns.items() if k.endswith("_CFG")]
    assert isinstance(cfg, dict) and cfg["joint_names_expr"] == [expr]
    no_pd = delayed_pd_cfg(expr, replace(_result(joint), servo_params=None), 0.005)
    assert ast.parse(no_pd).body == []  # a comment only
    ns = _run(actuator_net_cfg(expr, joint + ".pt", 0.005, 0.01), {"ActuatorNetMLPCfg"})
    (cfg,) = [v for k, v in ns.items() if k.endswith("_CFG")]
    assert isinstance(cfg, dict) and cfg["network_file"] == joint + ".pt"


def test_joints_whose_names_slug_alike_keep_their_own_configurations() -> None:
    src = "".join(delayed_pd_cfg(re.escape(j), _result(j), 0.005) for j in ("a.b", "a_b"))
    ns = _run(src, {"DelayedPDActuatorCfg"})
    cfgs = {k: v for k, v in ns.items() if k.endswith("_CFG")}
    assert len(cfgs) == 2 and "A_B_CFG" in cfgs  # a name that is an identifier keeps it


@settings(max_examples=N)
@given(st.lists(names, min_size=1, max_size=4, unique=True), names)
def test_isaaclab_module_round_trips_joint_and_group_names(joints: list[str], group: str) -> None:
    drives = [
        JointDrive(joint=j, rung="delay", stiffness=10.0 + i, damping=1.0, delay_s=0.01)
        for i, j in enumerate(joints)
    ]
    drives.append(JointDrive(joint=group + "\x00", rung="servo", reason=group))
    exp = isaaclab_export(drives, 0.005, groups={group: joints})
    ns = _run(exp.source, {"DelayedPDActuatorCfg", "DCMotorCfg", "ActuatorNetMLPCfg"})
    assert list(ns["ACTUATORS"]) == [g.name for g in exp.groups]  # type: ignore[call-overload]
    assert list(ns["NOT_OFFERED"]) == [group + "\x00"]  # type: ignore[call-overload]
    (cfg,) = ns["ACTUATORS"].values()  # type: ignore[attr-defined]
    assert [
        re.fullmatch(e, j) is not None for e, j in zip(cfg["joint_names_expr"], joints, strict=True)
    ] == [True] * len(joints)


@settings(max_examples=N)
@given(names, names)
def test_randomisation_snippet_holds_rig_and_notes_as_data_only(rig: str, note: str) -> None:
    from simgap.branches.ladder_list import entry_builders
    from simgap.export.randomization import to_isaaclab
    from simgap.finding import Diagnosis, Finding, Verdict
    from simgap.randomize import build_spec

    fs = (
        Finding(
            "latency",
            Verdict.IMPLICATED,
            figures={
                "control_dt_s": 0.0667,
                "added_delay": {"rate_per_s_min": 60.0, "rate_per_s_max": 160.0},
            },
        ),
    )
    spec = build_spec(Diagnosis(rig=rig, findings=fs, stop={}, seed=3), entry_builders())
    spec = replace(spec, entries=tuple(replace(e, note=note) for e in spec.entries))
    src = to_isaaclab(spec, 0.005)
    ns = _run(src, {"DelayedPDActuatorCfg", "EventTermCfg", "SceneEntityCfg"})
    assert ns["RIG"] == rig


# ----------------------------------------------------------------- BAM parameter JSON


@settings(max_examples=N)
@given(names, names)
def test_bam_json_holds_joint_and_motor_names_as_data(
    tmp_path_factory: pytest.TempPathFactory, joint: str, motor: str
) -> None:
    from simgap.export.bam import joint_bam_json
    from simgap.export.joint_snippets import bam_params
    from simgap.outputs import atomic_write_json
    from simgap.safe_names import safe_filename

    folder = tmp_path_factory.mktemp("bam")
    bam = {
        "kt": 0.3,
        "R": 3.1,
        "armature": 0.002,
        "friction_base": 0.01,
        "friction_viscous": 0.004,
        "q_offset": 0.0,
        "delay_s": 0.01,
    }
    res = replace(_result(joint), friction_family="m1", servo_family="xl330", bam_params=bam)
    for obj in (joint_bam_json(res), bam_params(res, motor)):
        path = atomic_write_json(folder / safe_filename(joint, ".json", "bam_params_"), obj)
        assert path.parent == folder
        back = json.loads(path.read_text(encoding="utf-8"))
        assert back.get("simgap", {}).get("joint", joint) == joint
        assert back.get("actuator") in ("xl330", motor)


# ----------------------------------------------------------------- MJCF actuator patch


@settings(max_examples=SLOW_N)
@given(xml_names)
def test_actuator_patch_header_cannot_break_the_xml(
    tmp_path_factory: pytest.TempPathFactory, joint: str
) -> None:
    from simgap.sim.actuator_patch import ActuatorSettings, write_actuator_patch
    from simgap.sim.model import load_model

    folder = tmp_path_factory.mktemp("patch")
    model = folder / "arm -- x.xml"
    model.write_text(
        f"<mujoco><worldbody><body><joint name={xml_attr(joint)}/>"
        "<geom size='.1'/></body></worldbody>"
        f"<actuator><position joint={xml_attr(joint)} kp='1'/></actuator>"
        "</mujoco>"
    )
    try:
        load_model(model)
    except InputError:
        return  # a name MuJoCo itself refuses never reaches the writer
    out = write_actuator_patch(
        model, folder / "patch.xml", {joint: ActuatorSettings(kp=5.0, lag_s=1e-9)}
    )
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    assert [j.get("name") for j in root.iter("joint")] == [joint]
    m = load_model(out)
    assert m.joint(0).name == joint


# ----------------------------------------------------------------- MJCF randomisation variants


@settings(max_examples=SLOW_N)
@given(xml_names, names)
def test_randomisation_variants_keep_model_names(
    tmp_path_factory: pytest.TempPathFactory, joint: str, rig: str
) -> None:
    from simgap.branches.ladder_list import entry_builders
    from simgap.finding import Diagnosis
    from simgap.randomize import build_spec
    from simgap.sim.model import load_model
    from simgap.sim.variants import write_variants

    folder = tmp_path_factory.mktemp("variants")
    model = folder / "arm.xml"
    model.write_text(
        f"<mujoco><worldbody><body><joint name={xml_attr(joint)}/>"
        f"<geom name={xml_attr(joint)} size='.1'/></body></worldbody>"
        f"<actuator><position name={xml_attr(joint)} joint={xml_attr(joint)}/>"
        "</actuator></mujoco>"
    )
    try:
        load_model(model)
    except InputError:
        return  # a name MuJoCo itself refuses never reaches the writer
    spec = build_spec(Diagnosis(rig=rig, findings=(), stop={}, seed=0), entry_builders())
    paths = write_variants(spec, model, folder / "out", n=1)
    root = ET.fromstring(paths[0].read_text(encoding="utf-8"))
    assert [e.get("name") for e in root.iter("joint")] == [joint]
    assert [e.get("joint") for e in root.find("actuator")] == [joint]  # type: ignore[union-attr]
    assert load_model(paths[0]).joint(0).name == joint
    assert json.loads(paths[-1].read_text(encoding="utf-8"))["rig"] == rig


# ----------------------------------------------------------------- MJCF contact pair patch


@settings(max_examples=SLOW_N)
@given(st.lists(xml_names, min_size=2, max_size=2, unique=True), names)
def test_contact_pair_patch_holds_geom_names_and_comment(
    tmp_path_factory: pytest.TempPathFactory, geoms: list[str], comment: str
) -> None:
    from simgap.contact.pair import pair_entry, patch_xml, write_checked, write_pair
    from simgap.sim.model import load_model

    folder = tmp_path_factory.mktemp("pair")
    model = folder / "arm.xml"
    model.write_text(
        "<mujoco><worldbody>"
        + "".join(
            f"<body pos='{i} 0 0'><freejoint/><geom name={xml_attr(g)} size='.1'/></body>"
            for i, g in enumerate(geoms)
        )
        + "</worldbody></mujoco>"
    )
    try:
        load_model(model)
    except InputError:
        return  # a name MuJoCo itself refuses never reaches the writer
    out = write_pair(model, folder / "pair.xml", geoms[0], geoms[1], friction=[1, 1, 0, 0, 0])
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    (pair,) = root.iter("pair")
    assert (pair.get("geom1"), pair.get("geom2")) == (geoms[0], geoms[1])
    text = patch_xml(
        model,
        out,
        [pair_entry(geoms[0], geoms[1], 3, [1, 1, 0, 0, 0], [0.02, 1], [0.9, 0.95, 0.001])],
        comment=comment,
    )
    root = ET.fromstring(text)
    assert [c.tag for c in root] == ["include", "compiler", "contact"]
    assert [c.tag for c in root.find("contact")] == ["pair"]  # type: ignore[union-attr]
    write_checked(model, out, text)
    assert load_model(out).npair == 1


# ----------------------------------------------------------------- demo TOML writers


@settings(max_examples=N)
@given(names, names, names)
def test_demo_manifest_and_rig_hold_any_name(
    tmp_path_factory: pytest.TempPathFactory, table: str, key: str, value: str
) -> None:
    from simgap.demo.factory import _rig_text
    from simgap.demo.writers import write_manifest_toml
    from simgap.units import JointUnit

    path = tmp_path_factory.mktemp("manifest") / "m.toml"
    write_manifest_toml(path, {table: {key: value, "n": [value, 1.5]}}, [{key: value}], header="h")
    assert tomllib.loads(path.read_text(encoding="utf-8")) == {
        table: {key: value, "n": [value, 1.5]},
        "trials": [{key: value}],
    }
    rig = tomllib.loads(
        _rig_text(
            value,
            0,
            Path("/home") / (value.replace("/", "_") + "😀"),
            30,
            JointUnit("pct", lo_rad=0.0, hi_rad=1.0),
        )
    )
    assert rig["name"] == value and rig["model"]["path"].endswith("😀")


# ----------------------------------------------------------------- simgap init's rig.toml


def _init_case(
    root: Path, joints: list[str], folder: str = "ds", recorded: list[str] | None = None
) -> tuple[Path, Path]:
    model = root / "arm.xml"
    bodies = "".join(
        f"<body><joint name={xml_attr(j)} range='-1 1' limited='true'/><geom size='.1'/></body>"
        for j in joints
    )
    model.write_text(f"<mujoco><worldbody>{bodies}<site name='ee'/></worldbody></mujoco>")
    ds = root / folder
    (ds / "meta").mkdir(parents=True, exist_ok=True)
    state = {
        "dtype": "float32",
        "shape": [len(joints)],
        "names": recorded or [j + ".pos" for j in joints],
    }
    (ds / "meta" / "info.json").write_text(
        json.dumps(
            {
                "robot_type": "so101_follower",
                "fps": 30,
                "features": {
                    "observation.state": state,
                    "observation.images.c": {"dtype": "video", "shape": [480, 640, 3]},
                },
            }
        )
    )
    return ds, model


@settings(max_examples=SLOW_N)
@given(st.lists(xml_names, min_size=1, max_size=3, unique=True), names)
def test_init_rig_holds_any_joint_and_recorded_name(
    tmp_path_factory: pytest.TempPathFactory, joints: list[str], tag: str
) -> None:
    from simgap.rig.init.draft import draft_rig
    from simgap.sim.model import load_model

    root = tmp_path_factory.mktemp("init")
    recorded = [f"{tag}{i}" for i in range(len(joints))]
    ds, model = _init_case(root, joints, recorded=recorded)
    try:
        load_model(model)
    except InputError:
        return  # a model MuJoCo refuses (e.g. joint names equal once trimmed)
    draft = draft_rig(
        ds, model, root / "rig.toml", joint_map=dict(zip(recorded, joints, strict=True))
    )
    parsed = tomllib.loads(draft.text)
    assert set(parsed) == {"name", "seed", "model", "control", "joints", "noise", "evidence"}
    assert list(parsed["joints"]) == joints
    assert [v["recorded"] for v in parsed["joints"].values()] == recorded


# ----------------------------------------------------------------- the mjlab injection
# (issue 33: a BAM log's motor name starting with a known servo reached the mjlab file's
# comment raw, and importing mjlab_actuators.py ran the line after the newline)


def _bam_log(path: Path, motor: str, n: int) -> Path:
    from tests.bam_synth import write_sine_log

    return write_sine_log(path, motor, n)


def test_a_motor_name_cannot_inject_code_into_the_mjlab_file(tmp_path: Path) -> None:
    # the writer 'simgap actuator --format bam' calls, on a servo fit of a motor whose name
    # starts with a known servo (the whole fit takes minutes: its result is given here)
    from simgap.branches.actuator_artifacts import write_artifacts
    from simgap.evidence.bam import read_bam_log

    motor = "xl330\nHIT = 1\n__import__('os').system('touch PWNED')\n#"
    log = read_bam_log(_bam_log(tmp_path / "0.json", motor, 300))
    bam = {
        "kt": 0.3,
        "R": 3.1,
        "armature": 0.002,
        "friction_base": 0.01,
        "friction_viscous": 0.004,
        "q_offset": 0.0,
        "delay_s": 0.01,
    }
    res = replace(_result(motor), friction_family="m1", servo_family="xl330", bam_params=bam)
    out = tmp_path / "out"
    arts = write_artifacts({motor: res}, [log], None, out)
    assert "mjlab" in arts, arts
    ns = _run((out / "mjlab_actuators.py").read_text(encoding="utf-8"), {"DcMotorActuatorCfg"})
    (cfg,) = [v for k, v in ns.items() if k.endswith("_ACTUATOR_CFG")]
    assert isinstance(cfg, dict) and re.fullmatch(cfg["target_names_expr"][0], motor)
    _run((out / "isaaclab_actuators.py").read_text(encoding="utf-8"), {"DelayedPDActuatorCfg"})
    assert not list(tmp_path.rglob("PWNED"))


# ----------------------------------------------------------------- simgap init, whole CLI

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5000),
    st.floats(allow_nan=True, allow_infinity=True),
    names,
)
_json = st.recursive(
    _json_leaf,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(names, c, max_size=3),
    max_leaves=8,
)


@settings(max_examples=SLOW_N)
@given(
    st.lists(xml_names, min_size=1, max_size=3, unique=True),
    st.one_of(st.sampled_from(["so101_follower", "koch", ""]), _json),
    st.one_of(st.sampled_from([30, 15.0]), _json),
    st.one_of(st.just([480, 640, 3]), _json),
    st.sampled_from(["ds", "ds_😀", "d s'\"#]", "ds\u2028x"]),
)
def test_init_on_hostile_datasets_exits_0_or_2_and_writes_a_loadable_rig(
    tmp_path_factory: pytest.TempPathFactory,
    joints: list[str],
    robot: object,
    fps: object,
    shape: object,
    folder: str,
) -> None:
    from simgap.rig import load_rig
    from tests.fuzz_harness import run_cli

    root = tmp_path_factory.mktemp("initcli")
    ds, model = _init_case(root, joints, folder=folder)
    info = json.loads((ds / "meta" / "info.json").read_text())
    info.update(robot_type=robot, fps=fps)
    info["features"]["observation.images.c"]["shape"] = shape
    (ds / "meta" / "info.json").write_text(json.dumps(info))
    out = root / "out" / "rig.toml"
    out.parent.mkdir()
    code = run_cli(["init", ds, "--model", model, "--out", out], root / folder)
    if code == 0:
        rig = tomllib.loads(out.read_text(encoding="utf-8"))
        assert list(rig["joints"]) == joints and "compute" not in rig
        assert load_rig(out).joint_names == tuple(joints)
