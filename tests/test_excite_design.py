"""``simgap excite --for DIR``: the next motion to record, designed from a diagnosis.

The maths on small inputs (candidates inside the limits, the Fisher prediction against its
closed form, reading a diagnosis), and on the Menagerie SO-101 the candidates whose replay
the 5 ms model cannot follow told apart from those it can. Issue 34's must-show (the
designed episode making a planted armature identifiable) is measured by
``benchmarks/excite_armature.py`` and is not met (docs/actuator.md says why, in numbers).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.actuator.excite import DEFAULT_VMAX_RAD_S
from simgap.actuator.excite_design import (
    MARGIN,
    Prediction,
    assemble,
    candidates,
    predict,
)
from simgap.actuator.excite_estimate import Estimate, estimate_from_diagnosis
from simgap.actuator.excite_replay import replay_floor
from simgap.cli import app
from simgap.errors import InputError
from simgap.figures.actuator import JointDynamicsDetails, JointDynamicsFigures
from simgap.finding import Diagnosis, Finding, Verdict
from simgap.fit.intervals import t_quantile

runner = CliRunner()


def test_candidates_stay_inside_range_and_speed() -> None:
    lo, hi, fps, vmax = -1.2, 0.8, 20.0, 3.0
    segs = candidates("j", lo, hi, fps, vmax_rad_s=vmax, seconds=4.0)
    assert {s.family for s in segs} == {"chirp", "steps", "holds"}
    half = 0.5 * (hi - lo) * (1 - MARGIN)
    for s in segs:
        assert s.q.size == 80
        assert s.q.min() >= -0.2 - half - 1e-12 and s.q.max() <= -0.2 + half + 1e-12
        if s.family == "chirp":  # commanded speed under vmax (sampled: a small excess)
            assert np.abs(np.diff(s.q)).max() * fps <= 1.1 * vmax
    top = [s.name for s in segs if s.family == "chirp"][-1]
    assert "4-8 Hz" in top  # the top band is cut at 40 % of the frame rate (8 Hz at 20 fps)


def test_assemble_starts_and_ends_at_the_pose_and_moves_one_joint_at_a_time() -> None:
    start = np.array([0.1, -0.3, 0.2])
    segs = candidates("b", -1.0, 1.0, 30.0, vmax_rad_s=6.0, seconds=2.0)[:2]
    cmd = assemble(start, ("a", "b", "c"), segs, 30.0)
    np.testing.assert_allclose(cmd[0], start)
    np.testing.assert_allclose(cmd[-1], start)
    np.testing.assert_allclose(cmd[:, [0, 2]], np.repeat(start[None, [0, 2]], len(cmd), 0))
    assert np.ptp(cmd[:, 1]) > 0.5
    assert np.abs(np.diff(cmd[:, 1])).max() < 1.0  # ramped, no jump into a segment


def test_prediction_is_the_closed_form_and_more_data_narrows_it() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(size=(400, 3))
    s2, s2_min = 4e-6, 1e-6
    p = predict([a], ("kp", "armature"), s2, s2_min)
    cov = s2 * np.linalg.inv(a.T @ a)
    sens = np.sqrt(np.mean(a**2, axis=0))
    # the identification's own rule: Student-t on the 397 residual degrees of freedom
    want = t_quantile(397) * np.sqrt(np.diag(cov)) + np.sqrt(s2_min) / sens
    np.testing.assert_allclose(p.halfwidth, want, rtol=1e-5)
    assert p.columns == ("kp", "armature", "delay")
    more = predict([a, 3.0 * rng.normal(size=(400, 3))], ("kp", "armature"), s2, s2_min)
    assert np.all(more.halfwidth < p.halfwidth)
    # a null direction (armature's column all zero) is unbounded
    b = a.copy()
    b[:, 1] = 0.0
    assert not np.isfinite(predict([b], ("kp", "armature"), s2, s2_min).halfwidth[1])
    assert Prediction(("kp", "delay"), np.array([np.log(2) / 2, 0.0]), np.eye(2)).span(
        "kp"
    ) == pytest.approx(2.0)


def _write_findings(path: Path, figures: dict, details: dict | None = None) -> Path:
    """A diagnosis whose actuator finding is the joint identification (typed, its details
    the identification whole) when ``details`` are given, else an untyped one."""
    f = (
        Finding(
            branch="actuator",
            verdict=Verdict("implicated"),
            figures=figures,
            title="Actuator dynamics",
            summary="",
        )
        if details is None
        else Finding(
            branch="actuator",
            verdict=Verdict("implicated"),
            title="Actuator dynamics",
            figures=JointDynamicsFigures.from_mapping(figures),
            details=JointDynamicsDetails.from_mapping({**figures, **details}),
        )
    )
    d = Diagnosis(rig="bench", findings=(f,), stop={}, comparability=None, seed=0)
    path.mkdir(parents=True, exist_ok=True)
    (path / "findings.json").write_text(json.dumps(d.to_dict()))
    return path


def test_reads_what_a_diagnosis_left_open(tmp_path: Path) -> None:
    figures = {
        "params": {"a": {"kp": 10.0}},
        "params_interval": {"a": {"kp": [9.0, 11.0]}},
        "not_identifiable": {"a": {"armature": "too weak", "delay": "a ridge"}, "b": {"kv": "x"}},
        "delay_s": {"a": 0.02, "b": 0.03},
        "clock": {"chosen": "step"},
        "fitted_episodes": 1,
        "fit_seconds": 6.0,
    }
    details = {"params_fitted": {"a": {"kp": 10.0, "armature": 0.03}, "b": {"kp": 5.0, "kv": 1.0}}}
    est = estimate_from_diagnosis(_write_findings(tmp_path / "d", figures, details))
    assert est.rig == "bench" and est.clock == "step"
    assert est.targets == (
        ("a", "armature", "too weak"),
        ("a", "delay", "a ridge"),
        ("b", "kv", "x"),
    )
    assert est.params["a"]["armature"] == 0.03 and est.fitted_episodes == 1
    assert est.only(["armature"]).targets == (("a", "armature", "too weak"),)
    assert est.only(joints=["b"]).targets == (("b", "kv", "x"),)
    with pytest.raises(InputError, match="armature, delay, kv"):
        est.only(["frictionloss"])


def test_a_diagnosis_without_the_identification_is_refused(tmp_path: Path) -> None:
    d = _write_findings(tmp_path / "d", {"worst_ideal_mae_rad": 0.1})
    with pytest.raises(InputError) as e:
        estimate_from_diagnosis(d)
    assert "findings.json" in str(e.value) and "actuator" in str(e.value)
    res = runner.invoke(app, ["excite", "--for", str(tmp_path / "nowhere")])
    assert res.exit_code != 0 and "findings.json" in res.output


def test_excite_without_rig_or_diagnosis_says_how() -> None:
    res = runner.invoke(app, ["excite"])
    assert res.exit_code != 0 and "--for DIR" in res.output


def test_the_estimate_only_keeps_known_kinds() -> None:
    est = Estimate(rig="r", params={}, delay_s={}, clock="exact", targets=(("a", "armature", ""),))
    assert est.only().targets == est.targets


def test_a_motion_the_replay_cannot_follow_is_told_apart(tmp_path: Path, shared_data: Path) -> None:
    """At its 5 ms step the SO-101's force-limited servo replays a fast chirp chaotically
    (float rounding of the commands moves it by mrad) and a staircase of holds smoothly:
    ``replay_floor`` puts the first above the instrument's floor (the design refuses it),
    the second below."""
    from simgap.demo.factory import make_so101_bench
    from simgap.rig import load_rig
    from simgap.sim.load import joint_ranges

    model = shared_data / "so101" / "so101.xml"
    if not model.is_file():
        pytest.skip(f"the SO-101 model is absent: {model}")
    bench = make_so101_bench(tmp_path / "b", model, 5, n_episodes=1, duration_s=1.0, n_heldout=0)
    rig = load_rig(bench.rig)
    joints = tuple(rig.joint_names)
    ranges = joint_ranges(rig.model_path, list(joints))
    start = np.array([0.5 * (ranges[j][0] + ranges[j][1]) for j in joints])
    segs = {
        s.family: s
        for s in reversed(
            candidates("shoulder_pan", *ranges["shoulder_pan"], 30.0, vmax_rad_s=DEFAULT_VMAX_RAD_S)
        )
    }
    out = {}
    for family in ("chirp", "holds"):
        cmd = assemble(start, joints, [segs[family]], 30.0, DEFAULT_VMAX_RAD_S)
        out[family] = replay_floor(rig.model_path, rig, cmd, 30.0, "shoulder_pan", "exact", 0.0)
    chaos, instrument = out["chirp"]
    assert chaos > 3.0 * instrument  # the 0.3-1.5 Hz chirp (first in the list)
    chaos, instrument = out["holds"]
    assert chaos < instrument
