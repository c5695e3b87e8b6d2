"""MCAP out for Foxglove (``--mcap FILE.mcap``): read back with the real ``mcap`` reader, every
channel has its schema and encoding and every layer its values at its log time; every message
on a Foxglove schema parses into Foxglove's own protobuf definitions."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mcap", reason="the mcap extra is absent")

from mcap.reader import make_reader  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from simgap.cli import app  # noqa: E402
from tests.view_findings import diagnosis as _diagnosis  # noqa: E402
from tests.view_findings import timed_findings as _timed_findings  # noqa: E402

runner = CliRunner()


def read_mcap(
    path: Path,
) -> tuple[dict[str, tuple[str, str, str]], dict[str, list[tuple[int, dict[str, Any]]]]]:
    """(topic -> (schema name, schema encoding, message encoding),
    topic -> [(log time [ns], message)] in log-time order)."""
    with open(path, "rb") as fh:
        reader = make_reader(fh)
        summary = reader.get_summary()
        assert summary is not None
        chans = {
            c.topic: (
                summary.schemas[c.schema_id].name,
                summary.schemas[c.schema_id].encoding,
                c.message_encoding,
            )
            for c in summary.channels.values()
        }
        msgs: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for _, ch, m in reader.iter_messages(log_time_order=True):
            msgs.setdefault(ch.topic, []).append((m.log_time, json.loads(m.data)))
    return chans, msgs


def _as_proto_json(v: Any, key: str = "") -> Any:
    """Foxglove's JSON encoding (times as {sec, nsec}) in protobuf's JSON mapping (RFC 3339
    timestamps, 'Ns' durations); everything else as it is."""
    if isinstance(v, dict) and set(v) == {"sec", "nsec"}:
        if key == "lifetime":
            return f"{v['sec']}.{v['nsec']:09d}s"
        import datetime as dt

        t = dt.datetime.fromtimestamp(v["sec"], dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{t}.{v['nsec']:09d}Z"
    if isinstance(v, dict):
        return {k: _as_proto_json(x, k) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_proto_json(x, key) for x in v]
    return v


def _check_against_foxglove(
    chans: dict[str, tuple[str, str, str]], msgs: dict[str, list[tuple[int, dict[str, Any]]]]
) -> int:
    """Parse every message on a foxglove.* channel into foxglove-schemas-protobuf's class
    (unknown fields or wrong types fail); returns how many were parsed."""
    fgp = pytest.importorskip(
        "foxglove_schemas_protobuf", reason="foxglove-schemas-protobuf (the test extra) is absent"
    )
    import importlib

    from google.protobuf import json_format

    n = 0
    for topic, (schema, _, _) in chans.items():
        if not schema.startswith("foxglove."):
            continue
        name = schema.split(".", 1)[1]
        cls = getattr(importlib.import_module(f"{fgp.__name__}.{name}_pb2"), name)
        for _, m in msgs[topic]:
            json_format.ParseDict(_as_proto_json(m), cls())
            n += 1
    return n


def test_every_layer_at_its_log_time(shared_data: Path, tmp_path: Path) -> None:
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset
    from simgap.report.mcap_out import EPISODE_GAP_S, write_mcap
    from simgap.report.mcap_schemas import SCHEMAS
    from simgap.rig import load_rig
    from simgap.sim.arm_pose import ArmPoser
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    so101 = shared_data / "so101" / "so101.xml"
    b = make_so101_bench(
        tmp_path / "bench", so101, 3, fps=30, n_episodes=2, duration_s=1.0, n_heldout=0
    )
    with open(b.rig, "a", encoding="utf-8") as fh:
        fh.write('\n[camera]\nname = "wrist_cam"\nrender_resolution = [24, 32]\n')
    rig = load_rig(b.rig)
    ds = read_lerobot_dataset(rig.evidence.dataset)
    diag = _diagnosis()
    diag["findings"] += _timed_findings()
    done = write_mcap(tmp_path / "d.mcap", rig, ds, diag)
    chans, msgs = read_mcap(done.path)
    rendered = not done.skipped  # no offscreen GL here: the camera alone is left out
    want = {
        "/action",
        "/observation.state",
        "/real/observation.state",
        "/sim/nominal/observation.state",
        "/gap",
        "/tf",
        "/arm",
        "/findings",
        *(["/sim/camera/wrist_cam"] if rendered else []),
    }
    assert set(chans) == want
    for topic, (schema, enc, msg_enc) in chans.items():
        assert schema in SCHEMAS and enc == "jsonschema" and msg_enc == "json", topic
    assert (
        chans["/findings"][0] == "foxglove.Log"
        and chans["/tf"][0] == "foxglove.FrameTransforms"
        and chans["/arm"][0] == "foxglove.SceneUpdate"
    )

    model = compile_spec(strip_visuals(load_spec(rig.model_path)), rig.model_path)
    trs = list(dataset_trajectories(ds, rig))
    start = 0.0
    poser = ArmPoser(rig.model_path, rig.joint_names)
    for n, tr in enumerate(trs):
        T, e = len(tr.t), tr.episode
        t_s = tr.t - tr.t[0]
        assert done.starts_s[n] == pytest.approx(start)
        times = [int(round((start + t) * 1e9)) for t in t_s]

        def of(topic: str, ep: int = e) -> list[tuple[int, dict[str, Any]]]:
            return [(t, m) for t, m in msgs[topic] if m.get("episode", ep) == ep]

        act = of("/action")
        assert [t for t, _ in act] == times and [m["frame_index"] for _, m in act] == list(range(T))
        np.testing.assert_allclose(
            [m["position"] for _, m in act], ds.vector("action", e), rtol=1e-6
        )
        assert act[0][1]["name"] == ds.names("action")
        nominal = replay(model, tr, "exact")[0]
        sim = [m["position"] for _, m in of("/sim/nominal/observation.state")]
        np.testing.assert_allclose(sim, nominal, atol=1e-9)
        gap = of("/gap")
        np.testing.assert_allclose([m["nominal"] for _, m in gap], tr.q - nominal, atol=1e-9)
        np.testing.assert_allclose([m["floor"] for _, m in gap], [[0.002] * 6] * T)
        # the arm: each frame's transforms hold every geom at its forward-kinematics pose
        pos, _ = poser.poses(tr.q)
        tf = [m for t, m in msgs["/tf"] if times[0] <= t <= times[-1]]
        assert len(tf) == T
        real = [x for x in tf[T // 2]["transforms"] if x["child_frame_id"].startswith("real/")]
        got = [[x["translation"][k] for k in "xyz"] for x in real]
        np.testing.assert_allclose(got, pos[T // 2], atol=1e-9)
        if rendered:
            cam = [m for t, m in msgs["/sim/camera/wrist_cam"] if times[0] <= t <= times[-1]]
            assert len(cam) == len(range(0, T, 2)) and cam[0]["format"] == "png"
            from PIL import Image

            img = np.asarray(Image.open(io.BytesIO(base64.b64decode(cam[0]["data"]))))
            assert img.shape == (24, 32, 3)
        start += float(t_s[-1]) + EPISODE_GAP_S
    # findings: the timed ones at their moments, the others at each episode's start
    logs = msgs["/findings"]
    at = {(t, m["message"].split(":")[1].strip()) for t, m in logs}
    e1 = done.starts_s[1]
    t1 = trs[1].t - trs[1].t[0]
    assert (int(round((e1 + t1[7]) * 1e9)), "Time base") in at
    assert (int(round((e1 + t1[12]) * 1e9)), "Failure phases") in at
    assert (int(round(e1 * 1e9)), "Latency") in at
    assert {m["level"] for _, m in logs} == {1, 2, 3}
    assert len(logs) == 2 * 5
    scene = msgs["/arm"]
    assert len(scene) == 1 and len(scene[0][1]["entities"]) == 2 * len(poser.shapes.shapes)
    assert _check_against_foxglove(chans, msgs) == len(logs) + len(msgs["/tf"]) + 1 + (
        len(msgs["/sim/camera/wrist_cam"]) if rendered else 0
    )
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is absent")
    for topic, (schema, _, _) in chans.items():
        for _, m in msgs[topic][:3]:
            if topic == "/arm":  # the meshes' triangle lists, cut to one triangle each
                m = {
                    **m,
                    "entities": [
                        {
                            **x,
                            "triangles": [
                                {**tr, "points": tr["points"][:3], "indices": [0, 1, 2]}
                                for tr in x.get("triangles", [])
                            ],
                        }
                        for x in m["entities"]
                    ],
                }
            jsonschema.validate(m, SCHEMAS[schema])


def test_view_writes_the_demos_mcap(demo_run: tuple[Path, Path, str], tmp_path: Path) -> None:
    out, cache, _ = demo_run
    rig = next(cache.glob("*/rig.toml"))
    path = tmp_path / "demo.mcap"
    res = runner.invoke(app, ["view", str(out), "--rig", str(rig), "--mcap", str(path)])
    assert res.exit_code == 0, res.output
    assert "mcap:" in res.output and "12 episode(s)" in res.output
    chans, msgs = read_mcap(path)
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert len(msgs["/findings"]) == 12 * len(findings)
    assert chans["/observation.images.wrist"][0] == "foxglove.CompressedImage"
    n = len(msgs["/action"])
    for topic in (
        "/observation.images.wrist",
        "/sim/camera/wrist",
        "/tf",
        "/latency",
        "/sim/identified/observation.state",
        "/gap",
    ):
        assert len(msgs[topic]) == n, topic
    res = runner.invoke(app, ["view", str(out), "--rig", str(rig)])
    assert res.exit_code == 2 and "--mcap" in res.output and "Traceback" not in res.output


def test_diagnose_says_a_missing_mcap_before_it_runs(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simgap.report.mcap_out as mcap_mod
    from simgap.errors import MissingExtraError

    def missing() -> None:
        raise MissingExtraError("mcap", "mcap", "Writing an MCAP file")

    monkeypatch.setattr(mcap_mod, "_mcap_writer", missing)
    rig = tmp_path / "rig.toml"
    rig.write_text(
        f'name = "t"\n[model]\npath = "{demo_model}"\n[control]\ndt_s = 0.03\n'
        "[joints.shoulder_pan]\n"
    )
    res = runner.invoke(
        app,
        ["diagnose", str(rig), "--out", str(tmp_path / "out"), "--mcap", str(tmp_path / "x.mcap")],
    )
    assert res.exit_code != 0 and "simgap[mcap]" in res.output
    assert not (tmp_path / "out").exists()  # nothing was diagnosed
