"""Rank fidelity: SIMPLER's MMRV vectors, correlations, bootstrap intervals, the CSV reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from simgap.errors import InputError
from simgap.evaluation import rank
from simgap.evidence.checkpoints import read_checkpoint_table


def _simpler_mmrv(sim: list[float], real: list[float]) -> float:
    """SIMPLER's loop, written out from its definition (gap on real, strict '>')."""
    out = []
    for i in range(len(sim)):
        worst = 0.0
        for j in range(len(sim)):
            if (sim[i] > sim[j]) != (real[i] > real[j]):
                worst = max(worst, abs(real[i] - real[j]))
        out.append(worst)
    return sum(out) / len(out)


@pytest.mark.parametrize(
    ("sim", "real", "expected"),
    [
        ([0.5, 0.5], [0.2, 0.8], 0.30),  # sim tie, real differs: (0 + 0.6) / 2
        ([0.2, 0.8], [0.5, 0.5], 0.0),  # real tie: the gap is 0
        ([0.9, 0.5, 0.1], [0.1, 0.5, 0.9], 2 / 3),  # full reversal: (0.8 + 0.4 + 0.8) / 3
        ([0.6, 0.5, 0.1], [0.50, 0.55, 0.1], 0.1 / 3),  # one swap with a 0.05 real gap
        ([0.3, 0.6, 0.9], [0.3, 0.6, 0.9], 0.0),  # identical
        ([0.4], [0.9], 0.0),  # N <= 1
    ],
)
def test_mmrv_simpler_vectors(sim: list[float], real: list[float], expected: float) -> None:
    assert rank.mmrv(sim, real) == pytest.approx(expected, abs=1e-12)


def test_mmrv_matches_loop_on_random_vectors_with_ties() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 9))
        sim = (rng.integers(0, 5, n) / 4).tolist()
        real = (rng.integers(0, 5, n) / 4).tolist()
        assert rank.mmrv(sim, real) == pytest.approx(_simpler_mmrv(sim, real), abs=1e-12)


def test_correlations_match_scipy_and_pair_counting() -> None:
    rng = np.random.default_rng(1)
    s, r = rng.random(9), rng.random(9)
    assert rank.pearson(s, r) == pytest.approx(stats.pearsonr(s, r).statistic, abs=1e-12)
    conc = sum(
        np.sign(s[i] - s[j]) * np.sign(r[i] - r[j]) for i in range(9) for j in range(i + 1, 9)
    )
    assert rank.kendall(s, r) == pytest.approx(conc / 36, abs=1e-12)  # no ties: tau-a = tau-b
    rs, rr = stats.rankdata(s), stats.rankdata(r)
    rho = 1 - 6 * np.sum((rs - rr) ** 2) / (9 * (81 - 1))
    assert rank.spearman(s, r) == pytest.approx(rho, abs=1e-12)


def test_constant_side_gives_zero() -> None:
    assert rank.pearson([0, 0, 0], [0.1, 0.5, 0.9]) == 0.0
    assert rank.kendall([0.4, 0.4], [0.1, 0.5]) == 0.0
    assert rank.spearman([0.1, 0.5], [0.3, 0.3]) == 0.0


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "ckpt.csv"
    p.write_text(text)
    return p


def test_report_with_trials_and_offline_baseline(tmp_path: Path) -> None:
    # SIMPLER coke-can real counts out of 75 (evaluation.md 1.2) with made-up sim rates.
    real = [10, 69, 64, 57, 68, 22]
    sim = [0.05, 0.85, 0.80, 0.75, 0.70, 0.30]
    loss = [0.9, 0.2, 0.25, 0.3, 0.35, 0.5]
    rows = "\n".join(
        f"c{i},{s},{k / 75!r},60,75,{m}"
        for i, (s, k, m) in enumerate(zip(sim, real, loss, strict=True))
    )
    path = _write(
        tmp_path,
        "checkpoint,sim_success,real_success,sim_trials,real_trials,offline_metric\n" + rows + "\n",
    )
    d = rank.rank_report(read_checkpoint_table(path), n_boot=500, seed=3)
    rr = [k / 75 for k in real]
    assert d["n_checkpoints"] == 6
    assert d["mmrv"] == pytest.approx(_simpler_mmrv(sim, rr))
    assert d["pearson"] == pytest.approx(stats.pearsonr(sim, rr).statistic)
    lo, hi = d["intervals"]["mmrv"]
    assert 0.0 <= lo <= hi <= 1.0 and d["intervals"]["resampled"] == ["sim", "real"]
    base = d["offline_baseline"]
    neg = [-m for m in loss]
    assert base["mmrv"] == pytest.approx(_simpler_mmrv(neg, rr))
    assert base["pearson"] == pytest.approx(stats.pearsonr(neg, rr).statistic)
    assert base["sim_ranks_better"] == (d["mmrv"] < base["mmrv"])
    assert rank.rank_report(read_checkpoint_table(path), n_boot=500, seed=3) == d  # seeded
    assert 0.0 <= d["noise_only"]["p_value"] <= 1.0


def test_intervals_shrink_with_many_trials(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "checkpoint,sim_success,real_success,sim_trials,real_trials\n"
        "a,0.2,0.3,100000,100000\nb,0.5,0.45,100000,100000\nc,0.8,0.7,100000,100000\n",
    )
    d = rank.rank_report(read_checkpoint_table(path), n_boot=300)
    assert d["intervals"]["pearson"][1] - d["intervals"]["pearson"][0] < 0.01
    assert d["intervals"]["mmrv"] == [0.0, 0.0]
    # With no trial counts there is nothing to resample.
    path2 = _write(tmp_path, "checkpoint,sim_success,real_success\na,0.2,0.3\nb,0.5,0.45\n")
    d2 = rank.rank_report(read_checkpoint_table(path2))
    assert d2["intervals"]["mmrv"] is None and d2["noise_only"] is None


def test_noise_alone_explains_small_violations(tmp_path: Path) -> None:
    # Real rates 0.50 vs 0.55 out of 20 trials each: a swap is what noise does half the time.
    path = _write(
        tmp_path, "checkpoint,sim_success,real_success,real_trials\na,0.9,0.5,20\nb,0.1,0.55,20\n"
    )
    d = rank.rank_report(read_checkpoint_table(path), n_boot=2000, seed=0)
    assert d["mmrv"] == pytest.approx(0.05)
    assert d["noise_only"]["p_value"] > 0.2


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("checkpoint,sim_success,real_success\na,0.2,0.3\na,0.5,0.4\n", "listed twice"),
        ("checkpoint,sim_success,real_success\na,1.2,0.3\nb,0.5,0.4\n", "sim_success.*0, 1"),
        ("checkpoint,sim_success,real_success\na,0.2,-0.1\nb,0.5,0.4\n", "real_success"),
        (
            "checkpoint,sim_success,real_success,real_trials\na,0.2,0.3,2.5\nb,0.5,0.4,10\n",
            "real_trials",
        ),
        (
            "checkpoint,sim_success,real_success,real_trials\na,0.2,0.37,10\nb,0.5,0.4,10\n",
            "whole number of successes",
        ),
        ("checkpoint,sim_success\na,0.2\n", "real_success"),
        ("checkpoint,sim_success,real_success,bogus\na,0.2,0.3,1\n", "bogus"),
    ],
)
def test_reader_bad_inputs(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        read_checkpoint_table(_write(tmp_path, text))


def test_fewer_than_two_checkpoints(tmp_path: Path) -> None:
    path = _write(tmp_path, "checkpoint,sim_success,real_success\na,0.2,0.3\n")
    with pytest.raises(InputError, match="'checkpoint'.*at least two"):
        rank.rank_report(read_checkpoint_table(path))
