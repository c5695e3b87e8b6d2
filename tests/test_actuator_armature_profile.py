"""The armature profile: whether the logs pin the servo's armature or leave it to trade with
a latency (``simgap.actuator.armature_profile``). The verdict's rule on made-up probes, and
the real XL330 logs: with the free swings of lift_and_drop held out the armature is not
identifiable; with them it is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from simgap.actuator.armature_profile import RIDGE_FLOOR_FRACTION, profile_entry, ridge_reason
from simgap.fit import cma_es as cma_fit

FLOOR = 2 * np.pi / 4096


def _probe(factor: float, rise: float, delay: float = 0.009) -> dict[str, float]:
    return {
        "factor": factor,
        "armature_kg_m2": 0.0035 * factor,
        "delay_s": delay,
        "train_mae_rad": 0.027 + rise,
        "rise_rad": rise,
    }


def test_a_probe_under_the_floor_fraction_leaves_the_armature_unidentifiable() -> None:
    flat = [_probe(0.5, 0.00059), _probe(2.0, 0.006, 0.0)]
    why = ridge_reason(0.0035, flat, FLOOR, torque_off=False)
    assert "3.50 g m^2" in why and "1.75 g m^2" in why and "9.0 ms" in why
    assert "0.59 mrad" in why and "free swing" in why
    # the same with a torque-off log in the training: no advice to record one
    assert "free swing" not in ridge_reason(0.0035, flat, FLOOR, torque_off=True)
    # each probe just above the fraction: pinned
    above = RIDGE_FLOOR_FRACTION * FLOOR * 1.01
    assert ridge_reason(0.0035, [_probe(0.5, above), _probe(2.0, above)], FLOOR, False) == ""
    assert ridge_reason(0.0035, [], FLOOR, False) == ""
    # a probe that fits better than the reported fit (the latency helps): not pinned either
    better = ridge_reason(0.0014, [_probe(0.5, -0.00042, 0.0047)], FLOOR, torque_off=True)
    assert "falls by 0.42 mrad" in better and "4.7 ms" in better


@pytest.mark.slow  # four CMA-ES fits of M3 on the real logs (~30 s on 2 cores)
def test_real_xl330_the_free_swing_pins_the_armature(shared_data: Path) -> None:
    from simgap.actuator.families import XL330
    from simgap.actuator.family_fit import fit_families
    from simgap.actuator.ladder import build_batch
    from simgap.actuator.servo import bam_drive, pendulum_load
    from simgap.evidence.bam import read_bam_log
    from simgap.values.load import JointLoad

    logs = [read_bam_log(p) for p in sorted((shared_data / "bam_xl330" / "raw").glob("*.json"))]
    types = np.array([str(lg.meta["trajectory"]) for lg in logs])
    loads = [
        JointLoad(
            *pendulum_load(
                float(lg.meta["mass"]), float(lg.meta["length"]), float(lg.meta["arm_mass"])
            )
        )
        for lg in logs
    ]
    batch = build_batch(logs, 0, loads, [bam_drive(lg.meta) for lg in logs])
    verdicts = {}
    for name, train in (
        ("all", np.ones(len(logs), bool)),
        ("without lift_and_drop", types != "lift_and_drop"),
    ):
        fit = fit_families(
            batch, train[None], XL330, 0, ["m3"], cma_fit.CmaSettings(), fit_delay=False
        )["m3"]
        verdicts[name] = profile_entry(fit, batch, train, XL330, 0, 1000, FLOOR)
    pinned, free = verdicts["all"], verdicts["without lift_and_drop"]
    assert pinned["torque_off_in_training"] and pinned["reason"] == ""
    # a latency gains the real logs less than half a count (0.2 mrad at 7 ms when measured)
    assert pinned["latency_reason"] == "" and pinned["latency_probe"]["gain_rad"] < 0.0008
    assert not free["torque_off_in_training"] and "free swing" in free["reason"]
    # torque on only: more inertia than the swings allow, and half of it costs a latency
    assert free["armature_kg_m2"] > 1.5 * pinned["armature_kg_m2"]
    half = next(p for p in free["probes"] if p["factor"] == 0.5)
    assert half["delay_s"] > 0.003 and half["rise_rad"] < RIDGE_FLOOR_FRACTION * FLOOR


@pytest.mark.parametrize("delay_ms", [0.0, 8.0])
def test_a_latency_the_model_lacks_is_flagged_and_none_is_not(delay_ms: float) -> None:
    # an M3 XL330 (a draw of benchmarks/actuator_random.py, seed 6262) on the three types,
    # with or without a command latency planted; the fit has no delay, as on BAM's logs
    from simgap.actuator.families import XL330
    from simgap.actuator.family_fit import fit_families
    from simgap.actuator.ladder import build_batch
    from simgap.actuator.servo import bam_drive, pendulum_load
    from simgap.values.load import JointLoad
    from tests.bam_synth import make_logs

    truth = {
        "kt": 0.3385,
        "R": 3.058,
        "armature": 0.00261,
        "q_offset": -0.0402,
        "delay_s": delay_ms * 1e-3,
        "friction_base": 0.0296,
        "friction_viscous": 0.0091,
        "load_friction_base": 0.0866,
    }
    specs = [(k, kp) for k in ("sin_sin", "lift_and_drop", "up_and_down") for kp in (200, 800)]
    logs = make_logs(truth, "m3", specs, seed=6262, duration=3.0, noise_rad=5e-4)
    batch = build_batch(
        logs,
        0,
        [JointLoad(*pendulum_load(0.49, 0.1))] * len(logs),
        [bam_drive(lg.meta) for lg in logs],
    )
    train = np.ones(len(logs), bool)
    fit = fit_families(
        batch, train[None], XL330, 1, ["m3"], cma_fit.CmaSettings(evaluations=600), fit_delay=False
    )["m3"]
    prof = profile_entry(fit, batch, train, XL330, 1, 600, XL330.encoder_rad)
    late = prof["latency_probe"]
    assert prof["reason"] == ""  # the free swings pin the armature
    if delay_ms:
        assert "latency" in prof["latency_reason"] and late["gain_rad"] > 0.001
        assert abs(late["delay_s"] - 0.008) < 0.003
    else:
        assert prof["latency_reason"] == "" and late["gain_rad"] < 0.0005
