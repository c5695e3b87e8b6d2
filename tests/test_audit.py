"""The plumbing audit: each deployment script with a bug, run against the fake arm, yields
its finding with the right figure; the same script with the bug fixed yields no finding."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.branches.context import Context
from simgap.branches.plumbing import run_audit
from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.trace import read_trace
from simgap.fakearm.script import run_script
from simgap.finding import Verdict
from simgap.plumbing import audit
from simgap.plumbing.setup import check_policy_server, check_stale_first_frame
from simgap.rig import load_rig
from tests.factories import write_rig

SCRIPTS = Path(__file__).parent / "deploy_scripts"
DT = 1.0 / 15.0
runner = CliRunner()

BUGS = {  # script stem -> the title of the finding it must produce
    "torque_jump": "Torque on before goal = present",
    "gripper_degrees": "Gripper unit or scale",
    "gripper_rename": "Gripper unit or scale",
    "stale_frame": "Stale first frame",
    "joint_limits": "Actions outside joint limits or clipped",
    "control_rate": "Control rate",
    "checkpoint": "Checkpoint loads only on a GPU",
    "temperature": "Motor temperature drift",
    "policy_server": "Policy server address",
}


def _run(stem: str, tmp: Path) -> tuple[Path, dict[str, Any]]:
    trace = tmp / f"{stem}.jsonl"
    run_script(SCRIPTS / f"{stem}.py", trace)
    rep = run_audit(trace, _rig(tmp))
    return trace, {f.title: f for f in rep.findings}


def _rig(tmp: Path, extra: str = "") -> Path:
    # the deployment loop should run at 15 Hz
    p = write_rig(tmp / "rig", "m.xml", extra)
    p.write_text(p.read_text().replace("dt_s = 0.0333333", "dt_s = 0.0666666667"))
    return p


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("deploy")
    out = {}
    for stem in BUGS:
        for kind in ("bug", "fixed"):
            out[f"{stem}_{kind}"] = _run(f"{stem}_{kind}", tmp)
    return out


def test_rig_period_is_the_policys(tmp_path: Path) -> None:
    assert load_rig(_rig(tmp_path)).control_dt_s == pytest.approx(DT, rel=1e-6)


@pytest.mark.parametrize("stem", sorted(BUGS))
def test_bug_found_and_fix_clean(runs: dict[str, Any], stem: str) -> None:
    _, bug = runs[f"{stem}_bug"]
    _, fixed = runs[f"{stem}_fixed"]
    title = BUGS[stem]
    assert bug[title].verdict is Verdict.IMPLICATED, bug[title].summary
    others = [t for t, f in bug.items() if f.verdict is Verdict.IMPLICATED and t != title]
    assert others == [], f"the {stem} script also tripped {others}"
    assert [t for t, f in fixed.items() if f.verdict is Verdict.IMPLICATED] == []
    assert fixed[title].verdict is Verdict.ELIMINATED


def _rest_ticks(model: Path) -> dict[str, float]:
    """Power-up encoder ticks from the MJCF's rest keyframe, ranges centred on tick 2048."""
    root = ET.parse(model).getroot()
    joints = {
        j.get("name"): [float(x) for x in j.get("range", "").split()]
        for j in root.iter("joint")
        if j.get("range")
    }
    key = [k for k in root.iter("key") if k.get("name") == "rest"][0]
    q = [float(x) for x in key.get("qpos", "").split()][:6]
    names = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
    return {
        n: round(2048 + (qi - sum(joints[n]) / 2) * 4096 / (2 * math.pi))
        for n, qi in zip(names, q, strict=True)
    }


def test_torque_jump_figure_is_the_power_up_distance(
    runs: dict[str, Any], demo_model: Path
) -> None:
    f = runs["torque_jump_bug"][1]["Torque on before goal = present"]
    expect = _rest_ticks(demo_model)  # the goal registers read 0, so distance = present
    for m, ticks in expect.items():
        assert f.figures.distance_ticks[m] == pytest.approx(ticks, abs=2)
    assert f.figures.max_distance_ticks == pytest.approx(max(expect.values()), abs=2)
    assert f.figures.max_distance_deg == pytest.approx(max(expect.values()) * 360 / 4096, abs=0.2)
    assert f.figures.source == "registers"
    fixed = runs["torque_jump_fixed"][1]["Torque on before goal = present"]
    assert fixed.figures.max_distance_ticks <= 2


def test_gripper_figures(runs: dict[str, Any]) -> None:
    deg = runs["gripper_degrees_bug"][1]["Gripper unit or scale"]
    # 40 ticks: the first 20 open (0.7 rad), the last 20 close (-0.174533 rad = -10 deg)
    assert deg.figures.requested_min == pytest.approx(math.degrees(-0.174533), abs=1e-3)
    assert deg.figures.clipped_fraction == pytest.approx(0.5)
    assert deg.figures.longest_pinned_run_ticks == 20
    ren = runs["gripper_rename_bug"][1]["Gripper unit or scale"]
    assert ren.figures.looks_like == "radians"
    assert ren.key_figure == "requested_span"
    assert ren.figures.requested_span == pytest.approx(0.7 + 0.174533)


def test_limits_figure(runs: dict[str, Any]) -> None:
    f = runs["joint_limits_bug"][1]["Actions outside joint limits or clipped"]
    half_ticks = round(2.7438473 * 4096 / (2 * math.pi))  # wrist_roll's half range
    limit_deg = half_ticks * 360 / 4095  # LeRobot's degrees formula
    assert f.figures.worst_joint == "wrist_roll.pos"
    assert f.figures.per_joint["wrist_roll.pos"].ticks_outside == 20
    assert f.figures.max_excess == pytest.approx(200.0 - limit_deg, abs=1e-6)


def test_control_rate_figure(runs: dict[str, Any]) -> None:
    f = runs["control_rate_bug"][1]["Control rate"]
    # a full period after 40 ms of inference, a 3 ms bus read and a 1 ms bus write
    assert f.figures.median_dt_s == pytest.approx(DT + 0.044, abs=1e-9)
    assert f.figures.period_ratio == pytest.approx((DT + 0.044) / DT, rel=1e-6)
    fixed = runs["control_rate_fixed"][1]["Control rate"]
    assert fixed.figures.median_dt_s == pytest.approx(DT, abs=1e-9)


def test_stale_frame_figure(runs: dict[str, Any]) -> None:
    f = runs["stale_frame_bug"][1]["Stale first frame"]
    # episode 0 is the drive home before the first reset; then three reset episodes
    assert f.figures.episodes_checked == 4 and f.figures.resets_logged == 3
    assert f.figures.stale_episodes == f.figures.before_reset_episodes == 3
    assert 0.0 < f.figures.max_taken_before_reset_s < 1.0 / 30.0 + 0.004
    fixed = runs["stale_frame_fixed"][1]["Stale first frame"]
    assert fixed.figures.episodes_checked == 4 and fixed.figures.resets_logged == 3
    assert fixed.figures.repeated_image_episodes == 0


def test_temperature_figure_matches_the_logged_reads(runs: dict[str, Any]) -> None:
    trace, found = runs["temperature_bug"]
    f = found["Motor temperature drift"]
    by_ep: dict[int, list[float]] = {}
    for line in trace.read_text().splitlines():
        rec = json.loads(line)
        for r in rec["reads"]:
            if r["register"] == "Present_Temperature" and r["motor"] == "shoulder_lift":
                by_ep.setdefault(rec["episode"], []).append(r["value"])
    means = [float(np.mean(by_ep[k])) for k in sorted(by_ep)]
    assert f.figures.worst_motor == "shoulder_lift"
    assert f.figures.max_drift_c == pytest.approx(means[-1] - means[0])
    assert f.figures.max_drift_c > 5.0


def test_checkpoint_figure_and_torch_behaviour(runs: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    trace, found = runs["checkpoint_bug"]
    f = found["Checkpoint loads only on a GPU"]
    assert f.figures.storage_locations == ("cuda:0",)
    assert f.figures.loads_with_map_location_cpu is True
    ckpt = trace.with_suffix(".pt")
    if not torch.cuda.is_available():
        assert f.figures.loads_without_map_location is False
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(ckpt, weights_only=True)
    assert torch.load(ckpt, map_location="cpu", weights_only=True)["w"].shape == (3, 4)
    fixed = runs["checkpoint_fixed"][1]["Checkpoint loads only on a GPU"]
    assert fixed.figures.storage_locations == ("cpu",)


def test_policy_server_figure(runs: dict[str, Any]) -> None:
    f = runs["policy_server_bug"][1]["Policy server address"]
    assert f.figures.all_interfaces is True and f.figures.loopback is False


@pytest.mark.parametrize(
    "addr,loopback",
    [
        ("127.0.0.1:8080", True),
        ("localhost:9000", True),
        ("[::1]:8080", True),
        ("192.168.1.20:8080", False),
        ("::", False),
        ("robot-pc.lan:8080", False),
    ],
)
def test_policy_server_addresses(addr: str, loopback: bool) -> None:
    f = check_policy_server({}, addr)
    assert f is not None and f.figures.loopback is loopback
    assert (f.verdict is Verdict.IMPLICATED) is (not loopback)


# ---- traces written by hand: what other tools (the demo bench) must provide --------------


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _minimal_stale_trace(path: Path, stale: bool, with_reset: bool = True) -> Path:
    """Two episodes; only episode, tick, t, image_t, image_sha1 and reset events."""
    recs = []
    tick = 0
    for ep in range(2):
        t0 = 10.0 * ep
        for k in range(3):
            t = t0 + 0.1 + k / 15
            first = k == 0
            img_t = (t0 - 0.05 if stale else t0 + 0.02) if first else t - 0.01
            rec: dict[str, Any] = {
                "tick": tick,
                "episode": ep,
                "t": t,
                "observation": {"image_t": img_t, "image_sha1": f"e{ep}k{k}"},
                "events": [{"name": "reset", "t": t0}] if first and with_reset else [],
            }
            recs.append(rec)
            tick += 1
    return _write(path, recs)


def test_stale_first_frame_from_minimal_trace(tmp_path: Path) -> None:
    f = check_stale_first_frame(read_trace(_minimal_stale_trace(tmp_path / "s.jsonl", True)))
    assert f is not None and f.verdict is Verdict.IMPLICATED
    assert f.figures.before_reset_episodes == 2
    assert f.figures.max_taken_before_reset_s == pytest.approx(0.05)
    ok = check_stale_first_frame(read_trace(_minimal_stale_trace(tmp_path / "o.jsonl", False)))
    assert ok is not None and ok.verdict is Verdict.ELIMINATED


def test_stale_first_frame_by_hash_without_reset_events(tmp_path: Path) -> None:
    recs = [
        json.loads(x)
        for x in _minimal_stale_trace(tmp_path / "a.jsonl", False, False).read_text().splitlines()
    ]
    recs[3]["observation"]["image_sha1"] = recs[2]["observation"]["image_sha1"]
    f = check_stale_first_frame(read_trace(_write(tmp_path / "b.jsonl", recs)))
    assert f is not None and f.verdict is Verdict.IMPLICATED
    assert f.figures.repeated_image_episodes == 1
    assert f.figures.resets_logged == 0


def test_stale_first_frame_from_image_age(tmp_path: Path) -> None:
    recs = [
        {
            "tick": 0,
            "episode": 0,
            "t": 1.0,
            "events": [{"name": "reset", "t": 0.9}],
            "observation": {"image_age_s": 0.3},
        },
        {"tick": 1, "episode": 0, "t": 1.1, "observation": {"image_age_s": 0.01}},
    ]
    f = check_stale_first_frame(read_trace(_write(tmp_path / "a.jsonl", recs)))
    assert f is not None and f.figures.max_taken_before_reset_s == pytest.approx(0.2)
    recs[0]["events"] = ["reset"]  # a name without a time: only the hash test could apply
    f = check_stale_first_frame(read_trace(_write(tmp_path / "b.jsonl", recs)))
    assert f is not None and f.verdict is Verdict.ELIMINATED and f.figures.resets_logged == 0


def test_torque_jump_from_first_action_without_registers(tmp_path: Path) -> None:
    recs = [
        {
            "tick": 0,
            "episode": 0,
            "t": 0.0,
            "meta": {"use_degrees": True},
            "observation": {"elbow_flex.pos": 90.0},
            "action": {"elbow_flex.pos": 0.0},
        }
    ]
    f = audit(read_trace(_write(tmp_path / "a.jsonl", recs)))[0]
    assert f.title.startswith("Torque on") and f.figures.source == "first_action"
    assert f.figures.max_distance_deg == pytest.approx(90.0)
    assert f.figures.max_distance_ticks == pytest.approx(1024.0)


# ---- bad input -------------------------------------------------------------------------


def test_missing_ticks_named(tmp_path: Path) -> None:
    recs = [{"tick": k, "episode": 0, "t": k / 15} for k in (0, 1, 2, 5, 6)]
    with pytest.raises(InputError) as e:
        read_trace(_write(tmp_path / "a.jsonl", recs))
    assert "missing ticks [3, 4]" in str(e.value) and "a.jsonl" in str(e.value)


def test_unknown_feature_lists_known(tmp_path: Path) -> None:
    recs = [{"tick": 0, "episode": 0, "t": 0.0, "action": {"shoulder_pan": 1.0}}]
    with pytest.raises(NameNotFoundError) as e:
        read_trace(_write(tmp_path / "a.jsonl", recs))
    assert "shoulder_pan.pos" in str(e.value) and "gripper.pos" in str(e.value)
    assert (
        "'shoulder_pan'" in str(e.value)
        or "shoulder_pan;" in str(e.value)
        or "got shoulder_pan" in str(e.value)
    )


def test_mixed_units_within_a_feature(tmp_path: Path) -> None:
    recs = [
        {
            "tick": 0,
            "episode": 0,
            "t": 0.0,
            "meta": {"units": {"gripper.pos": "pct"}},
            "action": {"gripper.pos": 50.0},
        },
        {
            "tick": 1,
            "episode": 0,
            "t": 0.1,
            "units": {"gripper.pos": "rad"},
            "action": {"gripper.pos": 0.5},
        },
    ]
    with pytest.raises(InputError) as e:
        read_trace(_write(tmp_path / "a.jsonl", recs))
    msg = str(e.value)
    assert "gripper.pos" in msg and "pct from tick 0" in msg and "rad from tick 1" in msg


def test_cli_audit_json_and_bad_input(runs: dict[str, Any], tmp_path: Path) -> None:
    trace = runs["torque_jump_bug"][0]
    out = tmp_path / "audit.json"
    r = runner.invoke(
        app(), ["audit", str(trace), "--rig", str(_rig(tmp_path)), "--json", str(out)]
    )
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert set(d) == {
        "trace",
        "rig",
        "n_ticks",
        "n_episodes",
        "checks_run",
        "skipped",
        "implicated",
        "findings",
    }
    assert d["implicated"] == ["Torque on before goal = present"]
    assert "Stale first frame" in d["skipped"]  # no camera in this script
    bad = _write(
        tmp_path / "bad.jsonl",
        [{"tick": 0, "episode": 0, "t": 0.0}, {"tick": 2, "episode": 0, "t": 0.1}],
    )
    r = runner.invoke(app(), ["audit", str(bad)])
    assert r.exit_code == 2 and "missing ticks [1]" in r.stderr
    assert "Traceback" not in r.stderr


def app() -> Any:
    from simgap.cli import app as typer_app

    return typer_app


def test_plumbing_branch_and_plots(runs: dict[str, Any], tmp_path: Path) -> None:
    from simgap.branches.plumbing import assess
    from simgap.report.plots_plumbing import plots

    trace = runs["temperature_bug"][0]
    rig = load_rig(_rig(tmp_path, f'[evidence]\ntrace = "{trace}"\n'))
    found = assess(Context(rig=rig, evidence=EvidenceBundle(rig)))
    assert all(f.branch == "plumbing" for f in found)
    assert [f.title for f in found if f.verdict is Verdict.IMPLICATED] == [
        "Motor temperature drift"
    ]
    svg = [s for f in found for s in plots(f.to_dict())]
    # temperatures; the torque-on distances are all zero in this script, so not drawn
    assert all("<svg" in s for s in svg) and any("Temperature drift" in s for s in svg)
    assert not any("Distance to the goal" in s for s in svg)
    none = load_rig(write_rig(tmp_path / "b", "m.xml"))
    (nm,) = assess(Context(rig=none, evidence=EvidenceBundle(none)))
    assert nm.verdict is Verdict.NOT_MEASURED and "evidence.trace" in nm.summary


def test_every_check_carries_its_typed_figures(runs: dict[str, Any]) -> None:
    """Each plumbing check's Finding is its record of simgap.figures.plumbing, kind and all,
    and survives findings.json's round trip."""
    from simgap.figures import plumbing as rec
    from tests.typed_records import check_typed

    by_title = {
        "Torque on before goal = present": rec.TorqueJumpFigures,
        "Gripper unit or scale": rec.GripperUnitFigures,
        "Stale first frame": rec.StaleFirstFrameFigures,
        "Actions outside joint limits or clipped": rec.JointLimitsFigures,
        "Control rate": rec.ControlRateFigures,
        "Checkpoint loads only on a GPU": rec.CheckpointFigures,
        "Motor temperature drift": rec.TemperatureDriftFigures,
        "Policy server address": rec.PolicyServerFigures,
    }
    details = {
        rec.StaleFirstFrameFigures: rec.StaleFirstFrameDetails,
        rec.CheckpointFigures: rec.CheckpointDetails,
    }
    seen = set()
    for _, found in runs.values():
        for title, f in found.items():
            figures = by_title[title]
            check_typed(f, figures, details.get(figures))
            seen.add(figures)
    assert seen == set(rec.PLUMBING_FIGURES)
