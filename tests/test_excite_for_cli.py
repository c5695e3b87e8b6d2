"""What ``simgap excite --for`` writes and says, on small constructed designs: an interval
whose bounds overflow is "unbounded" (the JSON null with its reason, not a crash), every
interval carries its unit, the caveat from docs/actuator.md's measured figures stands beside
the predictions, and a diagnosis from bench logs or a missing folder is refused with the
cause and the fix. (The design itself is tested in test_excite_design.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.actuator.excite_design import Prediction, Segment
from simgap.actuator.excite_episode import (
    CAVEAT,
    check_summary,
    design_json,
    readme,
    result_lines,
    safety_lines,
)
from simgap.actuator.excite_estimate import Estimate, estimate_from_diagnosis
from simgap.actuator.excite_motion import UNBOUNDED_SPAN, Design, NextMotion
from simgap.cli import app
from simgap.errors import InputError
from simgap.figures.ladder import LadderFigures
from simgap.finding import Diagnosis, Finding, Verdict
from simgap.outputs import atomic_write_json

runner = CliRunner()
DOC = Path(__file__).resolve().parents[1] / "docs" / "actuator.md"


def _design(
    kind: str, value: float, hw_before: float, hw_after: float, checked: dict | None = None
) -> Design:
    seg = Segment(
        joint="wrist_roll",
        name="chirp 4-6 Hz, amplitude up to 0.20 rad",
        family="chirp",
        q=np.zeros(4),
    )
    cols = (kind, "delay") if kind != "delay" else ("kp", "delay")
    i = cols.index(kind)

    def pred(hw: float) -> Prediction:
        h = np.array([0.1, 0.1])
        h[i] = hw
        return Prediction(cols, h, np.eye(2))

    return Design(
        "wrist_roll",
        kind,
        "too weak",
        value,
        seg,
        pred(hw_before),
        pred(hw_after),
        {"chirp": hw_after, "steps": float("inf")},
        checked or {},
    )


def _motion(*designs: Design) -> NextMotion:
    return NextMotion(
        joints=("wrist_roll",),
        fps=30.0,
        commands=np.zeros((4, 1)),
        predicted_q=np.zeros((4, 1)),
        start=np.zeros(1),
        designs=designs,
    )


def test_an_overflowing_interval_is_written_unbounded_not_a_crash(tmp_path: Path) -> None:
    # the trial's case: kp at 705 with a half-width whose exp overflows (e^800) before, and
    # one reading [2.88e-35, 1.73e+40] (half-width 85) after
    nm = _motion(
        _design("kp", 705.0, 800.0, 85.0, {"reason": "x", "local_interval": [0.0, float("inf")]}),
        _design("delay", 0.02, float("inf"), 0.004),
    )
    with np.errstate(over="raise"):  # no overflow on the way (it raised a RuntimeWarning)
        js = design_json(nm, "diag2")
    path = atomic_write_json(tmp_path / "excite_design.json", js)  # allow_nan=False
    back = json.loads(path.read_text())
    kp, delay = back["designs"]
    assert kp["predicted_interval_recording"] is None
    assert kp["predicted_interval_with_episode"] is None
    assert "unbounded" in kp["predicted_interval_with_episode_unbounded"]
    assert kp["candidates_halfwidth"]["steps"] is None
    assert kp["checked"]["local_interval"] == [0.0, None]
    assert delay["predicted_interval_recording"] is None
    assert "null direction" in delay["predicted_interval_recording_unbounded"]
    assert delay["predicted_interval_with_episode"] == pytest.approx([0.016, 0.024])
    assert back["caveat"] == CAVEAT
    text = readme(nm, SimpleNamespace(name="bench"), "diag2")  # type: ignore[arg-type]
    row = next(x for x in text.splitlines() if x.startswith("| wrist_roll | kp"))
    assert "unbounded" in row and "e+" not in row and "(x6" not in row
    assert CAVEAT in text


def test_a_stated_interval_keeps_its_bounds_and_the_limit_is_the_span() -> None:
    hw = 0.5 * np.log(UNBOUNDED_SPAN)
    inside = _design("kp", 10.0, hw * 0.99, 0.1)
    lo, hi = inside.interval("before")  # type: ignore[misc]
    assert hi / lo == pytest.approx(UNBOUNDED_SPAN**0.99)
    assert inside.unbounded("before") == ""
    assert _design("kp", 10.0, hw * 1.01, 0.1).interval("before") is None


def test_the_printed_lines_have_units_unbounded_and_the_caveat() -> None:
    nm = _motion(
        _design("kp", 705.0, 85.0, 0.004),
        _design("armature", 0.03, 0.2, 0.1, {"interval": [0.025, 0.036]}),
        _design("delay", 0.02, 0.01, 0.004),
    )
    lines = result_lines(nm)
    safety, kp, arm, delay, caveat = lines
    assert safety.startswith("SAFETY:") and "no joint by more than a degree" in safety
    assert "N m/rad" in kp and "(recording alone unbounded)" in kp and "e+" not in kp
    assert "kg m^2" in arm and "simulated and fitted: [0.025, 0.036] kg m^2" in arm
    assert "[16.0, 24.0] ms" in delay
    assert caveat == CAVEAT


def test_a_check_that_identifies_nothing_says_so_first_everywhere(tmp_path: Path) -> None:
    still = {"reason": "masked by force saturation", "local_interval": [1.0, 2.0]}
    nm = _motion(_design("kp", 1.5, 2.0, 1.9, still), _design("kv", 0.2, 2.0, 1.9, still))
    want = (
        "the check found this episode identifies 0 of 2 targets: it is written for "
        "inspection, not worth bench time"
    )
    assert check_summary(nm) == want
    assert result_lines(nm)[0] == want
    js = json.loads(atomic_write_json(tmp_path / "d.json", design_json(nm, "d")).read_text())
    assert js["check_summary"] == want
    text = readme(nm, SimpleNamespace(name="bench"), "d")  # type: ignore[arg-type]
    assert text.splitlines()[2] == "**The" + want[3:] + ".**"  # right under the title


def test_a_partial_check_names_what_stays_open_and_a_full_one_says_nothing_extra() -> None:
    ok = {"interval": [1.4, 1.6], "value": 1.5}
    still = {"reason": "too weak"}
    part = _motion(_design("kp", 1.5, 2.0, 0.1, ok), _design("kv", 0.2, 2.0, 1.9, still))
    assert check_summary(part) == (
        "the check found this episode identifies 1 of 2 targets; still not identifiable: "
        "wrist_roll kv"
    )
    assert check_summary(_motion(_design("kp", 1.5, 2.0, 0.1, ok))) == ""
    assert check_summary(_motion(_design("kp", 1.5, 2.0, 0.1))) == ""  # --no-check
    assert not result_lines(_motion(_design("kp", 1.5, 2.0, 0.1, ok)))[0].startswith("the check")


def test_the_safety_line_gives_the_swept_degrees_and_the_missing_floor() -> None:
    # steps of +-1.56 rad about 0, 0.75 s each at 30 fps, on the second joint only
    q = np.where((np.arange(90) // 22) % 2 == 0, 1.56, -1.56)
    cmd = np.stack([np.zeros(90), q], axis=1)
    nm = NextMotion(
        joints=("shoulder_pan", "shoulder_lift"),
        fps=30.0,
        commands=cmd,
        predicted_q=cmd,
        start=np.zeros(2),
        designs=(),
    )
    (bare,) = safety_lines(nm, floor=False)
    assert "shoulder_lift -89..+89 deg, steps of up to 179 deg in one frame" in bare
    assert "shoulder_pan" not in bare  # it does not move
    assert "the model has no floor or table" in bare
    (floored,) = safety_lines(nm, floor=True)
    assert "no floor" not in floored and "clear the arm's workspace" in floored


def test_the_bundled_demo_model_has_a_floor(demo_model: Path) -> None:
    from simgap.sim.floor import has_floor

    assert has_floor(demo_model)


def test_the_menagerie_arm_alone_has_no_floor_and_its_scene_has(shared_data: Path) -> None:
    from simgap.sim.floor import has_floor

    bare = shared_data / "so101" / "so101.xml"
    assert not has_floor(bare)
    assert has_floor(bare.with_name("scene.xml"))


def test_the_caveat_cites_the_figures_docs_actuator_md_measured() -> None:
    """Every figure in the caveat is in docs/actuator.md's excite section (none invented)."""
    doc = DOC.read_text(encoding="utf-8")
    section = doc[doc.index("### The next episode") :]
    for fig in re.findall(r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?", CAVEAT.split("(")[1]):
        assert fig in section, fig
    assert "0 of 17 runs" in section and "0 of 17 runs" in CAVEAT


def _findings(path: Path, figures: dict) -> Path:
    f = Finding(
        branch="actuator",
        verdict=Verdict("implicated"),
        figures=LadderFigures.from_mapping(figures),
        title="Actuator dynamics",
        summary="",
    )
    d = Diagnosis(rig="bench", findings=(f,), stop={}, comparability=None, seed=0)
    path.mkdir(parents=True, exist_ok=True)
    (path / "findings.json").write_text(json.dumps(d.to_dict()))
    return path


BENCH = {
    "noise_floor_rad": 0.001,
    "worst_ideal_mae_rad": 0.02,
    "joints": {
        "shoulder_pan": {
            "delay": {"total_s": 0.01},
            "selected": "pd",
            "ideal_mae_rad": 0.02,
            "selected_mae_rad": 0.004,
            "params": {"kp": 12.0},
        }
    },
}


def test_a_bench_log_diagnosis_names_actuator_logs_and_the_fix(tmp_path: Path) -> None:
    d = _findings(tmp_path / "demo", BENCH)
    with pytest.raises(InputError) as e:
        estimate_from_diagnosis(d)
    msg = str(e.value)
    assert "actuator_logs" in msg and "without [evidence] actuator_logs" in msg
    res = runner.invoke(app, ["excite", "--for", str(d)])
    assert res.exit_code == 2 and "actuator_logs" in res.output


def test_a_missing_diagnosis_folder_asks_for_the_folder(tmp_path: Path) -> None:
    res = runner.invoke(app, ["excite", "--for", str(tmp_path / "nowhere")])
    assert res.exit_code == 2
    out = " ".join(res.output.split())
    assert "--for" in out and "no such folder" in out and "DIR/findings.json" not in out


def test_an_unknown_param_names_the_option_as_typed() -> None:
    est = Estimate(rig="r", params={}, delay_s={}, clock="exact", targets=(("a", "armature", ""),))
    with pytest.raises(InputError) as e:
        est.only(["bogus"])
    assert "'--param'" in str(e.value) and "--parameter" not in str(e.value)
    with pytest.raises(InputError, match="'--joint'"):
        est.only(joints=["nope"])


def test_excite_help_states_the_defaults_and_the_out_file() -> None:
    res = runner.invoke(app, ["excite", "--help"], env={"COLUMNS": "200"})
    out = " ".join(res.output.replace("│", " ").split())
    assert "default: 10.0" not in out
    assert "(default 10), with --for of each joint's designed motion (default 6)" in out
    assert "still one CSV file" in out and "or a folder for a LeRobot" not in out


def test_selftest_says_why_a_bench_log_diagnosis_states_nothing() -> None:
    from simgap.selftest.run import real_beside

    rows = [SimpleNamespace(family="kp", joints=("shoulder_pan",))]
    real = {"findings": [{"branch": "actuator", "kind": "ladder", "figures": BENCH}]}
    side = real_beside(real, rows)  # type: ignore[arg-type]
    assert "evidence.actuator_logs" in side["kp"]["shoulder_pan"]
    assert side["kp"]["shoulder_pan"].startswith("not stated")
