"""Hardening: traversal and injection through input names, outputs onto inputs, the atomic
output folder (kill mid-run, two concurrent runs), umask, unit checks, special files, the
checkpoint probe, and the last line of defence (exit 3)."""

from __future__ import annotations

import ast
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.cli._app import BUG_EXIT, handles_errors
from simgap.errors import InputError, OutputExistsError
from simgap.outputs import atomic_write_text, folder_lock, guard_inputs, note_input, output_folder
from simgap.safe_names import py_comment, safe_filename, xml_comment
from simgap.validate import check_input_file, control_period, period_warnings

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]


def _bam(path: Path, motor: str, n: int = 500) -> Path:
    from tests.bam_synth import write_sine_log

    return write_sine_log(path, motor, n)


def _timing(path: Path, n: int = 40, dt: float = 0.0667) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "episode": 0,
                    "step": i,
                    "t": i * dt,
                    "stages": {"inference": 0.02, "camera": 0.01},
                }
            )
            + "\n"
            for i in range(n)
        )
    )
    return path


# ----------------------------------------------------------------- names from input files


def test_safe_filename_stays_in_its_folder_and_keeps_names_apart() -> None:
    for hostile in ("x/../../../../ESCAPED_bam", "..", "/etc/passwd", "a\nb", "", "."):
        name = safe_filename(hostile, ".json", "bam_params_")
        assert "/" not in name and "\n" not in name and not name.startswith(".")
        assert Path(name).name == name
    assert safe_filename("a/b") != safe_filename("a_b")  # the hash keeps them apart


def test_hostile_comment_text_cannot_add_lines() -> None:
    src = f"# fit of {py_comment('j' + chr(10) + 'import os')}\nX = 1\n"
    tree = ast.parse(src)
    assert [type(n).__name__ for n in tree.body] == ["Assign"]
    assert "--" not in xml_comment("a --> <evil/> <!--")


def test_bam_motor_with_traversal_and_newline_writes_inside_out_and_no_code(tmp_path: Path) -> None:
    work = tmp_path / "a" / "b" / "c" / "d"
    work.mkdir(parents=True)
    motor = "x/../../../../ESCAPED_bam\nimport os; os.system('touch PWNED')"
    logs = [str(_bam(work / f"{i}.json", motor, 500 + 40 * i)) for i in range(2)]
    out = work / "out"
    res = runner.invoke(
        app,
        [
            "actuator",
            *logs,
            "--format",
            "bam",
            "--no-net",
            "--json",
            str(work / "r.json"),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert not list(tmp_path.rglob("ESCAPED_bam*")), "a file was written outside --out"
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written and all(out in p.parents for p in written)
    code = (out / "isaaclab_actuators.py").read_text()
    tree = ast.parse(code)
    kinds = {type(n).__name__ for n in tree.body}
    assert kinds <= {"ImportFrom", "Assign"}, kinds  # no `import os`, no call statement
    assert all(n.module.startswith("isaaclab") for n in tree.body if isinstance(n, ast.ImportFrom))
    d = json.loads((work / "r.json").read_text())  # paths relative to its folder
    assert all(
        (work / p).is_file() and out.resolve() in (work / p).resolve().parents
        for p in d["artifacts"].values()
    )


def test_csv_header_with_a_newline_is_refused_not_run(tmp_path: Path) -> None:
    t = np.arange(0, 3, 0.01)
    rows = "\n".join(f"{x},{np.sin(x)},{np.sin(x - 0.05)}" for x in t)
    f = tmp_path / "a.csv"
    f.write_text('t,"cmd_j\nimport os","q_j\nimport os"\n' + rows + "\n")
    res = runner.invoke(
        app,
        [
            "actuator",
            str(f),
            "--format",
            "csv",
            "--no-net",
            "--json",
            str(tmp_path / "r.json"),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert res.exit_code == 2, res.output
    assert "newline" in res.output
    assert not (tmp_path / "o").exists()


# ----------------------------------------------------------------- outputs onto inputs


def test_json_onto_the_input_is_refused_and_the_input_kept(tmp_path: Path) -> None:
    log = _timing(tmp_path / "timing.jsonl")
    before = log.read_bytes()
    res = runner.invoke(app, ["latency", str(log), "--control-dt", "0.0667", "--json", str(log)])
    assert res.exit_code == 2, res.output
    assert "is an input" in res.output
    assert log.read_bytes() == before


def test_compare_json_onto_a_manifest_is_refused(tmp_path: Path) -> None:
    m = tmp_path / "real.toml"
    m.write_text(
        '[policy]\ncheckpoint = "p"\nsha256 = "' + "0" * 64 + '"\n[environment]\n'
        'kind = "real"\n[success]\npredicate = "p"\n[outcomes]\nsuccesses = 3\n'
        "trials = 10\n"
    )
    before = m.read_bytes()
    res = runner.invoke(app, ["compare", str(m), str(m), "--json", str(m)])
    assert res.exit_code == 2, res.output
    assert m.read_bytes() == before


def test_out_folder_holding_an_input_is_refused(tmp_path: Path) -> None:
    with guard_inputs():
        note_input(tmp_path / "rig" / "findings.json")
        with pytest.raises(InputError, match="holds the input"):
            with output_folder(tmp_path / "rig", force=True):
                pass
        with pytest.raises(InputError, match="lies inside"):
            atomic_write_text(tmp_path / "rig" / "findings.json" / "x", "x")


# ----------------------------------------------------------------- atomic folder and lock


def test_output_folder_replaces_the_old_one_only_at_the_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(OutputExistsError):
        with output_folder(out):
            pass
    with pytest.raises(RuntimeError):
        with output_folder(out, force=True) as tmp:
            (tmp / "new.txt").write_text("new")
            raise RuntimeError("a failure half way")
    assert sorted(p.name for p in out.iterdir()) == ["old.txt"]
    with output_folder(out, force=True) as tmp:
        (tmp / "new.txt").write_text("new")
        assert (out / "old.txt").is_file()  # the old folder stays until the end
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.") and p.is_dir()]


def test_force_never_replaces_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out . --force`` (a new user's try) would replace the folder the user stands in;
    it is refused up front, and a relative new folder is built beside itself, not in '.'."""
    here = tmp_path / "work"
    (here / "sub").mkdir(parents=True)
    (here / "notes.txt").write_text("mine")
    monkeypatch.chdir(here / "sub")
    (here / "sub" / "keep.txt").write_text("mine")
    for target in (".", "..", str(here)):
        with pytest.raises(InputError, match="current folder"):
            with output_folder(target, force=True):
                pass
    assert (here / "notes.txt").read_text() == "mine"
    assert (here / "sub" / "keep.txt").read_text() == "mine"
    with output_folder("new", force=True) as tmp:
        assert tmp.parent == here / "sub"
        (tmp / "x.txt").write_text("x")
    assert (here / "sub" / "new" / "x.txt").is_file()
    res = runner.invoke(app, ["demo", "--out", ".", "--force"])
    assert res.exit_code == 2 and "current folder" in res.output, res.output


def test_second_concurrent_run_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with folder_lock(out):
        with pytest.raises(OutputExistsError, match="another simgap run"):
            with output_folder(out):
                pass
        # the same through the CLI: exit 2, nothing written
        logs = [str(_bam(tmp_path / "a.json", "m"))]
        res = runner.invoke(
            app,
            [
                "actuator",
                *logs,
                "--format",
                "bam",
                "--no-net",
                "--json",
                str(tmp_path / "r.json"),
                "--out",
                str(out),
            ],
        )
        assert res.exit_code == 2, res.output
        assert "another simgap run" in res.output
    assert not out.exists()


_KILL_SCRIPT = """
import signal, sys, time
from pathlib import Path
from simgap.outputs import output_folder
# a shell without job control starts background commands with SIGINT ignored, and Python
# then installs no KeyboardInterrupt handler: restore what an interactive run has
signal.signal(signal.SIGINT, signal.default_int_handler)
with output_folder(Path(sys.argv[1]), force=True) as tmp:
    for i in range(1000):
        (tmp / f"artifact_{i}.txt").write_text("x")
        if i == 5:
            print("writing", flush=True)
        time.sleep(0.01)
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.parametrize("old", [True, False])
def test_kill_mid_run_leaves_the_old_folder_or_nothing(tmp_path: Path, sig: int, old: bool) -> None:
    out = tmp_path / "out"
    if old:
        out.mkdir()
        (out / "findings.json").write_text("{}")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"
    proc.send_signal(sig)
    proc.wait(timeout=30)
    if old:
        assert sorted(p.name for p in out.iterdir()) == ["findings.json"]
    else:
        assert not out.exists()
    # the next run cleans what the killed one left and completes
    with output_folder(out, force=True) as tmp:
        (tmp / "findings.json").write_text("{}")
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [] and (out / "findings.json").is_file()


def test_actuator_out_refuses_a_non_empty_folder_without_force(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    logs = [str(_bam(tmp_path / "a.json", "m"))]
    res = runner.invoke(
        app,
        [
            "actuator",
            *logs,
            "--format",
            "bam",
            "--no-net",
            "--json",
            str(tmp_path / "r.json"),
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 2, res.output
    assert (out / "keep.txt").read_text() == "mine"


# ----------------------------------------------------------------- modes follow the umask


@pytest.mark.parametrize(
    "mask,file_mode,dir_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700), (0o002, 0o664, 0o775)]
)
def test_outputs_follow_the_umask(tmp_path: Path, mask: int, file_mode: int, dir_mode: int) -> None:
    old = os.umask(mask)
    try:
        f = atomic_write_text(tmp_path / "a.json", "{}")
        with output_folder(tmp_path / "out") as tmp:
            (tmp / "x").mkdir()
            atomic_write_text(tmp / "x" / "b.txt", "b")
    finally:
        os.umask(old)
    assert f.stat().st_mode & 0o777 == file_mode
    assert (tmp_path / "out" / "x" / "b.txt").stat().st_mode & 0o777 == file_mode
    assert (tmp_path / "out").stat().st_mode & 0o777 == dir_mode


# ----------------------------------------------------------------- units and special files


def test_control_period_in_milliseconds_is_refused_with_the_value_in_seconds() -> None:
    with pytest.raises(InputError, match="33 looks like milliseconds: pass 0.033"):
        control_period(33)
    with pytest.raises(InputError, match="pass 0.0667"):
        control_period(66.7)
    with pytest.raises(InputError):
        control_period(0.0001)
    for bad in (float("nan"), float("inf"), -0.033, True, "0.033"):
        with pytest.raises(InputError):
            control_period(bad)
    assert control_period(0.033) == 0.033


def test_cli_control_dt_33_is_refused(tmp_path: Path) -> None:
    res = runner.invoke(app, ["latency", str(_timing(tmp_path / "t.jsonl")), "--control-dt", "33"])
    assert res.exit_code == 2
    assert "33 looks like milliseconds: pass 0.033" in " ".join(res.output.split())


def test_period_disagreeing_with_ticks_and_fps_is_a_named_warning(tmp_path: Path) -> None:
    t = np.arange(50) * 0.1
    assert period_warnings(0.0667, tick_times_s=t)[0].startswith("control_period_mismatch")
    assert period_warnings(0.1, tick_times_s=t) == []
    assert period_warnings(0.0667, dataset_fps=30)[0].startswith("control_period_mismatch")
    assert period_warnings(1 / 30, dataset_fps=30) == []
    out = tmp_path / "o.json"
    res = runner.invoke(
        app,
        [
            "latency",
            str(_timing(tmp_path / "t.jsonl", dt=0.1)),
            "--control-dt",
            "0.0667",
            "--json",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    warns = json.loads(out.read_text())["details"]["warnings"]
    assert any(w.startswith("control_period_mismatch") for w in warns)


@pytest.mark.parametrize(
    "value,field",
    [
        ("obs_noise_std_rad = -1", "obs_noise_std_rad"),
        ("obs_noise_std_rad = nan", "obs_noise_std_rad"),
        ("workspace_x_m = [-inf, inf]", "workspace_x_m"),
    ],
)
def test_rig_values_out_of_range_are_refused(
    tmp_path: Path, demo_model: Path, value: str, field: str
) -> None:
    from simgap.rig import load_rig
    from tests.factories import write_rig

    rig = write_rig(tmp_path, demo_model, f"[training]\n{value}\n")
    with pytest.raises(InputError, match=field):
        load_rig(rig)


def test_fifo_and_folder_are_refused_before_opening(tmp_path: Path) -> None:
    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    signal.alarm(30)  # a reader that opens the FIFO would block forever
    try:
        res = runner.invoke(app, ["latency", str(fifo), "--control-dt", "0.0667"])
    finally:
        signal.alarm(0)
    assert res.exit_code == 2 and "FIFO" in res.output
    with pytest.raises(InputError, match="a folder"):
        check_input_file(tmp_path)
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="symlink loop"):
        check_input_file(loop)


# ----------------------------------------------------------------- checkpoint probe


class _Evil:
    def __reduce__(self):  # what a malicious checkpoint does on an unsafe load
        return (os.system, ("touch PWNED_BY_PICKLE",))


def test_checkpoint_probe_names_unsafe_pickles_and_non_checkpoints(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from simgap.evidence.trace import probe_checkpoint
    from simgap.plumbing.setup import check_checkpoint

    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps(_Evil(), protocol=2))
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        pe, pt = probe_checkpoint(evil), probe_checkpoint(text)
    finally:
        os.chdir(cwd)
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()
    assert pe.kind == "unsafe_pickle" and pt.kind == "not_a_checkpoint"
    fe, ft = check_checkpoint(pe), check_checkpoint(pt)
    assert fe is not None and ft is not None
    assert "unsafe" in fe.title.lower() and "not a checkpoint" in ft.title.lower()
    for f in (fe, ft):
        assert "GPU" not in f.title and "map_location" not in f.next_step
    assert "Do not load it with weights_only=False" in fe.next_step


# ----------------------------------------------------------------- last line of defence


def test_an_unexpected_exception_is_exit_3_with_a_short_message(capsys) -> None:
    @handles_errors
    def boom() -> None:
        raise ZeroDivisionError("x")

    import typer

    with pytest.raises(typer.Exit) as e:
        boom()
    assert e.value.exit_code == BUG_EXIT
    err = capsys.readouterr().err
    assert "bug in simgap" in err and "Traceback" not in err


def test_a_crash_names_the_simgap_line_and_the_files_to_report_with(capsys, tmp_path: Path) -> None:
    """The crash is placed at the innermost simgap frame (outputs.py's json.dumps), not in
    the standard library's json encoder it called, and the message names the files the
    command read, which the report should carry."""
    from simgap.outputs import atomic_write_json, note_input

    rig = tmp_path / "rig.toml"
    rig.write_text("")

    @handles_errors
    def boom() -> None:
        note_input(rig)
        atomic_write_json(tmp_path / "x.json", {"a": float("inf")})

    import typer

    with pytest.raises(typer.Exit) as e:
        boom()
    assert e.value.exit_code == BUG_EXIT
    err = " ".join(capsys.readouterr().err.split())
    assert "(at simgap/outputs.py:" in err, err
    assert "encoder.py" not in err and "with this file" not in err
    assert f"the files it read: {rig.resolve()}" in err, err


@pytest.mark.parametrize(
    ("command", "resumes"), [("selftest", True), ("fleet", True), ("diagnose", False)]
)
def test_the_interrupt_message_is_true_of_each_command(capsys, command: str, resumes: bool) -> None:
    """selftest and fleet keep their finished trials and arms to resume; the others remove
    the half-built folder. Each says which."""
    import typer

    def stopped() -> None:
        raise KeyboardInterrupt

    stopped.__name__ = command
    with pytest.raises(typer.Exit) as e:
        handles_errors(stopped)()
    assert e.value.exit_code == 130
    err = " ".join(capsys.readouterr().err.split())
    assert ("rerun the same command to resume" in err) is resumes, err
    assert ("half-built output folder is removed" in err) is not resumes, err


@pytest.mark.parametrize(
    ("option", "name", "expected"),
    [
        ("--rerun", "x.mcap", "a file name ending in .rrd"),
        ("--mcap", "x.rrd", "a file name ending in .mcap"),
        ("--rerun", "views", "a .rrd file to write"),
        ("--mcap", "views", "a .mcap file to write"),
    ],
)
def test_a_view_file_that_is_a_folder_or_the_other_format_is_refused_before_the_run(
    tmp_path: Path, demo_model: Path, option: str, name: str, expected: str
) -> None:
    """--rerun x.mcap, --mcap x.rrd and an existing folder are one InputError naming the
    option, before the diagnosis runs (they were: accepted silently, or 'Is a directory'
    on a temporary file after it)."""
    (tmp_path / "views").mkdir()
    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'name = "t"\n[model]\npath = "{demo_model}"\n[control]\ndt_s = 0.03\n'
        "[joints.shoulder_pan]\n"
    )
    res = runner.invoke(
        app, ["diagnose", str(rig), "--out", str(tmp_path / "out"), option, str(tmp_path / name)]
    )
    text = " ".join(res.output.split())
    assert res.exit_code == 2, text
    assert f"field '{option}': expected {expected}" in text and "Fix:" in text, text
    assert not (tmp_path / "out").exists()  # nothing was diagnosed
    (tmp_path / "out").mkdir()  # and view says the same before reading the diagnosis
    res = runner.invoke(
        app, ["view", str(tmp_path / "out"), "--rig", str(rig), option, str(tmp_path / name)]
    )
    assert res.exit_code == 2 and f"field '{option}'" in res.output, res.output


def test_demo_cache_is_built_once_under_a_lock(tmp_path: Path) -> None:
    from simgap.demo import demo_cache_dir

    folder = demo_cache_dir(tmp_path, 0)
    folder.parent.mkdir(parents=True, exist_ok=True)
    with folder_lock(folder):
        t0 = time.monotonic()
        with pytest.raises(OutputExistsError):
            with folder_lock(folder):
                pass
        assert time.monotonic() - t0 < 5


def test_contact_lint_flags_negative_friction(tmp_path: Path) -> None:
    model = tmp_path / "m.xml"
    model.write_text(
        '<mujoco><worldbody><body><freejoint/><geom type="box" size=".1 .1 .1" '
        'friction="0.8 -0.01 0.0001"/></body></worldbody></mujoco>'
    )
    out = tmp_path / "lint.json"
    res = runner.invoke(app, ["contact", "lint", str(model), "--json", str(out)])
    assert res.exit_code == 0, res.output
    problems = [p["problem"] for p in json.loads(out.read_text())["problems"]]
    assert any("negative or non-finite friction" in p for p in problems), problems


def test_every_input_error_carries_a_fix(tmp_path: Path) -> None:
    """A raise site that names no fix still tells the user what to change (a new user met
    several errors without one); a BAM log read as CSV points at --format bam."""
    e = InputError(file="log.json", field="entries[0].position", expected="a number", got="'abc'")
    assert str(e).endswith("Fix: make field 'entries[0].position' of log.json a number")
    assert "Fix: check the path" in str(
        InputError(file="x.csv", expected="a CSV", got="no such file")
    )
    assert "Fix: go" in str(InputError(expected="x", fix="go"))
    log = tmp_path / "bam.json"
    log.write_text('{"entries": []}')
    res = runner.invoke(
        app,
        [
            "actuator",
            str(log),
            str(log.with_name("b.json")),
            "--format",
            "csv",
            "--json",
            str(tmp_path / "o.json"),
        ],
    )
    assert res.exit_code == 2 and "--format bam" in res.output, res.output


def test_a_typo_in_a_recorded_name_points_at_the_rig(tmp_path: Path, demo_model: Path) -> None:
    """A misspelt ``joints.<j>.recorded`` is the rig's fault, and the fix says where."""
    from simgap.evidence.episodes_io import read_episodes
    from simgap.evidence.lerobot import joint_columns, read_lerobot_dataset
    from simgap.rig import load_rig
    from tests.factories import write_rig, write_v3_dataset

    ep = {"action": np.zeros((10, 6)), "observation.state": np.zeros((10, 6))}
    ds_root = write_v3_dataset(tmp_path / "ds", [ep])
    rig_path = write_rig(tmp_path / "rig", demo_model)
    text = rig_path.read_text()
    bad = tmp_path / "bad" / "rig.toml"
    bad.parent.mkdir()
    bad.write_text(text.replace('"elbow_flex.pos"', '"elbow_flex.poz"'))
    with pytest.raises(InputError, match=r"joints\.elbow_flex\.recorded of .*bad/rig\.toml"):
        joint_columns(read_lerobot_dataset(ds_root), "action", load_rig(bad))
    bad.write_text(text.replace('"gripper.pos"', '"gripper.poz"'))
    with pytest.raises(InputError, match=r"set joints\.gripper\.recorded in .*bad/rig\.toml"):
        read_episodes(ds_root, load_rig(bad))


def test_sigterm_mid_fit_removes_the_half_written_output(tmp_path: Path) -> None:
    """A scheduler's stop (SIGTERM) goes through the same cleanup as Ctrl-C: no output
    folder and no temporary sibling are left, exit status 143 (a new user's trial found a
    .tmp folder left beside --out)."""
    import time

    raw = ROOT.parent / "shared" / "data" / "bam_xl330" / "raw"
    logs = sorted(raw.glob("*.json"))[:4]
    if len(logs) < 4:
        pytest.skip(f"the shared XL330 logs are absent ({raw})")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simgap",
            "actuator",
            *map(str, logs),
            "--format",
            "bam",
            "--no-net",
            "--json",
            str(tmp_path / "a.json"),
            "--out",
            str(out),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        p.name.endswith(".tmp") for p in tmp_path.iterdir()
    ):
        time.sleep(0.05)
    assert proc.poll() is None, "the fit ended before it could be stopped"
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    assert not out.exists() and not (tmp_path / "a.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_fuzz_finds_stay_fixed(tmp_path: Path) -> None:
    """Three internal errors the long fuzz profile found, each now an InputError naming the
    file and line (or, for a findings figure simgap never writes, a figure not measured)."""
    from simgap.errors import InputError
    from simgap.evidence.lerobot_logs import read_lerobot_log
    from simgap.evidence.trace import read_trace
    from simgap.figures.base import finite
    from tests.lerobot_log_lines import client_log

    log = client_log(tmp_path / "robot_client_1.log", [5, 4, 0] * 4, [66.0] * 12)
    text = log.read_text().splitlines()
    text[3] = text[3].replace(text[3].split()[1], "2025-11-00", 1)  # day 0: no such date
    log.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match="line 4: time stamp"):
        read_lerobot_log(log)
    trace = tmp_path / "trace.jsonl"
    trace.write_text(
        '{"t": 0.0, "tick": 0, "episode": 0, "events": 7}\n{"t": 0.1, "tick": 1, "episode": 0}\n'
    )
    with pytest.raises(InputError, match="events"):
        read_trace(trace)
    for key, bad in (("reads", "-1"), ("writes", '"x"'), ("units", "3")):
        trace.write_text(f'{{"t": 0.0, "tick": 0, "episode": 0, "{key}": {bad}}}\n')
        with pytest.raises(InputError, match=f"line 1: {key}"):
            read_trace(trace)
    # randomize reads figures through their records, a NaN figure as not measured
    assert finite(float("nan")) is None
    assert finite(0.033) == 0.033
