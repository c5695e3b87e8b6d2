"""Joint identification against the rig's MJCF: profile intervals, the clean rig comes out
clean, known parameters and delays are recovered from SO-101 benches made with them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from simgap.fit.profile import CHI2_95, delay_profile

KINDS5 = ("kp", "kv", "damping", "frictionloss", "armature")


def test_profile_interval_is_the_chi2_crossing_of_a_parabola() -> None:
    # SSR(d) = ssr0 + c (d - d0)^2: the 95% interval is d0 +- sqrt(chi2 s2 / c)
    d = np.linspace(0.0, 0.1, 11)
    d0, c, dof, ssr0 = 0.043, 4e3, 500, 0.25
    prof = delay_profile(d, ssr0 + c * (d - d0) ** 2, dof)
    half = np.sqrt(CHI2_95 * (ssr0 / dof) / c)
    assert prof.best_s == pytest.approx(d0, abs=1e-9)
    assert prof.interval_s[0] == pytest.approx(d0 - half, rel=1e-6)
    assert prof.interval_s[1] == pytest.approx(d0 + half, rel=1e-6)
    assert prof.open_ends == ()
    # a flat profile is not bounded: its ends reach the grid's edges and say so
    flat = delay_profile(d, np.full(d.size, ssr0), dof)
    assert flat.interval_s == (0.0, 0.1) and set(flat.open_ends) == {"lo", "hi"}


def _bench(tmp: Path, so101: Path, seed: int, fps: int, faults: Any, seconds: float,
           ) -> tuple[Any, Any]:
    from simgap.demo.factory import make_so101_bench
    from simgap.evidence.lerobot import read_lerobot_dataset
    from simgap.rig import load_rig

    b = make_so101_bench(tmp, so101, seed, fps=fps, n_episodes=2, duration_s=seconds,
                         faults=faults, n_heldout=1)
    rig = load_rig(b.rig)
    return b, (rig, read_lerobot_dataset(rig.evidence.dataset))


@pytest.fixture(scope="module")
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


def test_clean_recording_is_eliminated_and_kp_masked_by_saturation(
        so101: Path, tmp_path: Path) -> None:
    from simgap.branches.joint_dynamics import identify_rig

    _, (rig, ds) = _bench(tmp_path, so101, 2, 30, None, 3.0)
    js = identify_rig(rig, ds, options={"joint_id_seconds": 3.0, "joint_id_episodes": 1,
                                        "joint_id_kinds": ("kp", "damping"),
                                        "joint_id_profile_delay": False})
    assert js["verdict"] == "eliminated", js["joint_verdicts"]
    for j, floor in js["noise_floor_rad"].items():
        # the floor is derived, its parts stated; the model as given lands at it
        assert floor["quantisation_rad"] == pytest.approx(rig.encoder_rad / np.sqrt(12))
        assert floor["total_rad"] >= floor["numerical_rad"]
        assert js["nominal_rms_rad"][j] <= 1.5 * floor["total_rad"]
    # every parameter has an interval or a reason in numbers
    for j in js["params_nominal"]:
        for k in ("kp", "damping"):
            assert (k in js["params_interval"][j]) != (k in js["not_identifiable"][j])
        sat = js["force_saturation"][j]
        if sat >= 0.5:
            why = js["not_identifiable"][j]["kp"]
            assert f"force saturated in {100 * sat:.0f}% of samples" in why
        for k, (lo, hi) in js["params_interval"][j].items():
            assert 0 < lo <= js["params"][j][k] <= hi
            # identified means bounded: no interval spans more than a factor two
            assert hi / lo <= 2.0
    # the not-identifiable case carries numbers: at least one reason names mrad or counts
    reasons = [r for d in js["not_identifiable"].values() for r in d.values()]
    assert reasons and all(any(ch.isdigit() for ch in r) for r in reasons)


@pytest.mark.slow
@pytest.mark.parametrize(("fps", "seed", "delay"), [(30, 11, 0.040), (100, 12, 0.025)])
def test_delay_and_dissipation_recovered(so101: Path, tmp_path: Path, fps: int, seed: int,
                                         delay: float) -> None:
    from simgap.branches.joint_dynamics import identify_rig

    faults = {"kp": 0.6, "damping": 1.5, "delay_s": delay}
    b, (rig, ds) = _bench(tmp_path, so101, seed, fps, faults, 4.0)
    js = identify_rig(rig, ds, options={"joint_id_seconds": 4.0, "joint_id_episodes": 2})
    assert js["verdict"] == "implicated"
    joints = list(js["delay_s"])
    inside = [js["delay_interval_s"][j][0] - 1e-3 <= delay <= js["delay_interval_s"][j][1]
              + 1e-3 for j in joints]
    assert np.mean(inside) >= 0.8, js["delay_interval_s"]
    assert abs(np.median([js["delay_s"][j] for j in joints]) - delay) < 0.003
    hit = []
    for t in b.truth:
        for k in KINDS5:
            if k in js["params_interval"][t.name]:
                lo, hi = js["params_interval"][t.name][k]
                hit.append(lo <= t.factor(k) * js["params_nominal"][t.name][k] <= hi)
            else:
                assert js["not_identifiable"][t.name][k]
    assert np.mean(hit) >= 0.6, hit
    dmp = [js["params"][t.name]["damping"] / js["params_nominal"][t.name]["damping"]
           for t in b.truth if "damping" in js["params"][t.name]]
    assert len(dmp) >= 4 and np.median(dmp) == pytest.approx(1.5, rel=0.1)
