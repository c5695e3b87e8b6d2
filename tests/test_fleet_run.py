"""Running a fleet: folders per rig, resumable by digest, progress, randomize on the folder,
the backend selection of ``--ray`` and a rig's ``[compute]``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.demo.timing import write_timing_log
from simgap.errors import InputError
from simgap.fit import backends
from simgap.fleet.jobs import plan, rig_digest
from simgap.fleet.run import run_fleet
from simgap.rig import load_rig
from tests.factories import write_rig
from tests.fleet_synth import FAULT, synth_fleet, write_fleet

runner = CliRunner()


def _latency_rig(folder: Path, seed: int, name: str) -> Path:
    write_timing_log(folder / "timing.jsonl", seed=seed, n_episodes=4, steps=30)
    rig = write_rig(folder, "m.xml", '[evidence]\ntiming_logs = ["timing.jsonl"]\n')
    rig.write_text(rig.read_text().replace('name = "test-so101"', f'name = "{name}"'))
    return rig


@pytest.mark.slow
def test_fleet_on_local_processes(tmp_path: Path) -> None:
    """Two rigs on two spawned processes give the findings of one at a time."""
    rigs = [_latency_rig(tmp_path / f"r{i}", i, f"arm{i}") for i in range(2)]
    lines: list[str] = []
    res, _ = run_fleet(rigs, tmp_path / "p", jobs=2, progress=lines.append)
    assert [r.status for r in res] == ["done", "done"], [r.error for r in res]
    assert any("2 local process(es)" in x for x in lines)
    run_fleet(rigs, tmp_path / "s", jobs=1, progress=lines.append)
    for r in res:
        a = json.loads((tmp_path / "p" / r.folder / "findings.json").read_text())
        b = json.loads((tmp_path / "s" / r.folder / "findings.json").read_text())
        assert a["findings"] == b["findings"]


def test_fleet_runs_each_rig_once_and_resumes(tmp_path: Path) -> None:
    rigs = [_latency_rig(tmp_path / f"r{i}", i, "arm") for i in range(2)]
    out = tmp_path / "fleet"
    lines: list[str] = []
    results, summary = run_fleet(rigs, out, jobs=1, progress=lines.append)
    assert [r.name for r in results] == ["arm", "arm-2"]  # same rig name made unique
    assert [r.status for r in results] == ["done", "done"], [r.error for r in results]
    assert (out / "arm" / "findings.json").is_file() and (out / "arm-2" / "report.html").is_file()
    assert summary.verdicts["arm"]["latency"] in ("implicated", "eliminated", "inconclusive")
    assert any("arm-2: diagnosed in" in x for x in lines)
    doc = json.loads((out / "fleet.json").read_text())
    assert doc["backend"] == "local" and len(doc["arms"]) == 2
    html = (out / "fleet.html").read_text()
    assert "<script" not in html and "latency" in html
    # unchanged inputs: nothing reruns
    lines.clear()
    results, _ = run_fleet(rigs, out, jobs=1, progress=lines.append)
    assert [r.status for r in results] == ["cached", "cached"]
    assert all("unchanged, kept" in x for x in lines)
    # one evidence file changed: only that rig reruns
    write_timing_log(tmp_path / "r1" / "timing.jsonl", seed=9, n_episodes=4, steps=30)
    results, _ = run_fleet(rigs, out, jobs=1, progress=lines.append)
    assert [r.status for r in results] == ["cached", "done"]


def test_digest_follows_rig_and_evidence(tmp_path: Path) -> None:
    rig = _latency_rig(tmp_path, 0, "a")
    d0 = rig_digest(rig)
    assert rig_digest(rig) == d0
    rig.write_text(rig.read_text() + "\n# a comment\n")
    d1 = rig_digest(rig)
    (tmp_path / "timing.jsonl").write_text((tmp_path / "timing.jsonl").read_text() + "\n")
    assert len({d0, d1, rig_digest(rig)}) == 3


def test_fleet_with_no_rigs_or_a_bad_rig_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="one or more rig.toml"):
        plan([], tmp_path)
    r = runner.invoke(app, ["fleet", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "nope.toml" in r.stderr and "Traceback" not in r.stderr


def test_randomize_on_a_fleet_folder(tmp_path: Path) -> None:
    arms, _ = synth_fleet(1, fault=FAULT)
    write_fleet(arms, tmp_path / "fleet")
    out = tmp_path / "spec.json"
    r = runner.invoke(app, ["randomize", str(tmp_path / "fleet"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    spec = json.loads(out.read_text())
    by = {e["name"]: e for e in spec["entries"]}
    e = by["kp.elbow_flex"]
    assert e["source"] == "measured" and "measured across 7 units" in e["note"]
    assert by["unit_gain_scale"]["source"] == "measured"
    assert by["kp"]["kind"] == "pinned"
    isaac = tmp_path / "events.py"
    r = runner.invoke(
        app, ["randomize", str(tmp_path / "fleet"), "--format", "isaaclab", "--out", str(isaac)]
    )
    assert r.exit_code == 0, r.output
    text = isaac.read_text()
    assert "unit_gains: measured" in text and "measured across" in text
    r = runner.invoke(app, ["randomize", str(tmp_path), "--out", str(out)])
    assert r.exit_code == 2 and "fleet.json" in r.stderr


def test_the_backend_is_chosen_explicitly_never_by_module_state() -> None:
    from simgap.branches.context import Context

    ray = backends.Compute("ray", address="local", actor_cpus=0.0)
    assert ray.kind == "ray" and ray.address is None and ray.actor_cpus == 0.0
    # a Compute made elsewhere changes nothing for a caller that does not pass it
    assert not hasattr(backends, "_DEFAULT") and not hasattr(backends, "use_backend")
    assert Context.__dataclass_fields__["compute"].default == backends.LOCAL
    with pytest.raises(InputError, match="'local' or 'ray'"):
        backends.Compute("dask")
    with pytest.raises(InputError, match="'local' or 'ray'"):
        backends.make_backend(None, "dask")  # type: ignore[arg-type]


def test_rig_compute_section(tmp_path: Path) -> None:
    rig = write_rig(tmp_path, "m.xml", '[compute]\nbackend = "ray"\naddress = "auto"\n')
    r = load_rig(rig)
    assert r.compute_backend == "ray" and r.compute_address == "auto"
    assert load_rig(write_rig(tmp_path / "b", "m.xml")).compute_backend == "local"
    bad = write_rig(tmp_path / "c", "m.xml", '[compute]\nbackend = "spark"\n')
    with pytest.raises(InputError, match="compute.backend"):
        load_rig(bad)
