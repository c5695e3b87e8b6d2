"""SIMPLER's controller fit states an interval only where it can hold the truth.

Its replay has no command delay and no servo lag, so on a rig with either kp and kv absorb
them and the local interval is tight around a wrong value. The gate (``simgap.controller.
misfit``) declares every gain not identifiable, with the reason, when the fit misses the data
by more than ``MISFIT_FLOORS`` noise floors or stopped on a slope of its squared residual.
Checked on benches drawn by ``make_so101_bench`` with known truth (the demo's own check is in
``tests/test_demo_truth.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.controller.misfit import MISFIT_FLOORS, gate, slope_reason
from simgap.fit.estimate import Estimate, ParamEstimate
from simgap.fit.search import FitResult


def _fit(loss: float) -> dict[str, Any]:
    row = {"value": 900.0, "nominal": 998.0, "half_width": 8.0, "identified": True, "why": ""}
    return {
        "params": {"a": {"kp": 900.0}},
        "loss_after": loss,
        "intervals": {"a": {"kp": 8.0}},
        "identified": {"a": {"kp": True}},
        "why": {},
        "methods": {"least_squares": {"loss_after": loss, "table": {"a.kp": row}}},
    }


def test_a_fit_that_misses_its_data_states_no_interval() -> None:
    floor = 0.001
    out = gate(_fit(17.9 * floor), floor)
    assert out["identified"] == {"a": {"kp": False}} and out["intervals"] == {"a": {"kp": None}}
    assert "misses the data by 17.9 x its noise floor" in out["why"]["a.kp"]
    assert "half-width 8 is withdrawn" in out["why"]["a.kp"]
    row = out["methods"]["least_squares"]["table"]["a.kp"]
    assert row["identified"] is False and np.isnan(row["half_width"])
    assert out["params"] == {"a": {"kp": 900.0}}  # the value stays, as a value, not a claim
    inside = gate(_fit(0.9 * MISFIT_FLOORS * floor), floor)
    assert inside["identified"] == {"a": {"kp": True}} and inside["intervals"]["a"]["kp"] == 8.0


def _result(rise: list[float], threshold: float) -> FitResult:
    n = len(rise)
    estimate = Estimate(
        params=tuple(ParamEstimate(f"p{k}", "N m/rad", 1.0, (0.99, 1.01)) for k in range(n)),
        residual=0.0,
        residual_unit="m",
    )
    return FitResult(
        method="least_squares",
        estimate=estimate,
        x=np.zeros(n),
        nominal=np.ones(n),
        cost_before=1.0,
        cost_after=1.0,
        half_width=np.full(n, 0.01),
        at_bounds=[],
        cond=1.0,
        col_norm=np.ones(n),
        n_evals=0,
        extra={"profile_rise": rise, "profile_threshold": threshold},
    )


def test_a_fit_stopped_on_a_slope_is_named() -> None:
    why = slope_reason(_result([0.5, -0.2, 0.1], 0.01))
    assert why is not None and "p1 lowers the squared residual by 0.2" in why
    assert slope_reason(_result([0.5, -0.005, 0.1], 0.01)) is None  # within t^2 s^2: noise
    assert slope_reason(_result([0.5, 0.2], 0.01)) is None


def _truth(bench: Any) -> dict[str, dict[str, float]]:
    return {
        jt.name: {k: dict(jt.nominal)[k] * dict(jt.multiplier)[k] for k in ("kp", "kv")}
        for jt in bench.truth
    }


def _stated(rep: dict[str, Any]) -> dict[str, tuple[float, float]]:
    from simgap.controller.pose_fit import contract_figures

    c = contract_figures(rep)
    for j, kinds in rep["identified"].items():
        for k, ok in kinds.items():
            if not ok:
                assert c["not_identifiable"][j][k], f"{j}.{k}: no interval and no reason"
    return {f"{j}.{k}": tuple(iv) for j, d in c["params_interval"].items() for k, iv in d.items()}


@pytest.mark.parametrize(
    ("faults", "fps"),
    [
        ({"kp": 0.6, "delay_s": 0.05}, 30),
        pytest.param({"kp": 0.6}, 100, marks=pytest.mark.slow),
        pytest.param(None, 100, marks=pytest.mark.slow),
    ],
    ids=["soft-and-late-30fps", "soft-100fps", "healthy-100fps"],
)
def test_drawn_bench_intervals_hold_the_truth_or_say_why(
    shared_data: Path, tmp_path: Path, faults: dict[str, float] | None, fps: int
) -> None:
    from simgap.branches.controller import LADDER_MAX_ITER, LADDER_MAXFUN, load_episodes, spread
    from simgap.controller.pose_fit import controller_report
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    bench = make_so101_bench(
        tmp_path / "b",
        shared_data / "so101" / "so101.xml",
        7,
        fps=fps,
        faults=faults,
        duration_s=DURATION_S,
        n_episodes=1,
        n_heldout=0,
    )
    rig = load_rig(bench.rig)
    eps = spread(load_episodes(rig, read_lerobot_dataset(bench.dataset)), 1)
    rep = controller_report(rig, eps, seed=7, maxfun=LADDER_MAXFUN, max_iter=LADDER_MAX_ITER)
    truth = _truth(bench)
    stated = _stated(rep)
    for name, (lo, hi) in stated.items():
        j, k = name.split(".")
        assert lo <= truth[j][k] <= hi, f"{name} [{lo:.4g}, {hi:.4g}] excludes {truth[j][k]:.4g}"
    if faults is not None and "delay_s" in faults:  # the replay lacks the delay: all withdrawn
        assert not stated and rep["loss_after"] > MISFIT_FLOORS * rep["noise_floor"]
        assert all("misses the data" in w for w in rep["why"].values())
    if faults is None:  # the healthy arm: the fit explains the data and pins the gains
        assert rep["loss_after"] <= MISFIT_FLOORS * rep["noise_floor"]
        assert len(stated) >= 5


DURATION_S = 8.0
"""Seconds per drawn episode: long enough for the 100 fps healthy fit to pin its gains."""


def test_the_gains_headline_holds_the_worst_joint_against_its_own_floor() -> None:
    from simgap.figures.controller import GainsFigures

    fig = GainsFigures.from_mapping(
        {
            "residual_rad": {"a": 0.010, "b": 0.004},
            "noise_floor_rad": {"a": 0.020, "b": 0.001},
        }
    )
    head = fig.headline()
    # a has the larger residual, but b is the one 4 x above its own floor
    assert fig.worst_joint() == "b" and head is not None
    assert head.text.startswith("b: ") and "worst of 2 joints" in head.text
    assert (head.value, head.threshold) == (0.004, 0.001)
    assert GainsFigures.from_mapping({}).headline() is None


def test_autocorrelated_residuals_widen_the_intervals() -> None:
    from simgap.controller.widen import pose_inflation, widen

    t = np.linspace(0, 1, 200)
    drift = np.stack([np.sin(2 * np.pi * t)] * 6, axis=1).ravel()  # each sample like the last
    white = np.random.default_rng(0).normal(size=1200)
    tgt = [np.zeros((200, 7))]
    assert pose_inflation(tgt, white) < 1.5 < 50 < pose_inflation(tgt, drift)
    res = widen(_result([0.5, 0.5], 0.01), 16.0)  # half-widths 0.01 of values 1 -> 0.04
    assert np.allclose(res.half_width, 0.04) and res.estimate.identified == ("p0", "p1")
    assert res.estimate.interval("p0") == pytest.approx((0.96, 1.04))
    res = widen(_result([0.5], 0.01), 36.0)  # -> 0.06: over 5 % of the value
    assert res.estimate.identified == () and "widened x6" in res.estimate["p0"].reason


def test_a_nominal_that_fits_too_lies_inside_the_interval() -> None:
    from simgap.controller.misfit import reach_nominal

    fit = _fit(0.001)
    fit["params"] = {"a": {"kp": 990.0, "kv": 2.0}}
    fit["intervals"] = {"a": {"kp": 0.1, "kv": 0.001}}
    fit["identified"] = {"a": {"kp": True, "kv": True}}
    out = reach_nominal(fit, {"a": {"kp": 998.0, "kv": 2.7}})
    assert out["intervals"]["a"]["kp"] == pytest.approx(8.0) and out["identified"]["a"]["kp"]
    assert out["identified"]["a"]["kv"] is False and "2.7 replays within" in out["why"]["a.kv"]
    row = out["methods"]["least_squares"]["table"]["a.kp"]  # 900 +- 8 against nominal 998
    assert row["half_width"] == pytest.approx(98.0) and row["identified"] is False
