"""The Rerun recording of a diagnosis (``--rerun FILE.rrd``, ``simgap view``): read back, every
layer is at its frame and time, on LeRobot's timelines and names; the demo's passes
``rerun rrd verify``."""

from __future__ import annotations

import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

rr = pytest.importorskip("rerun", reason="the rerun extra (rerun-sdk) is absent")

from typer.testing import CliRunner  # noqa: E402

from simgap.cli import app  # noqa: E402
from tests.view_findings import diagnosis as _diagnosis  # noqa: E402

runner = CliRunner()


def read_rrd(path: Path) -> dict[str, dict[str, Any]]:
    """recording id -> entity path -> {column: values} (the temporal chunks joined, in
    frame order; static columns alone under ``static``)."""
    import pyarrow as pa

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # load_archive is deprecated from 0.32, still there
        archive = rr.recording.load_archive(path)
        recordings = archive.all_recordings()
    out: dict[str, dict[str, Any]] = {}
    for rec in recordings:
        if not hasattr(rec, "chunks"):
            pytest.skip("this rerun-sdk reads no chunks back (0.33 does)")
        ents: dict[str, list[Any]] = {}
        for ch in rec.chunks():
            ents.setdefault(ch.entity_path.lstrip("/"), []).append(ch.to_record_batch())
        table: dict[str, Any] = {}
        for ent, batches in ents.items():
            timed = [b for b in batches if "frame_index" in b.schema.names]
            static = [b for b in batches if "frame_index" not in b.schema.names]
            d: dict[str, Any] = {}
            if timed:
                t = pa.concat_tables(
                    [pa.Table.from_batches([b]) for b in timed], promote_options="default"
                )
                t = t.sort_by("frame_index")
                d = {n: t.column(n).to_pylist() for n in t.column_names}
            if static:
                d["static"] = {n: static[0].column(n).to_pylist() for n in static[0].schema.names}
            table[ent] = d
        out[rec.recording_id()] = table
    return out


def _seconds(v: Any) -> float:
    return v.total_seconds() if hasattr(v, "total_seconds") else float(v) * 1e-9


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


def test_layers_are_at_their_frames_and_times(so101: Path, tmp_path: Path) -> None:
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.report.rerun import write_rrd
    from simgap.rig import load_rig
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    b = make_so101_bench(
        tmp_path / "bench", so101, 3, fps=30, n_episodes=2, duration_s=1.0, n_heldout=0
    )
    rig = load_rig(b.rig)
    ds = read_lerobot_dataset(rig.evidence.dataset)
    path = write_rrd(tmp_path / "d.rrd", rig, ds, _diagnosis()).path
    got = read_rrd(path)
    assert set(got) == {"episode_0", "episode_1"}
    model = compile_spec(strip_visuals(load_spec(rig.model_path)), rig.model_path)
    for tr in dataset_trajectories(ds, rig):
        ents = got[f"episode_{tr.episode}"]
        T = len(tr.t)
        act = ents["action"]
        assert act["frame_index"] == list(range(T))
        np.testing.assert_allclose(
            [_seconds(v) for v in act["timestamp"]], tr.t - tr.t[0], atol=1e-9
        )
        np.testing.assert_allclose(
            np.array(act["Scalars:scalars"]), ds.vector("action", tr.episode), rtol=1e-6
        )
        assert act["static"]["SeriesLines:names"][0] == ds.names("action")
        st = np.array(ents["observation.state"]["Scalars:scalars"])
        np.testing.assert_allclose(st, ds.vector("observation.state", tr.episode), rtol=1e-6)
        nominal = replay(model, tr, "exact")[0]
        sim = np.array(ents["sim/nominal/observation.state"]["Scalars:scalars"])
        np.testing.assert_allclose(sim, nominal, atol=1e-9)
        assert "sim/identified/observation.state" not in ents  # no patch offered
        for i, j in enumerate(rig.joint_names):
            gap = np.array(ents[f"gap/{j}"]["Scalars:scalars"])
            assert ents[f"gap/{j}"]["static"]["SeriesLines:names"][0] == [
                "nominal",
                "floor",
                "-floor",
            ]
            np.testing.assert_allclose(gap[:, 0], tr.q[:, i] - nominal[:, i], atol=1e-9)
            np.testing.assert_allclose(gap[:, 1:], [[0.002, -0.002]] * T)
        logs = ents["findings"]
        assert logs["frame_index"] == [0, 0]
        assert [v[0] for v in logs["TextLog:level"]] == ["WARN", "INFO"]
        assert logs["TextLog:text"][0] == ["[implicated] latency: Latency: the loop overruns"]


def test_view_on_a_bag_rig_and_its_errors(so101: Path, tmp_path: Path) -> None:
    """A bag rig's recording (no camera) is shown the same way; a folder without
    findings.json and a diagnosis of another rig are one message each."""
    pytest.importorskip("mcap_ros2")
    from tests.test_ros2_bag import bench_bags

    _, _, brig, bds = bench_bags(tmp_path, so101, 3, 1.0, 1)
    out = tmp_path / "out"
    out.mkdir()
    import json

    (out / "findings.json").write_text(json.dumps({**_diagnosis(), "rig": brig.name}))
    res = runner.invoke(
        app, ["view", str(out), "--rig", str(brig.source), "--rerun", str(tmp_path / "bag.rrd")]
    )
    assert res.exit_code == 0, res.output
    got = read_rrd(tmp_path / "bag.rrd")
    assert list(got) == ["episode_0"]
    names = got["episode_0"]["observation.state"]["static"]["SeriesLines:names"][0]
    assert names == list(brig.joint_names)  # the bag's names (JointState.name)
    res = runner.invoke(
        app, ["view", str(tmp_path), "--rig", str(brig.source), "--rerun", str(tmp_path / "x.rrd")]
    )
    assert res.exit_code == 2 and "findings.json" in res.output and "Traceback" not in res.output
    (out / "findings.json").write_text(json.dumps(_diagnosis()))
    res = runner.invoke(
        app, ["view", str(out), "--rig", str(brig.source), "--rerun", str(tmp_path / "x.rrd")]
    )
    assert res.exit_code == 2 and "so101-bench-3" in res.output and "--rig" in res.output
    assert not (tmp_path / "x.rrd").exists()


def test_the_demos_recording_verifies_and_holds_every_layer(
    demo_run: tuple[Path, Path, str], tmp_path: Path
) -> None:
    from simgap.report.rerun import _rerun_cli

    out, cache, _ = demo_run
    rig = next(cache.glob("*/rig.toml"))
    rrd = tmp_path / "demo.rrd"
    res = runner.invoke(app, ["view", str(out), "--rig", str(rig), "--rerun", str(rrd)])
    assert res.exit_code == 0, res.output
    got = read_rrd(rrd)
    ep = got["episode_0"]
    for ent in (
        "action",
        "observation.state",
        "observation.images.wrist",
        "real/observation.state",
        "sim/nominal/observation.state",
        "sim/identified/observation.state",
        "findings",
        *(f"gap/{j}" for j in ("shoulder_pan", "gripper")),
    ):
        assert ent in ep, (ent, sorted(ep))
    T = len(ep["action"]["frame_index"])
    assert ep["observation.images.wrist"]["frame_index"] == list(range(T))
    # the rendered camera beside it at every frame (15 fps), the arm's three layers
    assert ep["sim/camera/wrist"]["frame_index"] == list(range(T))
    for layer in ("real", "sim/nominal", "sim/identified"):
        assert ep[f"world/{layer}/box"]["frame_index"] == list(range(T))
    assert ep["latency/total"]["frame_index"] == list(range(T))  # a tick is a frame here
    findings = __import__("json").loads((out / "findings.json").read_text())["findings"]
    assert len(ep["findings"]["TextLog:text"]) == len(findings)
    # the time base's fastest step at its episode and frame, as findings.json names them
    from simgap.figures.evidence import TimeBaseFigures
    from simgap.figures.phases import PhasesDetails
    from simgap.finding import details_of, figures_of

    tb = figures_of(next(f for f in findings if f["kind"] == "time_base"), TimeBaseFigures)
    logs = got[f"episode_{tb.peak_speed_episode}"]["findings"]
    here = [
        fr
        for fr, t in zip(logs["frame_index"], logs["TextLog:text"], strict=True)
        if t[0].startswith("[eliminated] evidence: Time base")
    ]
    assert here == [tb.peak_speed_frame]
    # a failed real episode's failure at the start of the phase it was in
    ph = details_of(next(f for f in findings if f["branch"] == "phases"), PhasesDetails)
    bad = next(e for e in ph.real_episodes or () if e.failure_phase)
    assert bad.failure_phase is not None and bad.reached is not None
    start = bad.phases_s.get(bad.failure_phase, bad.phases_s[bad.reached])[0]
    logs = got[f"episode_{bad.episode}"]["findings"]
    at = [
        (fr, ts)
        for fr, ts, t in zip(
            logs["frame_index"], logs["timestamp"], logs["TextLog:text"], strict=True
        )
        if "phases:" in t[0]
    ]
    assert len(at) == 1 and at[0][0] > 0 and abs(_seconds(at[0][1]) - start) < 0.04
    # the viewer's own check; HOME apart, with its analytics off (nothing leaves the machine)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(
        [_rerun_cli(), "analytics", "disable"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    ver = subprocess.run(
        [_rerun_cli(), "rrd", "verify", str(rrd)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ver.returncode == 0, ver.stdout + ver.stderr
    assert "verified without error" in ver.stdout + ver.stderr


def test_diagnose_says_a_missing_extra_before_it_runs(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simgap.report.rerun as rerun_mod
    from simgap.errors import MissingExtraError

    def missing() -> None:
        raise MissingExtraError("rerun", "rerun-sdk", "Writing a Rerun recording")

    monkeypatch.setattr(rerun_mod, "_rerun", missing)
    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'name = "t"\n[model]\npath = "{demo_model}"\n[control]\ndt_s = 0.03\n'
        "[joints.shoulder_pan]\n"
    )
    res = runner.invoke(
        app,
        ["diagnose", str(rig), "--out", str(tmp_path / "out"), "--rerun", str(tmp_path / "x.rrd")],
    )
    assert res.exit_code != 0 and "simgap[rerun]" in res.output
    assert not (tmp_path / "out").exists()  # nothing was diagnosed
