"""Contact identified through explicit pairs on benches built outside the project
(``tests/contact_benches.py``): true pair coefficients drawn at random, the model at
MuJoCo's defaults, geoms with and without priority, pushes logged with 0.5 mm noise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.branches.context import Context
from simgap.contact.identify import ContactFit, identify
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.contact import ContactDetails, ContactFigures
from simgap.finding import Finding
from tests.contact_benches import make_bench


def _assess(bench_rig: object, out: Path) -> Finding:
    from simgap.branches.contact import assess

    (f,) = assess(
        Context(
            rig=bench_rig,
            evidence=EvidenceBundle(bench_rig),  # type: ignore
            out_dir=out,
        )
    )
    return f


@pytest.mark.parametrize("seed,priority", [(3, False), (4, True), (8, False)])
def test_sliding_recovered_within_its_interval(
    tmp_path: Path, seed: int, priority: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import simgap.branches.contact as branch

    fits: list[ContactFit] = []

    def keep(*a: Any, **k: Any) -> ContactFit:
        fits.append(identify(*a, **k))
        return fits[-1]

    monkeypatch.setattr(branch, "identify", keep)
    mu = float(np.random.default_rng(seed).uniform(0.25, 0.45))
    b = make_bench(tmp_path, "push", {("grip", "sliding"): mu}, priority=priority, seed=seed)
    f = _assess(b.rig, tmp_path / "out")
    # the identification's estimate: the written friction, the truth inside its interval,
    # the fitted position RMS against the tracker noise
    (fit,) = fits
    est = fit.estimate
    assert est is not None and est.residual_unit == "m" and est.evaluations > 0
    sliding = est["grip.sliding"]
    lo_e, hi_e = sliding.interval or (np.nan, np.nan)
    assert lo_e < mu < hi_e and sliding.value == fit.writes[("grip", "sliding")]
    assert est.residual == f.typed(ContactFigures).rms_fitted_m
    assert est.noise_floor == f.typed(ContactFigures).object_noise_m
    for p in est:
        assert (p.interval is None) == bool(p.reason)
    assert f.verdict.value == "implicated", f.summary
    fig = f.typed(ContactFigures)
    lo, hi = fig.friction_interval or (None, None)
    assert lo < mu < hi and fig.friction_nominal == pytest.approx(1.0)
    assert fig.friction_best == pytest.approx(mu, rel=0.25)
    assert fig.friction_rms_best_m < fig.friction_rms_nominal_m / 3
    patch = f.typed_details(ContactDetails).patch
    assert patch.offered and f.artifacts["pair_patch"]
    ho = patch.holdout
    assert ho is not None
    assert all(a < b for a, b in zip(ho.chi2_fitted, ho.chi2_model, strict=True))
    text = Path(f.artifacts["pair_patch"]).read_text()
    assert str(tmp_path) not in text and "/tmp" not in text  # no absolute paths
    (e,) = patch.pairs
    assert e.fitted == ("sliding",) and e.condim == 3  # condim not raised
    assert e.friction[2:] == (0.005, 0.0001, 0.0001) and e.solref == (0.02, 1.0)
    assert patch.replayed_rms_m is not None and patch.model_rms_m is not None
    assert patch.replayed_rms_m < patch.model_rms_m / 3
    if not priority:
        assert "inert" in f.summary


def test_healthy_bench_eliminated_with_no_point_value(tmp_path: Path) -> None:
    # straight pushes: the plate never drags the box sideways, so its friction is unseen
    b = make_bench(tmp_path, "push", {}, seed=5, angles=(0.0, 0.0))
    f = _assess(b.rig, tmp_path / "out")
    assert f.verdict.value == "eliminated", f.summary
    fig = f.typed(ContactFigures)
    assert fig.friction_best is None and not fig.friction_identifiable
    lo, hi = fig.friction_interval or (None, None)
    assert (lo is None or lo < 1.0) and (hi is None or hi > 1.0)  # the range that fits
    assert "not identifiable from these pushes" in f.summary
    assert not f.artifacts


def test_healthy_oblique_bench_keeps_the_model(tmp_path: Path) -> None:
    # oblique pushes do see the pad's friction: the interval holds the model's own value
    b = make_bench(tmp_path, "push", {}, seed=6, priority=True)
    f = _assess(b.rig, tmp_path / "out")
    assert f.verdict.value == "eliminated", f.summary
    lo, hi = f.typed(ContactFigures).friction_interval or (None, None)
    assert (lo is None or lo < 1.0) and (hi is None or hi > 1.0)
    assert not f.artifacts


@pytest.mark.parametrize("seed,priority", [(7, False)])
def test_torsional_case_implicated_with_condim_4_in_the_patch(
    tmp_path: Path, seed: int, priority: bool
) -> None:
    tor = float(np.random.default_rng(seed).uniform(0.0012, 0.0025))
    b = make_bench(tmp_path, "grasp", {("grip", "torsional"): tor}, seed=seed, priority=priority)
    f = _assess(b.rig, tmp_path / "out")
    assert f.verdict.value == "implicated", f.summary
    fig = f.typed(ContactFigures)
    lo, hi = fig.torsional_interval or (None, None)
    assert lo < tor < hi and fig.torsional_best is not None
    assert fig.torsional_rms_best_rad < 0.75 * fig.torsional_rms_nominal_rad
    patch = f.typed_details(ContactDetails).patch
    assert patch.offered and patch.holdout is not None, patch
    assert all(
        a < b for a, b in zip(patch.holdout.chi2_fitted, patch.holdout.chi2_model, strict=True)
    )
    pairs = patch.pairs
    assert {(e.geom1, e.geom2) for e in pairs} == {("tip1", "bar"), ("tip2", "bar")}
    for e in pairs:
        assert e.condim == 4 and "torsional" in e.fitted
        assert e.friction[0] == pytest.approx(1.0)  # sliding kept at the model's
    import mujoco

    m = mujoco.MjModel.from_xml_path(f.artifacts["pair_patch"])
    assert m.npair == 2 and list(m.pair_dim) == [4, 4]
