"""A fleet never removes a file it did not write (issue 33): the input guard travels with
the work to every worker, every input of every rig is protected from every arm's folder,
and an unsafe --out is refused before any work. A stopped or killed fleet stops its
workers and leaves fleet.json consistent with the arms' folders. The resume digest covers
the model's whole closure, framed, with simgap's version."""

from __future__ import annotations

import contextvars
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.demo.timing import write_timing_log
from simgap.fleet import closure
from simgap.fleet.jobs import plan, rig_digest
from simgap.fleet.run import run_fleet
from simgap.fleet.worker import diagnose_one
from tests.factories import write_rig

runner = CliRunner()


def _rig(
    folder: Path,
    name: str,
    seed: int = 0,
    *,
    timing: Path | None = None,
    episodes: int = 4,
    steps: int = 30,
) -> Path:
    """A latency-only rig named ``name`` in ``folder`` (its timing log beside it, or at
    ``timing``)."""
    timing = timing or folder / "timing.jsonl"
    write_timing_log(timing, seed=seed, n_episodes=episodes, steps=steps)
    rel = os.path.relpath(timing, folder)
    rig = write_rig(folder, "m.xml", f'[evidence]\ntiming_logs = ["{rel}"]\n')
    rig.write_text(rig.read_text().replace('name = "test-so101"', f'name = "{name}"'))
    return rig


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _natural_layout(tmp_path: Path) -> tuple[Path, list[Path]]:
    """``F/armA/rig.toml``, ``F/armB/rig.toml``, each rig named after its folder, with
    an unrelated NOTES.txt: the layout of ``simgap fleet rigs/*/rig.toml --out rigs``."""
    f = tmp_path / "F"
    rigs = [_rig(f / n, n, i) for i, n in enumerate(("armA", "armB"))]
    (f / "armA" / "NOTES.txt").write_text("my notes\n")
    return f, rigs


def test_fleet_out_holding_the_rigs_is_refused_on_worker_processes(tmp_path: Path) -> None:
    """The reproduction: with two worker processes the old code wiped both rig folders."""
    f, rigs = _natural_layout(tmp_path)
    before = _snapshot(f)
    r = runner.invoke(app, ["fleet", *map(str, rigs), "--out", str(f), "--jobs", "2"])
    assert r.exit_code == 2, r.output
    assert _snapshot(f) == before  # nothing removed, nothing written
    msg = " ".join(r.stderr.split())
    assert "armA" in msg and "rig.toml" in msg and "--out" in msg
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_evidence_inside_another_arms_folder_is_refused(tmp_path: Path) -> None:
    """Arm A's evidence lives in the folder arm B's findings would replace."""
    f = tmp_path / "F"
    (f / "armB").mkdir(parents=True)
    a = _rig(tmp_path / "rigs" / "a", "armA", 0, timing=f / "armB" / "timing.jsonl")
    b = _rig(tmp_path / "rigs" / "b", "armB", 1)
    before = _snapshot(tmp_path)
    for jobs in ("1", "2"):
        r = runner.invoke(app, ["fleet", str(a), str(b), "--out", str(f), "--jobs", jobs])
        assert r.exit_code == 2, r.output
        assert "armB" in r.stderr and "timing.jsonl" in r.stderr
        assert _snapshot(tmp_path) == before


def test_a_worker_without_the_commands_guard_still_refuses(tmp_path: Path) -> None:
    """A spawned process or a Ray task starts with an empty context: the job carries the
    inputs, so the worker refuses by itself."""
    f, rigs = _natural_layout(tmp_path)
    before = _snapshot(f)
    jobs = plan(rigs, f)
    result = contextvars.Context().run(diagnose_one, jobs[0])  # a fresh process's context
    assert result.status == "failed" and "rig.toml" in result.error
    assert _snapshot(f) == before


def test_a_folder_no_fleet_wrote_is_refused(tmp_path: Path) -> None:
    """The arm's folder exists with the user's files (no input among them): replacing it
    would remove them."""
    rig = _rig(tmp_path / "rigs" / "a", "armA")
    (tmp_path / "F" / "armA").mkdir(parents=True)
    (tmp_path / "F" / "armA" / "NOTES.txt").write_text("mine\n")
    r = runner.invoke(app, ["fleet", str(rig), "--out", str(tmp_path / "F"), "--jobs", "1"])
    assert r.exit_code == 2 and "NOTES.txt" in r.stderr
    assert (tmp_path / "F" / "armA" / "NOTES.txt").read_text() == "mine\n"


def test_fleet_folder_inside_an_input_is_refused(tmp_path: Path) -> None:
    rig = _rig(tmp_path / "a", "armA")
    r = runner.invoke(
        app, ["fleet", str(rig), "--out", str(tmp_path / "a" / "timing.jsonl" / "x"), "--jobs", "1"]
    )
    assert r.exit_code == 2 and "lies inside the input" in " ".join(r.stderr.split())
    assert not (tmp_path / "a" / "timing.jsonl" / "x").exists()


def test_fleet_json_follows_each_arm(tmp_path: Path) -> None:
    rigs = [_rig(tmp_path / f"r{i}", f"arm{i}", i) for i in range(2)]
    out = tmp_path / "fleet"
    seen: list[dict] = []

    def progress(line: str) -> None:
        if line.startswith("[2/2]"):
            seen.append(json.loads((out / "fleet.json").read_text()))

    res, _ = run_fleet(rigs, out, jobs=1, progress=progress)
    assert [r.status for r in res] == ["done", "done"]
    assert seen and seen[0]["complete"] is False
    assert [a["status"] for a in seen[0]["arms"]] == ["done", "pending"]
    final = json.loads((out / "fleet.json").read_text())
    assert final["complete"] is True and [a["status"] for a in final["arms"]] == ["done"] * 2
    # a second run resumes its own folders (inputs.sha256 marks them as the fleet's)
    res, _ = run_fleet(rigs, out, jobs=1, progress=None)
    assert [r.status for r in res] == ["cached", "cached"]
    # a changed input reruns that arm, replacing the folder the fleet wrote ...
    write_timing_log(tmp_path / "r1" / "timing.jsonl", seed=7, n_episodes=4, steps=30)
    res, _ = run_fleet(rigs, out, jobs=1, progress=None)
    assert [r.status for r in res] == ["cached", "done"]
    # ... but not once the user has put a file of their own in it
    (out / "arm1" / "NOTES.txt").write_text("mine\n")
    write_timing_log(tmp_path / "r1" / "timing.jsonl", seed=8, n_episodes=4, steps=30)
    r = runner.invoke(app, ["fleet", *map(str, rigs), "--out", str(out), "--jobs", "1"])
    assert r.exit_code == 2 and "NOTES.txt" in r.stderr
    assert (out / "arm1" / "NOTES.txt").read_text() == "mine\n"


# --- the digest over the model's whole closure --------------------------------------------

_MODEL = """<mujoco>
  <compiler meshdir="meshes" texturedir="tex"/>
  <include file="parts/arm.xml"/>
  <asset>
    <mesh name="m" file="link.stl"/>
    <texture name="t" type="2d" file="wood.png"/>
  </asset>
  <worldbody/>
</mujoco>
"""


def _model(folder: Path) -> Path:
    (folder / "parts").mkdir(parents=True)
    (folder / "meshes").mkdir()
    (folder / "tex").mkdir()
    (folder / "parts" / "arm.xml").write_text("<mujoco><worldbody/></mujoco>\n")
    (folder / "meshes" / "link.stl").write_bytes(b"solid a\nendsolid a\n")
    (folder / "tex" / "wood.png").write_bytes(b"\x89PNG....")
    (folder / "m.xml").write_text(_MODEL)
    return folder / "m.xml"


def test_closure_follows_includes_meshes_and_textures(tmp_path: Path) -> None:
    c = closure.model_closure(_model(tmp_path))
    names = {p.relative_to(tmp_path.resolve()).as_posix() for p in c.files}
    assert names == {"m.xml", "parts/arm.xml", "meshes/link.stl", "tex/wood.png"}
    assert c.problems == ()


@pytest.mark.parametrize("changed", ["parts/arm.xml", "meshes/link.stl", "tex/wood.png"])
def test_digest_follows_every_file_of_the_model(tmp_path: Path, changed: str) -> None:
    _model(tmp_path)
    write_timing_log(tmp_path / "timing.jsonl", seed=0, n_episodes=2, steps=10)
    rig = write_rig(tmp_path, "m.xml", '[evidence]\ntiming_logs = ["timing.jsonl"]\n')
    d0 = rig_digest(rig)
    p = tmp_path / changed
    p.write_bytes(p.read_bytes() + b" ")
    assert rig_digest(rig) != d0


def test_digest_frames_names_and_contents(tmp_path: Path) -> None:
    """A folder of evidence holding {"ab": "c"} and one holding {"a": "bc"} differ."""
    write_timing_log(tmp_path / "timing.jsonl", seed=0, n_episodes=2, steps=10)
    rig = write_rig(
        tmp_path, "m.xml", '[evidence]\ntiming_logs = ["timing.jsonl"]\nframes = "frames"\n'
    )
    (tmp_path / "frames").mkdir()
    (tmp_path / "frames" / "ab").write_text("c")
    d0 = rig_digest(rig)
    (tmp_path / "frames" / "ab").unlink()
    (tmp_path / "frames" / "a").write_text("bc")
    assert rig_digest(rig) != d0


def test_digest_includes_the_simgap_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simgap._version

    rig = _rig(tmp_path, "a")
    d0 = rig_digest(rig)
    monkeypatch.setattr(simgap._version, "__version__", "999.0")
    assert rig_digest(rig) != d0


def test_closure_of_a_hostile_model_never_raises(tmp_path: Path) -> None:
    (tmp_path / "a.xml").write_text(
        '<mujoco><include file="a.xml"/><include file="nope.xml"/>'
        '<mesh file="../../../etc/x"/></mujoco>'
    )
    c = closure.model_closure(tmp_path / "a.xml")
    assert c.problems  # the cycle and the missing include are named, not raised
    (tmp_path / "b.xml").write_text("<mujoco><unclosed></mujoco>")
    assert closure.model_closure(tmp_path / "b.xml").problems
    assert closure.model_closure(tmp_path / "missing.xml").problems


# --- a stopped or killed fleet stops its workers --------------------------------------------


def _children(pid: int) -> list[int]:
    out = subprocess.run(
        ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True
    ).stdout
    return [int(x) for x in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by init) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _start_fleet(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, list[int]]:
    rigs = [_rig(tmp_path / f"r{i}", f"arm{i}", i, episodes=150, steps=400) for i in range(2)]
    out = tmp_path / "fleet"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simgap",
            "fleet",
            *map(str, rigs),
            "--out",
            str(out),
            "--jobs",
            "2",
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert p.stderr is not None
    deadline = time.monotonic() + 120
    line = ""
    while "local process" not in line and time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line and p.poll() is not None:
            break
    while (
        not list(out.glob(".arm*.tmp")) and time.monotonic() < deadline and p.poll() is None
    ):  # until a worker is writing an arm's folder
        time.sleep(0.05)
    if p.poll() is not None or not list(out.glob(".arm*.tmp")):
        pytest.skip("the fleet finished before it could be stopped")
    return p, out, _children(p.pid)


def _gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(k) for k in pids):
            return True
        time.sleep(0.2)
    return False


def test_sigterm_while_the_workers_start_stops_them(tmp_path: Path) -> None:
    """The quick check of the default run: SIGTERM as soon as the workers exist."""
    rigs = [_rig(tmp_path / f"r{i}", f"arm{i}", i) for i in range(2)]
    out = tmp_path / "fleet"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simgap",
            "fleet",
            *map(str, rigs),
            "--out",
            str(out),
            "--jobs",
            "2",
        ],
        stderr=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    kids: list[int] = []
    while len(kids) < 2 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
        kids = _children(p.pid)
    if p.poll() is not None:
        pytest.skip("the fleet finished before it could be stopped")
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 143
    assert _gone(kids, 10), [k for k in kids if _alive(k)]
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["complete"] is False
    assert all(a["status"] in ("stopped", "done") for a in doc["arms"])


@pytest.mark.slow
def test_sigterm_stops_the_workers_and_fleet_json_says_so(tmp_path: Path) -> None:
    p, out, kids = _start_fleet(tmp_path)
    assert kids
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 143
    assert _gone(kids, 10), [k for k in kids if _alive(k)]
    print(f"SIGTERM: fleet and its workers gone in {time.monotonic() - t0:.2f} s")
    assert not list(out.glob(".arm*.tmp"))  # the workers removed their half-built folders
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["complete"] is False
    for a in doc["arms"]:  # an arm is done only where its folder holds its findings
        has = (out / a["folder"] / "findings.json").is_file()
        assert (
            (a["status"] == "done") == has
            or a["status"] == "stopped"
            and not has
            or a["status"] == "stopped"
            and has
            and (out / a["folder"] / "inputs.sha256").is_file()
        )


@pytest.mark.slow
def test_sigkill_of_the_fleet_ends_its_workers(tmp_path: Path) -> None:
    p, out, kids = _start_fleet(tmp_path)
    assert kids
    t0 = time.monotonic()
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)
    workers_gone = _gone(kids, 15)
    print(f"SIGKILL: orphaned workers gone in {time.monotonic() - t0:.2f} s")
    time.sleep(0.5)
    assert not list(out.glob(".arm*.tmp"))  # they stopped, cleaning up, not finishing
    for k in kids:  # never leave them behind, whatever the test found
        if _alive(k):
            os.kill(k, signal.SIGKILL)
    assert workers_gone


# --- the Ray path, with a stand-in for Ray that runs each task in a fresh context ----------


class _Ref:
    def __init__(self, fn: object, job: object) -> None:
        self.fn, self.job = fn, job


class _FakeRay:
    """Runs a task when its result is asked for, in an empty context (as a Ray worker has:
    none of the driver's ContextVars), and records cancellations."""

    def __init__(self) -> None:
        self.started = False
        self.cancelled: list[_Ref] = []

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **kwargs: object) -> None:
        assert kwargs.get("log_to_driver") is False  # Ray's noise stays off the terminal
        self.started = True

    def shutdown(self) -> None:
        self.started = False

    def remote(self, **kwargs: object):  # noqa: ANN201
        def deco(fn: object) -> object:
            class Task:
                def remote(self, job: object) -> _Ref:
                    return _Ref(fn, job)

            return Task()

        return deco

    def wait(self, pending: list[_Ref], num_returns: int = 1) -> tuple[list, list]:
        return pending[:1], pending[1:]

    def get(self, ref: _Ref) -> object:
        return contextvars.Context().run(ref.fn, ref.job)  # type: ignore[arg-type]

    def cancel(self, ref: _Ref, force: bool = False) -> None:
        self.cancelled.append(ref)


@pytest.fixture
def fake_ray(monkeypatch: pytest.MonkeyPatch) -> _FakeRay:
    from simgap.fit import ray_cluster

    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(ray_cluster, "_installed", lambda m: True)
    return fake


def test_a_ray_task_guards_itself(tmp_path: Path, fake_ray: _FakeRay) -> None:
    from simgap.fleet.pool import run_ray

    f, rigs = _natural_layout(tmp_path)
    before = _snapshot(f)
    results: list = []
    run_ray(plan(rigs, f), "local", 1, results.append)  # past the driver's own check
    assert [r.status for r in results] == ["failed", "failed"]
    assert _snapshot(f) == before


def test_a_stopped_ray_fleet_cancels_its_tasks(tmp_path: Path, fake_ray: _FakeRay) -> None:
    rigs = [_rig(tmp_path / f"r{i}", f"arm{i}", i) for i in range(2)]
    out = tmp_path / "fleet"

    def progress(line: str) -> None:
        if line.startswith("[1/2]"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_fleet(rigs, out, ray="local", progress=progress)
    assert len(fake_ray.cancelled) == 1 and not fake_ray.started
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["complete"] is False
    assert [a["status"] for a in doc["arms"]] == ["done", "stopped"]
    assert not (out / "arm1").exists()


# --- fuzzed layouts: whatever the layout, no file the fleet did not write changes ----------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NAMES = [
    "armA",
    "armB",
    "fleet.json",
    "fleet.html",
    "..",
    ".",
    "a/b",
    "évident",
    "x y",
    "F",
    "rigs",
    "timing.jsonl",
    "",
    "armA",
]
_OUTS = [
    "F",
    ".",
    "rigs",
    "rigs/armA",
    "rigs/armB",
    "rigs/armA/timing.jsonl",
    "rigs/armA/sub",
    "rigs/armB/armA",
    "F/armA",
    "rigs/..",
]


@settings(
    max_examples=max(6, settings().max_examples // 20),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(
    names=st.tuples(st.sampled_from(_NAMES), st.sampled_from(_NAMES)),
    out=st.sampled_from(_OUTS),
    evidence_in=st.tuples(
        st.sampled_from(["own", "other", "out"]), st.sampled_from(["own", "other", "out"])
    ),
    notes=st.booleans(),
    jobs=st.sampled_from(["1", "2"]),
)
def test_fuzzed_fleet_layouts_never_touch_a_users_file(
    names: tuple[str, str], out: str, evidence_in: tuple[str, str], notes: bool, jobs: str
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        folders = [root / "rigs" / "armA", root / "rigs" / "armB"]
        rigs = []
        for i, (name, where) in enumerate(zip(names, evidence_in, strict=True)):
            other = folders[1 - i]
            at = {"own": folders[i], "other": other, "out": root / out / name}[where]
            if at.exists() and not at.is_dir():
                at = folders[i]
            at.mkdir(parents=True, exist_ok=True)
            rig = _rig(folders[i], "armX", i, timing=at / f"timing{i}.jsonl")
            rig.write_text(rig.read_text().replace('name = "armX"', f"name = {json.dumps(name)}"))
            rigs.append(rig)
        if notes:
            if not (root / out).is_file():
                (root / out).mkdir(parents=True, exist_ok=True)
            for n in names:
                q = root / out / n
                if not q.exists() and q.parent.is_dir():
                    q.mkdir(exist_ok=True)
                if q.is_dir():
                    (q / "NOTES.txt").write_text("mine\n")
        before = _snapshot(root)
        r = runner.invoke(app, ["fleet", *map(str, rigs), "--out", str(root / out), "--jobs", jobs])
        assert r.exit_code in (0, 1, 2), r.output
        assert "Traceback" not in r.output and "internal error" not in r.output
        after = _snapshot(root)
        changed = [k for k, v in before.items() if after.get(k) != v]
        assert not changed, (changed, r.output)
