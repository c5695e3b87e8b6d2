import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from simgap.branches import latency
from simgap.branches.context import Context
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.lerobot_logs import read_lerobot_log
from simgap.evidence.timing import TimingLog
from simgap.finding import Verdict
from simgap.latency.stats import exponential_rate, fit_added_delay
from simgap.rig import load_rig
from simgap.series import StageTimes
from tests.factories import write_rig
from tests.lerobot_log_lines import client_log

DT = 1 / 15


def _log(
    stages: dict[str, np.ndarray],
    episodes: int,
    t: np.ndarray | None = None,
) -> TimingLog:
    n = len(next(iter(stages.values())))
    per = n // episodes
    ep = np.repeat(np.arange(episodes), per)[:n]
    step = np.tile(np.arange(per), episodes)[:n]
    if t is None:
        t = np.arange(n) * DT
    return TimingLog(times=StageTimes(t=t, episode=ep, step=step, stages=stages))


def test_known_lognormal_percentiles_with_intervals() -> None:
    rng = np.random.default_rng(1)
    mu, s = np.log(0.03), 0.25
    x = rng.lognormal(mu, s, size=40_000)
    f = latency.analyse(_log({"inference": x}, 40), [], DT, seed=0)
    dist = stats.lognorm(s, scale=np.exp(mu))
    fig = f.figures.to_dict()  # the JSON form, to loop over the percentiles by name
    for name, q, tol in (("p50", 0.50, 0.01), ("p95", 0.95, 0.02), ("p99", 0.99, 0.03)):
        expected = dist.ppf(q)
        assert fig[f"total_{name}_s"] == pytest.approx(expected, rel=tol)
        lo, hi = fig[f"total_{name}_ci_s"]
        assert lo <= fig[f"total_{name}_s"] <= hi
        assert hi - lo < 0.1 * expected
    assert fig["stages"]["inference"]["p95_s"] == pytest.approx(dist.ppf(0.95), rel=0.02)
    assert fig["total_max_s"] == pytest.approx(x.max())
    assert fig["jitter_s"] == pytest.approx(np.std(x, ddof=1))


def test_bootstrap_intervals_cover_the_true_quantile() -> None:
    from simgap.latency.stats import make_bootstrap, percentiles

    dist = stats.lognorm(0.3, scale=0.03)
    rng = np.random.default_rng(20)
    ep = np.repeat(np.arange(20), 100)
    hits = {"p50": 0, "p95": 0}
    reps = 60
    for r in range(reps):
        p = percentiles(
            dist.rvs(size=2000, random_state=rng), make_bootstrap(ep, seed=r, n_boot=250)
        )
        for name, q in (("p50", 0.5), ("p95", 0.95)):
            lo, hi = p.ci[name]
            hits[name] += lo <= dist.ppf(q) <= hi
    # nominal 95%: fewer than 48 of 60 covering (80%) would mean a broken interval
    assert hits["p50"] >= 48 and hits["p95"] >= 48


def test_total_is_sum_of_stages_gamma_percentiles_and_shares() -> None:
    rng = np.random.default_rng(2)
    rate = 100.0
    a, b = rng.exponential(1 / rate, 30_000), rng.exponential(1 / rate, 30_000)
    f = latency.analyse(_log({"camera": a, "network": b}, 30), [], DT, seed=0)
    g = stats.gamma(2, scale=1 / rate)  # the sum of two Exp(rate)
    assert f.figures.total_p50_s == pytest.approx(g.ppf(0.5), rel=0.02)
    assert f.figures.total_p95_s == pytest.approx(g.ppf(0.95), rel=0.02)
    assert f.figures.overrun_fraction == pytest.approx(g.sf(DT), abs=0.005)
    share = b.sum() / (a.sum() + b.sum())
    assert f.figures.network.share_fraction == pytest.approx(share)
    assert f.figures.stages["network"].share_fraction == pytest.approx(share)


def test_small_sample_quantiles_by_hand() -> None:
    # 1..200 ms: linear-interpolation quantile at q is 1 + q * 199 (ms), computed by hand
    x = np.arange(1, 201) * 1e-3
    f = latency.analyse(_log({"s": np.random.default_rng(0).permutation(x)}, 20), [], 1.0)
    assert f.figures.total_p50_s == pytest.approx((1 + 0.5 * 199) * 1e-3)
    assert f.figures.total_p95_s == pytest.approx((1 + 0.95 * 199) * 1e-3)
    assert f.figures.total_p99_s == pytest.approx((1 + 0.99 * 199) * 1e-3)


def test_exponential_rate_recovered_within_10_percent() -> None:
    rng = np.random.default_rng(3)
    for rate in (125.0, 400.0, 1000.0):
        assert exponential_rate(rng.exponential(1 / rate, 10_000)) == pytest.approx(rate, rel=0.10)


def test_added_delay_from_tick_intervals_per_episode() -> None:
    rng = np.random.default_rng(4)
    rates = rng.uniform(125, 1000, size=20)  # Peng et al.: rate fixed per episode
    per = 500  # 20 x 500 = 10,000 draws
    intervals = np.concatenate([DT + rng.exponential(1 / r, per) for r in rates])
    t = np.concatenate([[0.0], np.cumsum(intervals)[:-1]])
    # episodes are contiguous: the last interval of each episode crosses into the next one,
    # which the branch drops (steps restart), so each episode keeps per - 1 intervals
    f = latency.analyse(_log({"s": np.full(t.size, 0.01)}, 20, t=t), [], DT, seed=0)
    ad = f.figures.added_delay
    assert ad.source == "tick intervals" and ad.episodes == 20
    est = np.asarray(f.details.rates_per_s)
    assert np.all(np.abs(est / rates - 1) < 0.2)
    assert ad.rate_per_s_min == pytest.approx(rates.min(), rel=0.15)
    assert ad.rate_per_s_max == pytest.approx(rates.max(), rel=0.15)
    assert ad.rate_per_s_median == pytest.approx(np.median(rates), rel=0.10)
    assert ad.cv_median == pytest.approx(1.0, abs=0.15)  # exponential: cv = 1


def test_fit_added_delay_single_rate_10000_draws() -> None:
    rng = np.random.default_rng(5)
    d = rng.exponential(1 / 250.0, 10_000)
    fit = fit_added_delay(d, np.zeros(d.size, int))
    assert fit.pooled_rate_per_s == pytest.approx(250.0, rel=0.10)
    assert fit.rates_per_s[0] == pytest.approx(250.0, rel=0.10)


def test_verdict_implicated_states_margin() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(0.09, 0.004, 3000)
    f = latency.analyse(_log({"inference": x}, 20), [], DT)
    assert f.verdict is Verdict.IMPLICATED
    margin = np.quantile(x, 0.95) - DT
    assert f.figures.margin_s == pytest.approx(margin)
    assert f"by {margin * 1e3:.1f} ms" in f.summary
    assert "inference" in f.next_step and "real-time chunking" in f.next_step


def test_verdict_eliminated_with_interval() -> None:
    x = np.random.default_rng(7).normal(0.03, 0.003, 3000)
    f = latency.analyse(_log({"inference": x}, 20), [], DT)
    assert f.verdict is Verdict.ELIMINATED
    assert f.figures.total_p95_ci_s[1] < DT
    assert "below the period" in f.summary


def test_verdict_inconclusive_too_few_ticks_says_how_many() -> None:
    f = latency.analyse(_log({"inference": np.full(40, 0.03)}, 2), [], DT)
    assert f.verdict is Verdict.INCONCLUSIVE
    assert "60 more" in f.summary and "20 episodes" in f.next_step


def test_verdict_inconclusive_few_episodes_and_straddle() -> None:
    x = np.random.default_rng(8).normal(0.03, 0.003, 1000)
    f = latency.analyse(_log({"inference": x}, 5), [], DT)
    assert f.verdict is Verdict.INCONCLUSIVE and "15 more episodes" in f.next_step
    # p95 of U(0, DT / 0.95) is exactly DT: the interval must straddle the period
    u = np.random.default_rng(9).uniform(0, DT / 0.95, 2000)
    f2 = latency.analyse(_log({"inference": u}, 20), [], DT)
    assert f2.verdict is Verdict.INCONCLUSIVE
    assert "straddles" in f2.summary and "more ticks" in f2.next_step


def test_bootstrap_is_seeded() -> None:
    x = np.random.default_rng(10).lognormal(np.log(0.03), 0.3, 2000)
    a = latency.analyse(_log({"s": x}, 20), [], DT, seed=1).figures.total_p95_ci_s
    b = latency.analyse(_log({"s": x}, 20), [], DT, seed=1).figures.total_p95_ci_s
    c = latency.analyse(_log({"s": x}, 20), [], DT, seed=2).figures.total_p95_ci_s
    assert a == b and a != c


def test_queue_starvation_implicates_with_advice(tmp_path: Path) -> None:
    queue = [20, 14, 9, 4, 0, 0, 18, 12, 6, 0, 0, 0] * 5
    client = read_lerobot_log(client_log(tmp_path / "robot_client_1.log", queue, [2.0] * 200))
    x = np.random.default_rng(11).normal(0.02, 0.002, 3000)
    f = latency.analyse(_log({"inference": x}, 20), [client], DT)
    q = f.figures.queue
    assert q.empty_fraction == pytest.approx(5 / 12)
    assert q.must_go_count == 25 and q.sends == 60 and q.starved
    assert f.verdict is Verdict.IMPLICATED
    for words in ("lower the client's fps", "real-time chunking", "randomise action timing"):
        assert words in f.next_step
    assert len(f.details.queue_size) == 60


def test_queue_trend_toward_empty() -> None:
    from simgap.latency.queue import queue_stats

    sizes = np.linspace(30, 0.4, 100).round().astype(int)
    sizes[-1] = 1
    qs = queue_stats(sizes, sizes == 0)
    slope = stats.linregress(np.arange(100), sizes).slope
    assert qs.slope_per_send == pytest.approx(slope) and qs.trend_to_empty and qs.starved
    flat = queue_stats(np.full(50, 20), np.zeros(50, bool))
    assert not flat.starved and flat.empty_fraction == 0.0


def test_remote_policy_server_warns_and_asks_to_remeasure() -> None:
    x = np.random.default_rng(12).normal(0.03, 0.003, 3000)
    f = latency.analyse(_log({"inference": x}, 20), [], DT, policy_server="192.168.1.20:8080")
    assert f.figures.policy_server_remote is True
    text = f.next_step
    assert "no TLS" in text and "no authentication" in text and "unpickles" in text
    assert "re-measure latency with the hop" in text
    local = latency.analyse(_log({"inference": x}, 20), [], DT, policy_server="127.0.0.1:8080")
    assert local.figures.policy_server_remote is False and "TLS" not in local.next_step
    for addr, loop in (
        ("localhost:8080", True),
        ("[::1]:8080", True),
        ("127.0.0.2", True),
        ("gpu-box.lan:8080", False),
        ("10.0.0.5:50051", False),
        (None, True),
    ):
        assert latency._is_loopback(addr) is loop, addr


def test_server_log_alone_drives_the_branch(tmp_path: Path) -> None:
    from tests.lerobot_log_lines import server_log

    # Async serving: each inference is held against the queue's budget, chunk_size_threshold
    # (LeRobot's default 0.5, no client log) x actions per chunk (50, from the action shape)
    # x dt (1/30 s) = 833 ms, not against one 33 ms period.
    stages = [(1.0, 5.0, 300.0 + k % 7, 2.0) for k in range(120)]
    log = read_lerobot_log(server_log(tmp_path / "policy_server_1.log", stages))
    f = latency.analyse(None, [log], 1 / 30)
    assert f.figures.source == "policy-server log" and f.verdict is Verdict.ELIMINATED
    assert f.figures.budget.budget_s == pytest.approx(0.5 * 50 / 30)
    assert f.figures.budget.sources["chunk_size_threshold"] == "LeRobot default"
    assert "Rule: async serving" in f.summary and "833.3 ms queue budget" in f.summary
    assert f.figures.stages["inference"].p50_s == pytest.approx(0.303)
    assert f.figures.network.one_way_p50_s == pytest.approx(0.0042)
    slow = [(1.0, 5.0, 900.0 + k % 7, 2.0) for k in range(120)]
    log = read_lerobot_log(server_log(tmp_path / "policy_server_2.log", slow))
    f = latency.analyse(None, [log], 1 / 30)
    assert f.verdict is Verdict.IMPLICATED and "exceeds the budget" in f.summary
    assert f.figures.overrun_fraction == pytest.approx(1.0)


def _ctx(rig_path: Path, **options: float) -> Context:
    rig = load_rig(rig_path)
    return Context(rig=rig, evidence=EvidenceBundle(rig), seed=0, options=dict(options))


def test_assess_not_measured_names_evidence(tmp_path: Path) -> None:
    (f,) = latency.assess(_ctx(write_rig(tmp_path, "m.xml")))
    assert f.verdict is Verdict.NOT_MEASURED
    assert "timing_logs" in f.summary and "server_logs" in f.summary
    assert any("timing_logs" in n for n in f.needs)


def test_assess_reads_rig_evidence_and_control_dt_override(tmp_path: Path) -> None:
    x = np.random.default_rng(13).normal(0.05, 0.003, 2000)
    with (tmp_path / "timing.jsonl").open("w") as fh:
        for i, v in enumerate(x):
            fh.write(
                json.dumps(
                    {
                        "episode": i // 100,
                        "step": i % 100,
                        "t": i * 0.06,
                        "stages": {"inference": float(v)},
                    }
                )
                + "\n"
            )
    rig = write_rig(tmp_path, "m.xml", '[evidence]\ntiming_logs = ["timing.jsonl"]\n')
    (f,) = latency.assess(_ctx(rig))  # rig dt = 1/30: the 50 ms loop overruns
    assert f.verdict is Verdict.IMPLICATED
    assert f.figures.control_dt_s == pytest.approx(0.0333333)
    (g,) = latency.assess(_ctx(rig, control_dt_s=0.1))
    assert g.verdict is Verdict.ELIMINATED and g.figures.control_dt_s == 0.1


def test_report_plots_histogram_bars_and_queue(tmp_path: Path) -> None:
    from simgap.report.plots_latency import plots

    client = read_lerobot_log(
        client_log(tmp_path / "robot_client_1.log", [9, 5, 0] * 20, [2.0] * 50)
    )
    x = np.random.default_rng(14).normal(0.05, 0.004, 2500)
    f = latency.analyse(_log({"camera": x / 2, "inference": x / 2}, 20), [client], DT)
    d = json.loads(json.dumps(f.to_dict()))
    svgs = plots(d)
    assert len(svgs) == 3 and all(s.startswith("<svg") for s in svgs)
    assert f"control period {DT * 1e3:.1f} ms" in svgs[0]
    assert "2000 quantiles of 2500 ticks" in svgs[0]
    assert ">camera<" in svgs[1] and ">inference<" in svgs[1]
    assert "Action queue" in svgs[2]
    assert plots({"branch": "latency", "figures": {}, "details": {}}) == []


def test_added_delay_from_totals_when_loop_runs_faster_than_period() -> None:
    rng = np.random.default_rng(15)
    x = DT + rng.exponential(1 / 300.0, 4000)  # totals over the period by Exp(300)
    t = np.arange(4000) * (DT / 2)  # ticks paced at twice the simulated rate
    f = latency.analyse(_log({"s": x}, 20, t=t), [], DT)
    ad = f.figures.added_delay
    assert ad.source == "stage totals"
    assert ad.pooled_rate_per_s == pytest.approx(300.0, rel=0.10)


def test_async_budget_from_the_client_config(tmp_path: Path) -> None:
    """chunk_size_threshold, actions_per_chunk and fps as the client logs its config."""
    from tests.lerobot_log_lines import line, server_log

    cfg = [
        line("INFO", 0, "t_client.py:486", "{'actions_per_chunk': 12,"),
        " 'chunk_size_threshold': 0.25,",
        " 'fps': 20,",
        " 'task': ''}",
        line("DEBUG", 1, "t_client.py:434", "QUEUE SIZE: 5 (Must go: False)"),
    ]
    (tmp_path / "robot_client_1.log").write_text("\n".join(cfg) + "\n")
    client = read_lerobot_log(tmp_path / "robot_client_1.log")
    budget = 0.25 * 12 / 20  # 150 ms
    for inf_ms, verdict in ((100.0, Verdict.ELIMINATED), (200.0, Verdict.IMPLICATED)):
        stages = [(1.0, 2.0, inf_ms + k % 5, 1.0) for k in range(150)]
        log = read_lerobot_log(server_log(tmp_path / f"policy_server_{inf_ms:.0f}.log", stages))
        f = latency.analyse(None, [log, client], 1 / 30)
        assert f.figures.budget.budget_s == pytest.approx(budget)
        assert f.figures.budget.sources["chunk_size_threshold"] == "client config"
        assert f.verdict is verdict, f.summary
        assert "150.0 ms queue budget (0.25 x 12 actions x 50.0 ms)" in f.summary


def test_the_advice_names_every_stage_tied_with_the_slowest() -> None:
    """Two stages whose p95 intervals overlap are not told apart: the demo's 'inference'
    (p95 37.4 ms) and 'network' (36.4 ms, the planted jitter, p99 55 ms) were reported as
    'Cut inference' alone. A stage clear of the slowest one's interval is not named."""
    from simgap.branches.latency_verdict import slowest_stages, slowest_text

    stages = {
        "inference": {"p95_s": 0.0374, "p95_ci_s": [0.0360, 0.0390], "p99_s": 0.042},
        "network": {"p95_s": 0.0364, "p95_ci_s": [0.0330, 0.0410], "p99_s": 0.055},
        "camera": {"p95_s": 0.0120, "p95_ci_s": [0.0110, 0.0130], "p99_s": 0.013},
    }
    assert slowest_stages(stages) == ["inference", "network"]
    text = slowest_text(stages, slowest_stages(stages))
    assert "'inference' (p95 37.4 ms [36.0, 39.0])" in text and "'network'" in text
    assert "'network' has the longest tail (p99 55.0 ms)" in text and "camera" not in text
    stages["network"]["p95_ci_s"] = [0.0340, 0.0355]  # clear of inference's interval
    assert slowest_stages(stages) == ["inference"]
    assert slowest_text(stages, ["inference"]).startswith("the slowest stage is 'inference'")
    stages["inference"]["p95_s"] = float("nan")  # a stage never timed is not the slowest
    assert slowest_stages(stages)[0] == "network"
