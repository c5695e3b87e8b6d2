import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from simgap.cli import app
from simgap.demo.timing import write_timing_log
from tests.factories import write_rig
from tests.lerobot_log_lines import USER_LINE, client_log, server_log

runner = CliRunner()


def test_latency_json_keys_on_demo_log(tmp_path: Path) -> None:
    log = write_timing_log(tmp_path / "timing.jsonl", seed=0)
    out = tmp_path / "lat.json"
    r = runner.invoke(app, ["latency", str(log), "--control-dt", str(1 / 15), "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["branch"] == "latency" and d["verdict"] == "implicated" and d["next_step"]
    fig = d["figures"]
    for key in (
        "total_p50_s",
        "total_p95_s",
        "control_dt_s",
        "overrun_fraction",
        "ticks",
        "episodes",
        "stages",
    ):
        assert key in fig, key
    assert fig["ticks"] == 3000 and fig["episodes"] == 20
    assert set(fig["stages"]) == {"camera", "preprocess", "inference", "network", "command"}
    for s in fig["stages"].values():
        assert {"p50_s", "p95_s"} <= set(s)
    recs = [json.loads(x) for x in log.read_text().splitlines()]
    totals = np.array([sum(r["stages"].values()) for r in recs])
    assert abs(fig["total_p95_s"] - np.quantile(totals, 0.95)) < 1e-9
    assert fig["overrun_fraction"] == np.mean(totals > 1 / 15)
    assert {"rate_per_s_median", "rate_per_s_min", "rate_per_s_max", "episodes"} <= set(
        fig["added_delay"]
    )
    assert "total" in r.output and "implicated" in r.output


def test_latency_lerobot_logs(tmp_path: Path) -> None:
    server = server_log(
        tmp_path / "policy_server_1.log", [(1.0, 5.0, 20.0 + k % 5, 2.0) for k in range(150)]
    )
    client = client_log(tmp_path / "robot_client_1.log", [20, 10, 0, 0] * 10, [2.0] * 100)
    user = tmp_path / "policy_server_2.log"
    user.write_text(USER_LINE + "\n")
    out = tmp_path / "l.json"
    r = runner.invoke(
        app, ["latency", str(server), str(client), "--control-dt", "0.0333", "--json", str(out)]
    )
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["figures"]["source"] == "policy-server log"
    assert d["figures"]["queue"]["empty_fraction"] == 0.5 and d["verdict"] == "implicated"
    r2 = runner.invoke(app, ["latency", str(user), "--control-dt", "0.0333"])
    assert r2.exit_code == 0 and "inconclusive" in r2.output


def test_latency_from_rig(tmp_path: Path) -> None:
    write_timing_log(tmp_path / "timing.jsonl", seed=1, n_episodes=20, steps=30)
    rig = write_rig(
        tmp_path,
        "m.xml",
        '[deploy]\npolicy_server = "10.1.2.3:8080"\n[evidence]\ntiming_logs = ["timing.jsonl"]\n',
    )
    out = tmp_path / "r.json"
    r = runner.invoke(app, ["latency", "--rig", str(rig), "--json", str(out)])
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text())
    assert d["figures"]["control_dt_s"] == 0.0333333 and d["figures"]["ticks"] == 600
    assert d["figures"]["policy_server_remote"] is True and "unpickles" in d["next_step"]


def test_latency_bad_inputs_exit_2_without_output(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"episode": 0, "step": 0, "t": 0.0, "stages": {"a": 0.01}}\nnot json\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    nolines = tmp_path / "policy_server_9.log"
    nolines.write_text("INFO 2025-11-01 20:28:23 y_server.py:90 Server started\n")
    out = tmp_path / "x.json"
    cases = [
        ([str(bad), "--control-dt", "0.05"], "line 2"),
        ([str(empty), "--control-dt", "0.05"], "empty log"),
        ([str(nolines), "--control-dt", "0.05"], "DEBUG"),
        ([str(bad)], "--control-dt"),
        ([str(tmp_path / "missing.jsonl"), "--control-dt", "0.05"], "no such file"),
        ([str(bad), "--control-dt", "-1"], "positive"),
    ]
    for args, needle in cases:
        r = runner.invoke(app, ["latency", *args, "--json", str(out)])
        assert r.exit_code == 2, (args, r.output)
        assert needle in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
        assert not out.exists()


def test_demo_shows_latency_implicated(demo_run: tuple[Path, Path, str]) -> None:
    out = demo_run[0]
    d = json.loads((out / "findings.json").read_text())
    (lat,) = [f for f in d["findings"] if f["branch"] == "latency"]
    assert lat["verdict"] == "implicated"
    assert lat["figures"]["total_p95_s"] > lat["figures"]["control_dt_s"]
    html = (out / "report.html").read_text()
    assert "Per-tick loop total against the control period" in html
    assert "Per-stage p50 and p95, stacked" in html
