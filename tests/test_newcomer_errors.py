"""What a new user tripped on (a second trial: a Menagerie SO-101 bench with a planted delay
and kp): errors that name the input they came from, say what came (a folder where a file is
expected, and the reverse) and give a fix that is not the problem restated; the actuator
headline that compares one joint's residual with its own floor and states the delay."""

from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.servo_csv import read_servo_csv
from simgap.rig import load_rig
from tests.factories import write_rig


def _csv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _sine_rows(cells: int = 2) -> list[str]:
    t = np.arange(0, 2, 0.01)
    return [",".join([f"{a:.3f}"] + [f"{np.sin(a):.5f}"] * cells) for a in t]


def test_misspelt_csv_joint_names_the_csv_and_its_column(tmp_path: Path, demo_model: Path) -> None:
    rig_path = write_rig(tmp_path / "rig", demo_model)
    rig = load_rig(rig_path)
    bad = _csv(tmp_path / "misspelt.csv", "t,cmd_elbow_flx,q_elbow_flx", _sine_rows())
    with pytest.raises(NameNotFoundError) as e:
        read_servo_csv(bad, rig)
    msg = str(e.value)
    assert msg.startswith(f"{bad}: field 'cmd_elbow_flx'")
    assert "elbow_flex" in msg.split("Fix:")[1]
    assert e.value.file == str(bad)
    # the rig is named only as the other place to fix, never as where the name came from
    assert (
        str(rig_path) in msg.split("Fix:")[1]
        and str(rig_path) not in msg.split("Fix:", maxsplit=1)[0]
    )


def test_a_rig_joint_lookup_without_a_source_still_names_the_rig(
    tmp_path: Path, demo_model: Path
) -> None:
    rig_path = write_rig(tmp_path / "rig", demo_model)
    with pytest.raises(NameNotFoundError) as e:
        load_rig(rig_path).joint("elbow")
    assert e.value.file == str(rig_path) and e.value.field is None


def test_a_dataset_file_given_for_its_folder_is_named_not_doubled(tmp_path: Path) -> None:
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig.init.dataset import read_info

    info = tmp_path / "ds" / "meta" / "info.json"
    info.parent.mkdir(parents=True)
    info.write_text("{}")
    for read in (read_lerobot_dataset, read_info):
        with pytest.raises(InputError) as e:
            read(info)
        assert e.value.file == str(info)  # not .../info.json/meta/info.json
        assert e.value.got == "a file, not a folder"
        assert str(tmp_path / "ds") in str(e.value.fix)  # the root to pass instead
    with pytest.raises(InputError) as e:
        read_lerobot_dataset(tmp_path / "nothing")
    assert e.value.got == "no such folder"


def test_a_model_folder_lists_the_mjcf_files_in_it(tmp_path: Path) -> None:
    from simgap.sim.model import load_model

    (tmp_path / "arm.xml").write_text("<mujoco/>")
    with pytest.raises(InputError) as e:
        load_model(tmp_path)
    assert e.value.got == "a folder, not a file" and "arm.xml" in str(e.value.fix)
    with pytest.raises(InputError) as e:
        load_model(tmp_path / "gone.xml")
    assert e.value.got == "no such file"


def test_log_readers_given_a_folder_say_so(tmp_path: Path) -> None:
    from simgap.evidence.timing import read_latency_files
    from simgap.evidence.trace import read_trace

    (tmp_path / "timing.jsonl").write_text("")
    with pytest.raises(InputError) as e:
        read_trace(tmp_path)
    assert e.value.got == "a folder, not a file"
    with pytest.raises(InputError) as e:
        read_latency_files([tmp_path])
    assert e.value.got == "a folder, not a file" and "timing.jsonl" in str(e.value.fix)


def test_randomize_on_a_diagnosis_folder_points_at_its_findings(tmp_path: Path) -> None:
    from simgap.fleet.randomize import load_fleet_spec

    (tmp_path / "findings.json").write_text("{}")
    with pytest.raises(InputError) as e:
        load_fleet_spec(tmp_path)
    assert str(tmp_path / "findings.json") in str(e.value.fix)
    with pytest.raises(InputError) as e:
        load_fleet_spec(tmp_path / "elsewhere")
    assert "simgap fleet" in str(e.value.fix)


def _joint_dynamics(**figures: object) -> dict[str, object]:
    base = {
        "identified_rms_rad": {"elbow_flex": 0.004, "wrist_roll": 0.00657},
        "nominal_rms_rad": {"elbow_flex": 0.05, "wrist_roll": 0.09},
        "noise_floor_rad": {
            "elbow_flex": {"total_rad": 0.00434},
            "wrist_roll": {"total_rad": 0.00382},
        },
        "shared_delay_s": 0.045,
        "shared_delay_interval_s": [0.033, 0.054],
    }
    return {
        "branch": "actuator",
        "kind": "joint_dynamics",
        "figures": {**base, **figures},
        "residual": 0.00657,
        "noise_floor": 0.00434,
        "residual_unit": "rad",
    }


def test_the_joint_dynamics_headline_holds_a_joint_against_its_own_floor() -> None:
    from simgap.report.headline import key_line

    line = key_line(_joint_dynamics())
    assert line.text == (
        "wrist_roll: residual 6.57 mrad against its floor 3.82 mrad, from 90.0 mrad on "
        "the rig's model; delay 45.0 ms [33.0, 54.0]"
    )
    assert (line.value, line.threshold) == pytest.approx((6.57, 3.82))
    # the rig's model's worst joint (the key figure) is named where it is another joint;
    # no delay is stated where the data leave it without an interval
    other = key_line(
        _joint_dynamics(
            nominal_rms_rad={"elbow_flex": 0.1, "wrist_roll": 0.09}, shared_delay_interval_s=None
        )
    )
    assert other.text == (
        "wrist_roll: residual 6.57 mrad against its floor 3.82 mrad, from 90.0 mrad on "
        "the rig's model (worst there: elbow_flex, 100 mrad)"
    )


def test_a_plain_number_residual_prints_no_unit() -> None:
    from simgap.report.headline import key_line

    line = key_line(
        {"branch": "x", "residual": 0.02107, "noise_floor": 0.001179, "residual_unit": "1"}
    )
    assert line.text == "residual 0.0211 against the noise floor 0.00118"
    rad = key_line({"branch": "x", "residual": 0.02, "noise_floor": 0.001, "residual_unit": "rad"})
    assert rad.text == "residual 0.0200 rad against the noise floor 0.00100 rad"


def _required_options(argv: list[str]) -> tuple[set[str], bool]:
    """(the options ``simgap ARGV --help`` marks ``[required]``, whether its usage line
    names an argument)."""
    import re

    from typer.testing import CliRunner

    from simgap.cli import app

    res = CliRunner().invoke(app, [*argv, "--help"], terminal_width=100)
    assert res.exit_code == 0, res.output
    options = res.output.split("Options:", 1)[-1]
    blocks = re.split(r"\n(?=  --)", options)
    usage = res.output.split("[OPTIONS]", 1)[-1].splitlines()[0]
    required = {b.split()[0] for b in blocks if "[required]" in b and b.strip().startswith("--")}
    return required, any(w.strip("[].").isupper() for w in usage.split())


def test_every_readme_synopsis_shows_the_options_its_command_requires() -> None:
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    groups = {"calibration", "contact", "maniskill"}
    checked = 0
    for synopsis in set(re.findall(r"`simgap ([a-z][^`]*)`", readme)):
        words = synopsis.replace("\\|", "|").split()
        argv = words[:2] if words[0] in groups and "|" not in words[1] else words[:1]
        if words[0] in groups and len(argv) == 1:
            continue  # the group's subcommands named together
        required, positional = _required_options(argv)
        if positional and (len(words) == len(argv) or words[len(argv)].startswith("--")):
            continue  # an option named in prose (`simgap init --calibration FILE`)
        missing = required - set(words)
        assert not missing, f"README's `simgap {synopsis}` leaves out {sorted(missing)}"
        checked += 1
    assert checked >= 25
    assert "--model" in _required_options(["init"])[0]  # init's own error names the model


def test_cma_es_leaks_no_matplotlib_warning_to_stderr() -> None:
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from simgap.fit.cma_es import minimize\n"
        "minimize([2], lambda xs: [np.array([float(np.sum(x**2)) for x in xs[0]])], seed=0)\n"
    )
    src = Path(__file__).resolve().parents[1] / "src"
    res = subprocess.run(
        [sys.executable, "-W", "default", "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert "matplotlib" not in res.stderr, res.stderr


def test_the_demo_refuses_a_non_empty_out_before_recording_its_bench(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from simgap.cli import app

    out, cache = tmp_path / "out", tmp_path / "cache"
    out.mkdir()
    (out / "kept.txt").write_text("mine")
    res = CliRunner().invoke(app, ["demo", "--out", str(out), "--cache", str(cache)])
    assert res.exit_code == 2 and "--force" in res.output
    assert not cache.exists() or not any(cache.rglob("*.toml"))  # no bench was recorded
    assert (out / "kept.txt").read_text() == "mine"


def _fix(e: pytest.ExceptionInfo[InputError]) -> str:
    return str(e.value).split("Fix: ", 1)[1]


def test_a_missing_measured_column_says_which_column_to_add(tmp_path: Path) -> None:
    bad = _csv(tmp_path / "missingcol.csv", "t,cmd_elbow_flex", _sine_rows(1))
    with pytest.raises(InputError) as e:
        read_servo_csv(bad)
    assert not _fix(e).startswith("make ")  # not the problem restated
    assert "add the column q_elbow_flex" in _fix(e)


def test_a_bad_cell_is_named_once_quoted_with_a_fix(tmp_path: Path) -> None:
    rows = _sine_rows()
    rows[0] = "0.000,,0.1"
    bad = _csv(tmp_path / "cell.csv", "t,cmd_elbow_flex,q_elbow_flex", rows[:1] + ["0.01,x,1"])
    with pytest.raises(InputError) as e:
        read_servo_csv(bad)
    msg = str(e.value)
    assert "row 3, column 'cmd_elbow_flex'" in msg and "''" not in msg
    assert "field 'row" not in msg and "delete row 3" in _fix(e)
    # the generic fix quotes such a place once too
    generic = InputError(file="a.csv", field="row 2, column 'q'", expected="a number")
    assert str(generic).endswith("Fix: make row 2, column 'q' of a.csv a number")
    assert "field 'speed'" in str(InputError(field="speed", expected="a number"))


def test_an_empty_trace_says_how_to_record_one(tmp_path: Path) -> None:
    from simgap.evidence.trace import read_trace

    empty = tmp_path / "empty_trace.jsonl"
    empty.write_text("")
    with pytest.raises(InputError) as e:
        read_trace(empty)
    assert not _fix(e).startswith("make ") and "simgap fake-arm" in _fix(e)


def test_an_empty_csv_cell_is_named_by_its_column_and_row(tmp_path: Path) -> None:
    rows = _sine_rows()
    rows[1] = "0.010,,0.1"
    with pytest.raises(InputError) as e:
        read_servo_csv(_csv(tmp_path / "gap.csv", "t,cmd_elbow_flex,q_elbow_flex", rows))
    assert e.value.field == "column 'cmd_elbow_flex'" and "row 3" in str(e.value.got)
