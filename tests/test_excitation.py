"""The excitation and data checks: a recording that cannot answer the joint fit is known
before the fit, and no joint finding is implicated on it (issue 34)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.branches.evidence_gate import excitation_finding
from simgap.branches.joint_dynamics import _verdicts, fit_split, identify_rig
from simgap.demo.factory import make_so101_bench
from simgap.episodes.excitation import (
    MIN_FIT_S,
    MIN_PROOF_S,
    MIN_SPAN_COUNTS,
    assess_excitation,
    joint_excitation,
)
from simgap.evidence.lerobot import read_lerobot_dataset
from simgap.rig import load_rig
from simgap.units import ENCODER_RESOLUTION_RAD as ENC

FPS = 30.0


def _t(seconds: float) -> np.ndarray:
    return np.arange(int(seconds * FPS)) / FPS


def test_a_joint_that_barely_moves_shows_nothing() -> None:
    t = _t(12.0)
    still = np.rint(0.4 * MIN_SPAN_COUNTS * np.sin(2 * np.pi * 1.0 * t)) * ENC  # < 20 counts
    je = joint_excitation("wrist_roll", [still], FPS, ENC)
    assert not je.excited and "counts" in je.unseen["all"]
    moving = np.rint(0.3 * np.sin(2 * np.pi * 1.0 * t) / ENC) * ENC
    je = joint_excitation("elbow_flex", [moving], FPS, ENC)
    assert je.excited and not je.unseen and je.reversals >= 20
    assert je.band_hz == pytest.approx(1.0, abs=0.2)


def test_one_slow_sweep_hides_friction_and_inertia() -> None:
    t = _t(12.0)
    ramp = np.rint(np.linspace(-0.5, 0.5, t.size) / ENC) * ENC  # one way, quasi-static
    je = joint_excitation("shoulder_lift", [ramp], FPS, ENC)
    assert je.excited and je.reversals == 0
    assert set(je.unseen) == {"frictionloss", "damping", "armature"}
    assert "reversal" in je.unseen["frictionloss"] and "Hz" in je.unseen["armature"]


def test_too_little_data_is_thin_and_named() -> None:
    t = _t(2.0)
    cmd = np.stack([0.3 * np.sin(2 * np.pi * 1.5 * t)] * 2, axis=1)
    exc = assess_excitation([cmd, cmd], ["a", "b"], FPS, ENC, proof_s=2.0)
    assert exc.fitted_episodes == 2 and exc.frames == 2 * t.size
    assert exc.fitted_s == pytest.approx(2 * (t.size - 1) / FPS)
    assert f"less than the {MIN_FIT_S:g} s" in exc.thin
    assert f"less than the {MIN_PROOF_S:g} s" in exc.thin
    long = assess_excitation([np.concatenate([cmd] * 4)] * 2, ["a", "b"], FPS, ENC, 8.0)
    assert long.thin == ""
    f = excitation_finding(exc)
    assert f.verdict.value == "inconclusive" and "No joint finding is implicated" in f.summary
    assert excitation_finding(long).verdict.value == "eliminated"


def _js(delay_lo: float, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "nominal_rms_rad": {"a": 0.05},
        "identified_rms_rad": {"a": 0.005},
        "noise_floor_rad": {"a": {"total_rad": 0.004}},
        "delay_interval_s": {"a": [delay_lo, 0.05]},
        "params": {"a": params},
        "delay_ridge": {},
    }


def test_a_replay_off_with_nothing_identified_is_held_at_inconclusive() -> None:
    t = _t(12.0)
    exc = assess_excitation([np.sin(t)[:, None]], ["a"], FPS, ENC, proof_s=10.0)
    assert _verdicts(_js(0.02, {}), exc)[:2] == ("implicated", {"a": "implicated"})
    assert _verdicts(_js(0.0, {"kp": 900.0}), exc)[0] == "implicated"
    verdict, per, held = _verdicts(_js(0.0, {}), exc)
    assert verdict == "inconclusive" and per == {"a": "inconclusive"}
    assert "nothing on this joint is identified" in held["a"]
    thin = assess_excitation([np.sin(t[:60])[:, None]], ["a"], FPS, ENC, proof_s=1.0)
    verdict, _, held = _verdicts(_js(0.02, {"kp": 900.0}), thin)
    assert verdict == "inconclusive" and held["a"] == thin.thin


def test_three_short_episodes_implicate_nothing(tmp_path: Path, demo_model: Path) -> None:
    """Issue 34's case: 3 episodes of 2 s with real faults planted. The replay is off, but
    4 s fitted and 2 s held out cannot say by what: no joint is implicated, no patch is
    built, and the gate said so before the fit."""
    bench = make_so101_bench(
        tmp_path / "b",
        demo_model,
        11,
        n_episodes=3,
        duration_s=2.0,
        n_heldout=0,
        faults={"kp": 0.5, "delay_s": 0.03},
    )
    rig = load_rig(bench.rig)
    ds = read_lerobot_dataset(rig.evidence.dataset)  # type: ignore[arg-type]
    exc = fit_split(rig, ds)[5]
    assert exc.fitted_episodes == 2 and exc.fitted_s < MIN_FIT_S and exc.proof_s < MIN_PROOF_S
    gate = excitation_finding(exc)
    assert gate.verdict.value == "inconclusive" and "3.9 s fitted" in gate.summary
    js = identify_rig(rig, ds)
    assert js["verdict"] != "implicated"
    assert "implicated" not in js["joint_verdicts"].values()
    assert js["patch_joints"] == []
    assert js["joint_held"] and all(w == exc.thin for w in js["joint_held"].values())
    assert js["excitation"]["thin"] == exc.thin


def test_a_held_joint_is_told_to_record_the_designed_episode() -> None:
    from simgap.branches.actuator_dataset import next_step

    step = next_step("inconclusive", True, "MJCF patch proven", False, held=True)
    assert "simgap excite --for DIR" in step and "nothing in it is a measurement" in step
    assert "measurement" not in next_step("inconclusive", False, "no patch", False, held=True)
    assert next_step("implicated", True, "proven", True).startswith("Apply the proven")
