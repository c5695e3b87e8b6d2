"""Failure signatures, the phase-to-branch mapping, and sim vs real failure phases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import fisher_exact

from simgap.branches import phases as phases_branch
from simgap.branches.context import Context
from simgap.episodes.compare import compare_phases
from simgap.episodes.signatures import PHASE_BRANCHES, SIGNATURES, EpisodeResult, branch_map
from simgap.errors import InputError
from simgap.evidence.bundle import EvidenceBundle
from simgap.evidence.episodes_io import read_manifest_trials
from simgap.finding import Finding, Verdict
from simgap.report.plots_phases import plots
from simgap.rig import load_rig
from simgap.values.episode import PHASES
from tests.episode_scripts import manifest_text, pick_place, write_manifest
from tests.factories import write_rig, write_v3_dataset

REAL_KINDS = [
    "success",
    "success",
    "success",
    "closed_on_nothing",
    "closed_on_nothing",
    "closed_on_nothing",
    "closed_on_nothing",
    "early_release",
    "early_release",
    "early_release",
    "search",
    "dropped",
    "drift",
    "slipped",
    "slipped",
    "success",
]
EXPECTED = {
    "closed_on_nothing": ("grasp", "closed_on_nothing"),
    "early_release": ("place", "early_release_short_of_target"),
    "search": ("approach", "search_never_found_object"),
    "dropped": ("lift_and_carry", "dropped_in_carry"),
    "drift": ("after_success", "drift_after_success"),
    "slipped": ("grasp", "grasp_did_not_lift"),
}
SIM_KINDS = ["success"] * 11 + ["search", "search"]


def _build(
    tmp: Path,
    model: Path,
    real_kinds: list[str],
    sim_kinds: list[str] | None,
    real_phases: list[str | None] | None = None,
) -> Path:
    rng = np.random.default_rng(7)
    real = [pick_place(k, rng=rng, noise_rad=np.deg2rad(0.05)) for k in real_kinds]
    write_v3_dataset(tmp / "real", real, fps=15)
    write_manifest(
        tmp / "real.toml",
        manifest_text("real", [k == "success" for k in real_kinds], phases=real_phases),
    )
    ev = '\n[evidence]\ndataset = "real"\nreal_manifest = "real.toml"\n'
    if sim_kinds is not None:
        sim = [pick_place(k, rng=rng) for k in sim_kinds]
        write_v3_dataset(tmp / "sim", sim, fps=15)
        write_manifest(tmp / "sim.toml", manifest_text("sim", [k == "success" for k in sim_kinds]))
        ev += 'sim_dataset = "sim"\nsim_manifest = "sim.toml"\n'
    return write_rig(tmp, model, ev)


def _ctx(rig_path: Path) -> Context:
    rig = load_rig(rig_path)
    return Context(rig=rig, evidence=EvidenceBundle(rig))


@pytest.fixture(scope="module")
def full_rig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from simgap.demo import demo_model_path

    return _build(tmp_path_factory.mktemp("full"), demo_model_path(), REAL_KINDS, SIM_KINDS)


def test_each_failure_is_found_in_its_phase_with_its_signature(full_rig: Path) -> None:
    pe = phases_branch.evaluate(_ctx(full_rig))
    assert pe.real is not None and pe.sim is not None
    for kind, r in zip(REAL_KINDS, pe.real, strict=True):
        if kind == "success":
            assert r.success is True and r.failure_phase is None
            continue
        assert (r.failure_phase, r.signature) == EXPECTED[kind], kind
        assert r.before and SIGNATURES[r.signature] == r.failure_phase
    early = [r for k, r in zip(REAL_KINDS, pe.real, strict=True) if k == "early_release"]
    for r in early:  # released half-way: ~8.7 cm from the bin, more than the 4 cm tolerance
        assert r.evidence["release_distance_to_target_m"] > 0.04
    empty = [r for k, r in zip(REAL_KINDS, pe.real, strict=True) if k == "closed_on_nothing"]
    for r in empty:  # measured opening ~ commanded closed
        assert abs(r.evidence["gap_deg"]) < 0.5 and r.evidence["opening_fraction"] < 0.02


def test_real_departs_from_sim_where_it_breaks_more(full_rig: Path) -> None:
    ctx = _ctx(full_rig)
    pe = phases_branch.evaluate(ctx)
    c = pe.comparison
    assert c.real is not None and c.sim is not None
    assert c.real.by_phase["grasp"] == 6 and c.real.by_phase["place"] == 3
    assert c.sim.by_phase["approach"] == 2 and c.sim.successes == 11
    n_r, n_s = len(REAL_KINDS), len(SIM_KINDS)
    for ph, a, b in (("grasp", 6, 0), ("place", 3, 0), ("approach", 1, 2)):
        p = fisher_exact([[a, n_r - a], [b, n_s - b]]).pvalue
        assert c.p_values[ph] == pytest.approx(p)
    assert c.departs == ("grasp",)  # place: 3/16 vs 0/13 is not significant at 0.05
    (f,) = phases_branch.assess(ctx)
    assert f.verdict is Verdict.IMPLICATED
    assert f.figures.dominant_phase == "grasp"
    assert {"contact", "actuator"} <= set(f.figures.points_at)
    assert f.figures.branch_map["contact"].eliminates == ("appearance",)
    svg = plots(f.to_dict())
    assert len(svg) == 1 and "<svg" in svg[0] and "grasp" in svg[0]
    _check_typed(f)


def _check_typed(f: Finding) -> None:
    """The phases Finding carries its records, which survive findings.json's round trip."""
    from simgap.figures.phases import PhasesDetails, PhasesFigures
    from tests.typed_records import check_typed

    check_typed(f, PhasesFigures, PhasesDetails)
    real = f.typed_details(PhasesDetails).real_episodes
    assert real and all(isinstance(e.phases_s, dict) for e in real)


def test_grasp_failures_alone_eliminate_appearance(tmp_path: Path, demo_model: Path) -> None:
    kinds = ["success", "slipped", "closed_on_nothing", "slipped"]
    (f,) = phases_branch.assess(_ctx(_build(tmp_path, demo_model, kinds, None)))
    assert f.verdict is Verdict.IMPLICATED  # no simulated evaluation to compare
    assert f.figures.eliminates == ("appearance",)
    assert "appearance" in f.summary


def test_same_failures_in_sim_are_not_a_gap(tmp_path: Path, demo_model: Path) -> None:
    kinds = ["success"] * 4 + ["search"]
    (f,) = phases_branch.assess(_ctx(_build(tmp_path, demo_model, kinds, kinds)))
    assert f.verdict is Verdict.INCONCLUSIVE and f.figures.departs == ()
    assert "reproduces" in f.summary


def test_a_few_real_failures_sim_never_shows_are_not_called_reproduced(
    tmp_path: Path, demo_model: Path
) -> None:
    real = ["success"] * 3 + ["search"]
    (f,) = phases_branch.assess(_ctx(_build(tmp_path, demo_model, real, ["success"] * 4)))
    # 1 of 4 against 0 of 4: Fisher p = 1, not a departure, and not reproduced either
    assert f.verdict is Verdict.INCONCLUSIVE and f.figures.departs == ()
    assert "reproduces" not in f.summary and "too few trials" in f.summary
    assert "0 of 4" in f.summary


def test_matching_real_episodes_eliminate_the_branch(tmp_path: Path, demo_model: Path) -> None:
    (g,) = phases_branch.assess(_ctx(_build(tmp_path / "ok", demo_model, ["success"] * 3, None)))
    assert g.verdict is Verdict.ELIMINATED
    # simulated episodes without success labels or a target cannot be compared
    rig = _build(tmp_path / "nolab", demo_model, ["success", "search"], ["success"])
    (tmp_path / "nolab" / "sim.toml").unlink()
    text = (tmp_path / "nolab" / "rig.toml").read_text().replace('sim_manifest = "sim.toml"', "")
    (tmp_path / "nolab" / "rig.toml").write_text(text)
    (h,) = phases_branch.assess(_ctx(rig))
    assert h.figures.comparison.sim.unknown == 1
    assert h.verdict is Verdict.IMPLICATED and "no simulated evaluation" in h.summary


def test_phase_to_branch_mapping_is_the_methods() -> None:
    m = branch_map()
    assert list(m) == list(PHASES)
    assert set(m["approach"]["points_at"]) == {"appearance", "latency"}
    for ph in ("contact", "grasp", "lift_and_carry"):
        assert "appearance" in m[ph]["eliminates"]
    assert set(PHASE_BRANCHES["place"]["points_at"]) == {"body", "controller"}


def test_annotated_phases_and_bad_phase_names(tmp_path: Path, demo_model: Path) -> None:
    text = manifest_text("real", [True, False, False], phases=[None, "grasp", "approach"])
    m = read_manifest_trials(write_manifest(tmp_path / "m.toml", text))
    assert [t.phase for t in m.trials] == [None, "grasp", "approach"]
    bad = manifest_text("real", [True, False], phases=[None, "grab"])
    with pytest.raises(InputError) as e:
        read_manifest_trials(write_manifest(tmp_path / "bad.toml", bad))
    msg = str(e.value)
    assert "trials[1].phase" in msg and "grab" in msg and "bad.toml" in msg
    for ph in PHASES:
        assert ph in msg
    # a person's annotation overrides the segmentation of a failed episode
    rig = _build(
        tmp_path / "ann",
        demo_model,
        ["success", "slipped"],
        None,
        real_phases=[None, "lift_and_carry"],
    )
    pe = phases_branch.evaluate(_ctx(rig))
    assert pe.real is not None
    assert pe.real[1].failure_phase == "lift_and_carry" and pe.real[1].annotated
    assert pe.real[1].signature == "annotated"


def test_trial_count_must_match_the_episodes(tmp_path: Path, demo_model: Path) -> None:
    rig = _build(tmp_path, demo_model, ["success", "slipped"], None)
    write_manifest(tmp_path / "real.toml", manifest_text("real", [True]))
    with pytest.raises(InputError, match="one per recorded"):
        phases_branch.evaluate(_ctx(rig))


def test_compare_counts_only_known_outcomes() -> None:
    def r(ok: bool | None, ph: str | None) -> EpisodeResult:
        return EpisodeResult(
            episode=0,
            success=ok,
            success_source="manifest",
            reached=ph,
            failure_phase=ph,
            signature=None,
        )

    c = compare_phases([r(True, None)] * 3, [r(False, "place"), r(None, None), r(True, None)])
    assert c.real is not None and c.real.n == 2 and c.real.unknown == 1
    assert c.real.by_phase["place"] == 1 and c.real.by_signature == {"unclassified": 1}


def test_unknown_outcomes_eliminate_nothing(tmp_path: Path, demo_model: Path) -> None:
    rig = _build(tmp_path, demo_model, ["success", "slipped"], None)
    (tmp_path / "real.toml").unlink()
    text = (tmp_path / "rig.toml").read_text().replace('real_manifest = "real.toml"', "")
    (tmp_path / "rig.toml").write_text(text)
    (f,) = phases_branch.assess(_ctx(rig))
    assert f.verdict is Verdict.NOT_MEASURED and "known outcome" in f.summary
    assert f.needs and "real_manifest" in f.needs[0]
    _check_typed(f)
