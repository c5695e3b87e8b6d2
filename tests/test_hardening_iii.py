"""Hardening III (issue 33): a failing report section never takes the run down, a region
with no pixels is not measured, values are checked at the boundary, real logs raise no false
alarms, and bad inputs end in clear errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from typer.testing import CliRunner

from simgap.appearance.regions import RegionStats, region_means
from simgap.cli import app
from simgap.figures.appearance import ExposureFigures, Region
from simgap.finding import Diagnosis, Finding, figures_of
from simgap.report import render_report
from simgap.report.plots_appearance import region_table
from tests.factories import write_v3_dataset

runner = CliRunner()

EMPTY = {"real_rgb": [None, None, None], "sim_rgb": [None, None, None], "pixels": 0}
"""A region with no pixels as an older findings.json holds it (NaN written as null)."""


def _appearance(regions: dict[str, Any]) -> dict[str, Any]:
    img = np.zeros((4, 4, 3), dtype=np.uint8).tolist()
    return {
        "branch": "appearance",
        "verdict": "inconclusive",
        "title": "Appearance",
        "summary": "",
        "next_step": "",
        "key_figure": "jaw_gain",
        "figures": {"jaw_gain": 1.1, "regions": regions},
        "details": {
            "images": {"real": img, "sim": img, "diff": img, "frame": 3, "recording": "ep0"}
        },
    }


def _latency() -> dict[str, Any]:
    return {
        "branch": "latency",
        "verdict": "implicated",
        "title": "Latency over the period",
        "summary": "p95 over the period.",
        "next_step": "Cut inference.",
        "key_figure": "total_p95_s",
        "figures": {"total_p95_s": 0.0917, "control_dt_s": 0.0666667},
    }


# -- 1. a failing report section never takes the run down --------------------------------


def test_region_without_pixels_is_not_measured_in_the_table() -> None:
    # the old table took np.mean of [None, None, None]: TypeError, and no report at all
    html = region_table(
        {
            "object": Region.from_mapping(EMPTY),
            "jaws": Region.from_mapping(
                {"real_rgb": [100, 100, 100], "sim_rgb": [50, 50, 50], "pixels": 9}
            ),
        }
    )
    assert "not measured" in html and "<td>jaws</td><td>100</td><td>50</td><td>2</td>" in html


def test_region_without_pixels_is_not_measured_at_the_source() -> None:
    nan3 = (float("nan"),) * 3
    empty = RegionStats(0, nan3, nan3, float("nan"), float("nan"), None)
    full = RegionStats(4, (10.0, 20.0, 30.0), (5.0, 10.0, 15.0), 18.0, 9.0, 2.0)
    out = region_means([empty, empty])
    assert out["measured"] is False and out["real_rgb"] is None and out["pixels"] == 0
    out = region_means([empty, full])
    assert out["measured"] and out["real_rgb"] == [10.0, 20.0, 30.0] and out["pixels"] == 4


def test_a_failing_section_shows_its_failure_and_the_others_are_drawn(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import simgap.report.plots_latency as pl

    def boom(finding: Any) -> list[str]:
        raise ValueError("a plot that cannot be drawn")

    monkeypatch.setattr(pl, "plots", boom)
    page = render_report(
        {
            "rig": "r",
            "findings": [_latency(), _appearance({"object": EMPTY})],
            "stop": {"verdict": "cause_found", "branch": "latency"},
        }
    )
    assert "could not be drawn" in page and "a plot that cannot be drawn" in page
    assert "Latency over the period" in page and "not measured" in page  # the rest is there
    assert "report section" in caplog.text


def test_words_that_are_not_words_do_not_take_the_page_down() -> None:
    deep: Any = 1
    for _ in range(3000):  # str() of this raises RecursionError
        deep = [deep]
    lat = {**_latency(), "title": deep, "verdict": deep}
    page = render_report(
        {
            "rig": deep,
            "findings": [lat, _appearance({"object": EMPTY})],
            "stop": {"verdict": "cause_found"},
        }
    )
    assert "(list)" in page and "Appearance" in page
    assert render_report({"rig": "r", "findings": float("nan")}).startswith("<!doctype html>")


def test_diagnose_writes_findings_and_a_report_when_a_section_raises(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simgap.diagnose as dg
    import simgap.report.plots_latency as pl
    from tests.factories import write_rig

    rig = write_rig(tmp_path / "rig", demo_model)

    def ladder(ctx: Any, comparability: Any = None) -> Diagnosis:
        lat = Finding.from_dict(_latency())
        # as the appearance branch writes it: of its exposure kind, so its record
        app_f = Finding.from_dict({**_appearance({"object": EMPTY}), "kind": "exposure"})
        return Diagnosis(rig="r", findings=(lat, app_f), stop={"verdict": "cause_found"})

    def boom(finding: Any) -> list[str]:
        raise TypeError("unsupported operand type(s) for +: 'NoneType' and 'NoneType'")

    monkeypatch.setattr(dg, "run_ladder", ladder)
    monkeypatch.setattr(pl, "plots", boom)
    out = tmp_path / "out"
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(out)])
    assert r.exit_code == 0, r.output
    found = json.loads((out / "findings.json").read_text())
    assert [f["branch"] for f in found["findings"]] == ["latency", "appearance"]
    page = (out / "report.html").read_text()
    assert "could not be drawn" in page and "NoneType" in page and "Appearance" in page


def _png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG")
    return buf.getvalue()


def _camera_dataset(root: Path, lengths: tuple[int, ...], model: Path) -> Path:
    """A LeRobot v3 dataset of episodes of ``lengths`` frames with a 96 x 96 wrist camera
    (an image feature rendered from the model at the recorded joint angles)."""
    from tests._twin import Twin, expose

    rng = np.random.default_rng(0)
    start = np.array([0.0, -0.6, 0.9, 0.9, 0.0, 0.6])
    eps, qs = [], []
    for n in lengths:  # poses held 15 frames each (one render per pose keeps this fast)
        k = np.arange(n) // 15
        q = start + 0.15 * np.sin(k)[:, None] * np.array([1, 1, 1, 1, 1, 0])
        rec = np.rad2deg(q).astype(np.float32)
        rec[:, 5] = 40.0
        eps.append({"observation.state": rec, "action": rec})
        qs.append(q)
    write_v3_dataset(root, eps, fps=15)
    twin = Twin(model)
    rendered: dict[bytes, bytes] = {}
    imgs = []
    for q in np.concatenate(qs):
        if q.tobytes() not in rendered:
            rgb, seg = twin.render(q)
            rendered[q.tobytes()] = _png(expose(rgb, seg, 1.2, 10.0, rng))
        imgs.append(rendered[q.tobytes()])
    twin.close()
    path = root / "data/chunk-000/file-000.parquet"
    col = pa.array(
        [{"bytes": b, "path": None} for b in imgs],
        type=pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
    )
    pq.write_table(pq.read_table(path).append_column("observation.images.wrist", col), path)
    info = root / "meta/info.json"
    meta = json.loads(info.read_text())
    meta["features"]["observation.images.wrist"] = {
        "dtype": "image",
        "shape": [96, 96, 3],
        "names": ["height", "width", "channel"],
    }
    info.write_text(json.dumps(meta))
    return root


def _diagnose_camera_dataset(tmp_path: Path, model: Path) -> dict[str, Any]:
    from tests._twin import write_rig

    ds = _camera_dataset(tmp_path / "ds", (45, 60, 75), model)
    rig = write_rig(tmp_path / "rig", model, f'dataset = "{ds}"\n')
    rig.write_text(
        rig.read_text().replace(
            'name = "wrist_cam"\n', 'name = "wrist_cam"\nrecorded = "observation.images.wrist"\n'
        )
    )
    out = tmp_path / "out"
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(out)])
    assert r.exit_code == 0, r.output
    found = json.loads((out / "findings.json").read_text())
    regions = [
        figures_of(f, ExposureFigures).regions
        for f in found["findings"]
        if f["branch"] == "appearance" and f["kind"] == ExposureFigures.kind
    ]
    assert regions, [(f["branch"], f["verdict"], f["title"]) for f in found["findings"]]
    for r_ in regions[0].values():  # measured, or says it is not: never null colours
        assert r_.measured is (r_.real_rgb is not None)
    page = (out / "report.html").read_text()
    assert "could not be drawn" not in page
    return found


@pytest.mark.usefixtures("gl_backend")
def test_diagnose_on_unequal_episodes_with_a_camera_finishes(
    tmp_path: Path, demo_model: Path
) -> None:
    """Episodes of 45/60/75 frames and a camera through the whole ladder, the actuator
    identification included (about 25 s on 2 cores): findings.json and a report."""
    found = _diagnose_camera_dataset(tmp_path, demo_model)
    assert any(
        f["branch"] == "actuator" and f["verdict"] != "not_measured" for f in found["findings"]
    )


# -- 3. values checked at the boundary, with units ----------------------------------------


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--patch-diameter-mm", "nan", "--sliding", "0.4"], ["--patch-diameter-mm", "nan"]),
        (["--depth-mm", "nan"], ["--depth-mm", "nan"]),
        (["--depth-mm", "inf"], ["--depth-mm", "inf"]),
        (["--patch-diameter-mm", "6", "--sliding", "nan"], ["--sliding", "nan"]),
        (["--patch-diameter-mm", "0.008", "--sliding", "0.4"], ["did you mean 8 mm", "metres"]),
        (["--depth-mm", "0.008"], ["did you mean 8 mm", "metres"]),
        (["--tilt-deg", "89.999"], ["71.6", "5.73e+04"]),
        (["--tilt-deg", "20", "--sliding", "0.3"], ["not both", "0.364"]),
        (["--patch-diameter-mm", "150", "--sliding", "0.4"], ["0.5 to 100 mm"]),
    ],
)
def test_contact_measure_refuses_implausible_numbers(
    args: list[str], words: list[str], tmp_path: Path
) -> None:
    out = tmp_path / "m.json"
    r = runner.invoke(app, ["contact", "measure", *args, "--json", str(out)])
    assert r.exit_code == 2, r.output
    assert "Fix:" in r.output and not out.exists()
    for w in words:
        assert w in r.output, (w, r.output)
    assert "was it millimetres" not in r.output  # the old advice named the wrong unit


def test_contact_measure_takes_plausible_bench_numbers(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = runner.invoke(
        app,
        [
            "contact",
            "measure",
            "--tilt-deg",
            "19.3",
            "--patch-diameter-mm",
            "6",
            "--depth-mm",
            "0",
            "--json",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    got = json.loads(out.read_text())
    assert got["sliding"] == pytest.approx(0.3502, abs=1e-4)
    assert got["torsional_m"] == pytest.approx(got["sliding"] * 0.006 / 3)
    assert got["rolling_m"] == 0.0


@pytest.mark.parametrize(
    ("fps", "words"),
    [
        (True, ["the boolean true"]),
        (False, ["the boolean false"]),
        ("15", ['the string "15"', "without quotes: 15"]),
        (None, ["null"]),
        ([30], ["a list"]),
        ({"v": 30}, ["an object"]),
    ],
)
def test_lerobot_fps_of_the_wrong_json_type_is_refused_by_name(
    fps: Any, words: list[str], tmp_path: Path
) -> None:
    from simgap.errors import InputError
    from simgap.evidence.lerobot import read_lerobot_dataset

    root = write_v3_dataset(
        tmp_path / "ds", [{"observation.state": np.zeros((5, 6)), "action": np.zeros((5, 6))}]
    )
    info = root / "meta/info.json"
    meta = json.loads(info.read_text())
    meta["fps"] = fps
    info.write_text(json.dumps(meta))
    with pytest.raises(InputError) as e:
        read_lerobot_dataset(root)
    msg = str(e.value)
    assert "fps" in msg and "info.json" in msg
    for w in words:
        assert w in msg, (w, msg)


# -- 4. no false alarms on real logs ------------------------------------------------------


def test_one_second_log_stamps_give_no_tick_interval(tmp_path: Path) -> None:
    from simgap.branches import latency
    from simgap.evidence.lerobot_logs import read_lerobot_log
    from tests.lerobot_log_lines import client_log, server_log

    # LeRobot 0.6.1 stamps its lines to the second: 30 ticks share one stamp
    client = read_lerobot_log(
        client_log(tmp_path / "robot_client_1.log", [20, 15, 10] * 40, [30.0] * 300)
    )
    stages = [(1.0, 5.0, 300.0 + k % 7, 2.0) for k in range(120)]
    server = read_lerobot_log(server_log(tmp_path / "policy_server_1.log", stages))
    for logs in ([client], [server, client]):
        f = latency.analyse(None, logs, 1 / 30)
        warns = " ".join(f.details.warnings)
        assert "control_period_mismatch" not in warns, warns  # was: median tick interval 1 s
        assert "tick_interval_not_measured" in warns and "one-second" in warns
        assert f.figures.tick_stamp_resolution_s == 1.0


def test_a_queue_verdict_does_not_sit_beside_a_timing_that_gives_none(tmp_path: Path) -> None:
    from simgap.branches import latency
    from simgap.evidence.lerobot_logs import read_lerobot_log
    from simgap.finding import Verdict
    from tests.lerobot_log_lines import client_log, server_log

    client = read_lerobot_log(
        client_log(tmp_path / "robot_client_1.log", [9, 4, 0, 0] * 15, [30.0] * 60)
    )
    stages = [(1.0, 5.0, 300.0, 2.0) for _ in range(40)]  # 40 inferences: too few for a p95
    server = read_lerobot_log(server_log(tmp_path / "policy_server_1.log", stages))
    f = latency.analyse(None, [server, client], 1 / 30)
    assert f.verdict is Verdict.IMPLICATED
    assert "Too few ticks for a p95" not in f.summary
    assert f.summary.startswith("The async client's action queue was empty")
    assert "Implicated by the action queue alone" in f.summary
    assert "the loop timing gives no verdict of its own (inconclusive)" in f.summary


# -- 2. internal errors on bad input become clear errors ----------------------------------


@pytest.mark.parametrize(
    ("asked", "present", "chosen", "note"),
    [
        ("osmesa", {"EGL"}, "egl", "libOSMesa is not installed: using egl instead"),
        ("egl", {"OSMesa"}, "osmesa", "libEGL is not installed: using osmesa instead"),
        ("osmesa", {"OSMesa", "EGL"}, None, ""),  # the named backend is tried first
        ("osmesa", set(), None, "neither is any other"),
        ("", {"OSMesa"}, "osmesa", ""),
    ],
)
def test_a_named_gl_backend_that_is_missing_falls_back_to_the_next(
    monkeypatch: pytest.MonkeyPatch, asked: str, present: set[str], chosen: str | None, note: str
) -> None:
    import ctypes.util

    import simgap.sim as sim

    monkeypatch.setattr(sim.sys, "platform", "linux")
    monkeypatch.setattr(ctypes.util, "find_library", lambda lib: lib if lib in present else None)
    monkeypatch.setenv("MUJOCO_GL", asked)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sim, "GL_NOTE", "")
    assert sim._default_gl_backend() == chosen
    assert note in sim.GL_NOTE and (bool(note) == bool(sim.GL_NOTE))


def test_a_gl_context_that_cannot_start_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import mujoco

    from simgap.sim.render import RenderBackendError
    from simgap.sim.scene import make_renderer

    def no_gl(*a: Any, **k: Any) -> None:
        raise AttributeError("'NoneType' object has no attribute 'glGetError'")

    monkeypatch.setattr(mujoco, "Renderer", no_gl)
    with pytest.raises(RenderBackendError, match="glGetError.*MUJOCO_GL=osmesa"):
        make_renderer(mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>"))


def test_randomize_mujoco_with_a_missing_rig_model_is_a_clear_error(tmp_path: Path) -> None:
    from simgap.finding import Verdict
    from simgap.sim.variants import write_variants
    from simgap.values.randomization import RandomizationSpec
    from tests.factories import write_rig

    fs = (Finding("contact", Verdict.IMPLICATED, figures={"mass_best": 0.028}),)
    p = tmp_path / "findings.json"
    p.write_text(Diagnosis(rig="test-so101", findings=fs, stop={}, seed=3).to_json())
    rig = write_rig(tmp_path / "rig", "models/missing.xml")
    out = tmp_path / "variants"
    r = runner.invoke(
        app,
        [
            "randomize",
            str(p),
            "--format",
            "mujoco",
            "--out",
            str(out),
            "--rig",
            str(rig),
            "--n",
            "2",
        ],
    )
    assert r.exit_code == 2, r.output  # was: internal error (ParseXML at variants.py:29)
    assert "model.path" in r.output and "missing.xml" in r.output and "Fix:" in r.output
    assert not out.exists()
    broken = tmp_path / "broken.xml"
    broken.write_text("<mujoco><worldbody><body>")
    from simgap.errors import InputError

    with pytest.raises(InputError, match="broken.xml"):
        write_variants(RandomizationSpec("r", 0, None, ()), broken, tmp_path / "v2", n=1)
    assert not (tmp_path / "v2").exists()


def test_sigterm_during_an_import_exits_143_without_a_traceback(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    (tmp_path / "slow_import.py").write_text(
        "import time\nprint('importing', flush=True)\ntime.sleep(60)\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from simgap.cli._app import handles_errors\n"
        "@handles_errors\n"
        "def command():\n"
        "    import slow_import  # a heavy import (mujoco, torch) stopped half way\n"
        "command()\n"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "importing"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert "Traceback" not in err and "internal error" not in err, err


# -- 5. a full disk or a folder that cannot be written names the path, before the work ----


def _no_ladder(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    import simgap.diagnose as dg

    ran: list[int] = []

    def ladder(ctx: Any, comparability: Any = None) -> Diagnosis:
        ran.append(1)
        return Diagnosis(rig="r", findings=(), stop={})

    monkeypatch.setattr(dg, "run_ladder", ladder)
    return ran


def test_a_full_disk_is_refused_before_the_diagnosis(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    import simgap.outputs as outputs
    from tests.factories import write_rig

    rig = write_rig(tmp_path / "rig", demo_model)
    ran = _no_ladder(monkeypatch)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        outputs.shutil, "disk_usage", lambda p: type(usage)(usage.total, usage.total - 1000, 1000)
    )
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and not ran, r.output  # was: the whole diagnosis, then exit 2
    assert str(tmp_path) in r.output and "MB free" in r.output and "Fix:" in r.output


def test_a_folder_that_takes_no_file_is_refused_before_the_diagnosis(
    tmp_path: Path, demo_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    import simgap.outputs as outputs
    from tests.factories import write_rig

    rig = write_rig(tmp_path / "rig", demo_model)
    ran = _no_ladder(monkeypatch)

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "fsync", full)
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and not ran, r.output
    assert "No space left on device" in r.output and str(tmp_path) in r.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".simgap-probe")]


def test_a_write_that_fills_the_disk_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    import simgap.outputs as outputs

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "fsync", full)
    out = tmp_path / "m.json"
    r = runner.invoke(app, ["contact", "measure", "--tilt-deg", "19.3", "--json", str(out)])
    assert r.exit_code == 2, r.output  # was: "error: [Errno 28] No space left on device"
    assert f"{out}: No space left on device" in r.output.replace("\n", "")
    assert not list(tmp_path.iterdir())
