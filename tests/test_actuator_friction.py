"""BAM friction families: the budget's physics, the boxes, and known M3/M4 parameters
recovered within their bootstrap intervals from logs simulated with them."""

from __future__ import annotations

import numpy as np
import pytest

from simgap.actuator.families import STS3215, XL330
from simgap.actuator.family_fit import bootstrap_intervals, bootstrap_json, fit_families
from simgap.actuator.friction import FAMILIES, FRICTION_BOXES, friction_family
from simgap.actuator.ladder import build_batch
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch, bam_drive, pendulum_load
from simgap.errors import NameNotFoundError
from simgap.fit import cma_es as cma_fit
from simgap.values.load import JointLoad
from tests.bam_synth import make_logs

TRUTH = {
    "kt": 0.38,
    "R": 3.4,
    "armature": 0.0019,
    "q_offset": 0.03,
    "delay_s": 0.01,
    "friction_base": 0.009,
    "friction_viscous": 0.0044,
    "load_friction_base": 0.12,
    "friction_stribeck": 0.02,
    "dtheta_stribeck": 0.5,
    "alpha": 1.5,
    "load_friction_stribeck": 0.1,
}


def _batch(n: int = 1, T: int = 400, enable: bool = False, q0: float = 0.3) -> ServoBatch:
    inertia, gs, gc = pendulum_load(0.49, 0.1)
    return ServoBatch(
        dt=0.005,
        cmd=np.full((n, T), q0),
        q=np.full((n, T), q0),
        mask=np.ones((n, T)),
        enable=np.full((n, T), enable),
        qd0=np.zeros(n),
        gain=np.full(n, 400 * XL330.error_gain),
        vin=np.full(n, 7.4),
        max_pwm=np.ones(n),
        tau_max=np.full(n, np.inf),
        inertia=np.full(n, inertia),
        g_sin=np.full(n, gs),
        g_cos=np.full(n, gc),
    )


def _x(family: str, **over: float) -> tuple[PhysicalSpace, np.ndarray]:
    sp = PhysicalSpace(friction_family(family), XL330)
    vals = {**TRUTH, **over}
    return sp, np.array([[vals[n] for n in sp.names]])


def test_friction_stops_but_never_pushes() -> None:
    # torque off, 0.3 rad from hanging: gravity 0.48 sin(0.3) = 0.14 N m
    sp, x = _x("m1", friction_base=0.2, q_offset=0.0)  # budget above gravity: held
    assert np.ptp(simulate_physical(sp.superset(x), _batch())[0]) < 1e-9
    sp, x = _x("m1", friction_base=0.05, q_offset=0.0)  # below: it falls, towards 0
    q = simulate_physical(sp.superset(x), _batch())[0, 0]
    assert q[-1] < 0.3 - 0.05 and q.min() > -0.3  # friction only takes energy


def test_m3_is_m5_with_equal_directional_terms() -> None:
    b = _batch(enable=True, q0=0.0)
    b = ServoBatch(**{**b.__dict__, "cmd": np.sin(np.linspace(0, 6, 400))[None] * 1.2})
    sp3, x3 = _x("m3")
    sp5 = PhysicalSpace(friction_family("m5"), XL330)
    v5 = {
        **TRUTH,
        "friction_stribeck": 0.0,
        "load_friction_motor": 0.12,
        "load_friction_external": 0.12,
        "load_friction_motor_stribeck": 0.0,
        "load_friction_external_stribeck": 0.0,
    }
    x5 = np.array([[v5[n] for n in sp5.names]])
    a = simulate_physical(sp3.superset(x3), b)
    c = simulate_physical(sp5.superset(x5), b)
    assert np.abs(a - c).max() < 1e-9
    assert np.abs(a - simulate_physical(_x("m1")[0].superset(_x("m1")[1]), b)).max() > 1e-3


def test_every_parameter_has_a_physical_box() -> None:
    for fam in FAMILIES:
        for servo in (XL330, STS3215):
            sp = PhysicalSpace(fam, servo, fit_max_velocity=True)
            assert np.all(sp.lo < sp.hi) and np.all(np.isfinite(sp.hi))
            z = np.random.default_rng(0).random((5, len(sp.names)))
            assert np.allclose(sp.to_unit(sp.from_unit(z)), z)
    assert PhysicalSpace(friction_family("m1"), XL330).box("R") == (2.0, 5.0)  # BAM's box
    assert FRICTION_BOXES["load_friction_base"] == (0.0, 0.5)
    with pytest.raises(NameNotFoundError, match="m1"):
        friction_family("m7")


def test_motor_curve_penalises_an_impossible_motor() -> None:
    sp, x = _x("m1")
    assert sp.penalty(x)[0] == 0.0  # BAM-like XL330: inside
    bad = x.copy()
    bad[0, sp.names.index("R")] = 15.3  # the R that overfitted
    bad[0, sp.names.index("kt")] = 1.09
    assert sp.penalty(bad)[0] > 0.3


WIDTH_BOUND = {
    ("m3", "kt"): 0.5,
    ("m3", "R"): 0.5,
    ("m3", "armature"): 0.5,
    ("m3", "load_friction_base"): 0.75,
    ("m4", "kt"): 0.5,
    ("m4", "R"): 0.5,
    ("m4", "armature"): 0.8,
    ("m4", "load_friction_base"): 0.9,
}
"""Bounds on the 95 % interval's width, as a fraction of the true value, that hold over the
bootstrap's draws, not at one draw. Each replicate is a short CMA-ES run, so the width is a
random quantity: over bootstrap seeds 0-11 (m3) and 0-15 x fit seeds 0-2 (m4), 30
replicates, the widest measured were m3 kt 0.24, R 0.21, armature 0.27, load friction 0.53;
m4 kt 0.29, R 0.29, armature 0.61, load friction 0.67 (m4's load friction shares the load
with its Stribeck part, and its armature with the XL330's current limit). With 10
replicates the spread was wider still (m4 armature 0.16-0.57, load friction 0.28-1.10).
Seeds fix the draw on one machine (the thread count changes nothing: OPENBLAS_NUM_THREADS=1
gives the same numbers), but a last-bit difference in floating point on another CPU or
library build is a new draw, which is how 0.5 x 0.0019 failed on a fresh clone (0.00109,
0.57 x)."""


@pytest.mark.parametrize("family", ["m3", "m4"])
def test_known_parameters_recovered_within_intervals(family: str) -> None:
    specs = [(k, kp) for k in ("sin_sin", "lift_and_drop", "up_and_down") for kp in (200, 800)]
    logs = make_logs(TRUTH, family, specs, seed=3, duration=3.0)
    loads = [JointLoad(*pendulum_load(0.49, 0.1))] * len(logs)
    batch = build_batch(logs, 0, loads, [bam_drive(lg.meta) for lg in logs])
    train = np.ones((1, len(logs)), dtype=bool)
    fit = fit_families(batch, train, XL330, 0, [family], cma_fit.CmaSettings(evaluations=800))[
        family
    ]
    assert fit.train_cost[0] < 5e-3  # counts of 1.5 mrad; real logs score 0.04-0.1
    est = bootstrap_intervals(fit, batch, train[0], 0, replicates=30, evaluations=120)
    assert est.statistic == "MAE" and est.residual == pytest.approx(fit.train_cost[0], rel=0.05)
    assert est.noise_floor is None and est.evaluations > 0
    for p in est:  # the truth inside every interval, or inside the one turned down
        low, high = p.interval or p.rejected or (np.nan, np.nan)
        assert low <= TRUTH[p.name] <= high, p
        assert low <= p.value <= high and (p.interval is None) == bool(p.reason)
    for name in ("kt", "R", "armature", "load_friction_base"):
        low, high = est.interval(name) or (np.nan, np.nan)
        width = WIDTH_BOUND[(family, name)]
        assert high - low < width * TRUTH[name], (name, est[name])
    js = bootstrap_json(est)
    assert js["kt"].keys() == {"value", "low", "high", "identifiable"}
    assert [js["kt"]["low"], js["kt"]["high"]] == list(est.interval("kt") or ())
