"""The one result every fit returns (``simgap.fit.estimate``): an interval or a reason per
parameter, never both, lookups that name the valid names, a JSON form that reads back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.fit.estimate import Estimate, ParamEstimate
from simgap.fit.intervals import NULL_REASON, jacobian_intervals


def _linear_estimate() -> tuple[Estimate, np.ndarray]:
    """y = a + b t + (c + d) t^2 with noise: a and b identified, c and d confounded."""
    rng = np.random.default_rng(4)
    t = np.linspace(0.0, 1.0, 200)
    truth = np.array([0.7, -1.3, 0.4, 0.2])
    jac = np.stack([np.ones_like(t), t, t**2, t**2], axis=1)
    y = jac @ truth + rng.normal(0, 0.01, t.size)
    x, *_ = np.linalg.lstsq(jac, y, rcond=None)
    r = jac @ x - y
    est = Estimate.from_intervals(
        ["a", "b", "c", "d"],
        ["m", "m/s", "m/s^2", "m/s^2"],
        x,
        jacobian_intervals(jac, r),
        residual=float(np.sqrt(np.mean(r**2))),
        residual_unit="m",
        noise_floor=0.01,
        evaluations=1,
    )
    return est, truth


def test_identified_parameters_hold_their_value_and_the_confounded_ones_say_why() -> None:
    est, truth = _linear_estimate()
    assert est.identified == ("a", "b")
    for name, t in zip(("a", "b"), truth, strict=False):
        lo, hi = est.interval(name) or (np.nan, np.nan)
        assert lo < est.value(name) < hi and lo < t < hi
        assert est[name].reason == ""
    for name in ("c", "d"):
        p = est[name]
        assert p.interval is None and p.reason == NULL_REASON and p.rejected is None
    assert est.reasons == {"c": NULL_REASON, "d": NULL_REASON}
    assert est.residual == pytest.approx(0.01, rel=0.2) and est.noise_floor == 0.01


def test_a_caller_reason_turns_the_interval_down_and_keeps_it_as_evidence() -> None:
    rng = np.random.default_rng(1)
    jac = rng.normal(size=(50, 2))
    iv = jacobian_intervals(jac, rng.normal(0, 0.1, 50))
    est = Estimate.from_intervals(
        ["k", "c"],
        ["N/m", "N s/m"],
        [10.0, 2.0],
        iv,
        reasons=["", "ended at a bound of its range"],
        residual=0.1,
        residual_unit="m",
    )
    assert est.identified == ("k",)
    c = est["c"]
    assert c.interval is None and c.rejected is not None
    assert c.rejected[0] < 2.0 < c.rejected[1]
    assert est.noise_floor is None  # none given: the estimate says so


def test_never_both_and_never_an_interval_made_up() -> None:
    with pytest.raises(InputError, match="not both"):
        ParamEstimate("k", "N/m", 1.0, (0.5, 1.5), "too wide")
    with pytest.raises(InputError, match="not both"):
        ParamEstimate("k", "N/m", 1.0)  # neither
    with pytest.raises(InputError, match="holding the value"):
        ParamEstimate("k", "N/m", 2.0, (0.5, 1.5))
    with pytest.raises(InputError, match="not both"):  # an infinite interval is no interval
        ParamEstimate.of("k", "N/m", 1.0, (-np.inf, np.inf))
    assert ParamEstimate.of("k", "N/m", 1.0, (-np.inf, np.inf), "null").rejected is None


def test_a_nan_half_width_is_no_interval_and_says_why() -> None:
    from dataclasses import replace

    rng = np.random.default_rng(2)
    jac = rng.normal(size=(30, 2))
    iv = jacobian_intervals(jac, rng.normal(0, 0.1, 30))
    iv = replace(iv, half_width=np.array([iv.half_width[0], np.nan]))
    est = Estimate.from_intervals(
        ["a", "b"], ["1", "1"], [1.0, 2.0], iv, residual=0.1, residual_unit="1"
    )
    assert est.identified == ("a",) and "not finite" in est["b"].reason


def test_a_lookup_miss_names_the_valid_names() -> None:
    est, _ = _linear_estimate()
    with pytest.raises(NameNotFoundError) as err:
        est.interval("e")
    assert err.value.valid == ["a", "b", "c", "d"]
    assert "use one of: a, b, c, d" in str(err.value)
    with pytest.raises(KeyError):  # a NameNotFoundError is a KeyError too
        est["kp"]


def test_the_json_form_round_trips() -> None:
    est, _ = _linear_estimate()
    mixed = Estimate(
        (*est.params, ParamEstimate.of("e", "1", 3.0, (2.0, 5.0), "spans x2.5")),
        est.residual,
        "m",
        "MAE",
        None,
        17,
    )
    for e in (est, mixed):
        text = json.dumps(e.to_json(), allow_nan=False)
        back = Estimate.from_json(json.loads(text))
        assert back == e
    js = mixed.to_json()
    assert js["params"]["a"].keys() == {"unit", "value", "interval"}
    assert js["params"]["c"].keys() == {"unit", "value", "reason"}
    assert js["params"]["e"]["rejected_interval"] == [2.0, 5.0]
    assert js["noise_floor"] is None and js["residual"]["statistic"] == "MAE"
    with pytest.raises(InputError, match="JSON form"):
        Estimate.from_json({"params": {}})


def test_joint_identification_returns_one_estimate_per_joint(shared_data: Path) -> None:
    """A planted damping x2 on the SO-101 comes back inside each joint's interval where the
    joint states one, and the estimate says what to_json says."""
    import simgap.actuator.joint_id as jid
    from simgap.demo.factory import JOINTS
    from simgap.sim.replay import ReplayLog

    model = shared_data / "so101" / "so101.xml"
    t = np.arange(75) / 30.0
    rng = np.random.default_rng(3)
    cmd = 0.5 * np.sin(2 * np.pi * 0.9 * t[:, None] + rng.uniform(0, 6, 6))
    log = ReplayLog(t=t, commands=cmd, joints=JOINTS, q0=cmd[0], hold_before=cmd[0])
    blank = jid.JointProblem(model, JOINTS, [log], [np.zeros_like(cmd)], ("damping",))
    try:
        z = blank.z0 + np.log(2.0)
        q = blank.residuals(z[None], np.zeros(1))[0].T + rng.normal(0, 5e-4, cmd.shape)
    finally:
        blank.close()
    prob = jid.JointProblem(model, JOINTS, [log], [q], ("damping",))
    try:
        cfg = jid.IdConfig(kinds=("damping",), profile_delay=False, fine_iters=4, clock="exact")
        res = jid.identify(prob, encoder_rad=1e-3, config=cfg)
    finally:
        prob.close()
    js = res.to_json()
    assert len(res.estimates) == len(JOINTS)
    stated = 0
    for j, (name, est) in enumerate(zip(res.joints, res.estimates, strict=True)):
        d = est["damping"]
        assert d.unit == "N m s/rad" and est.residual_unit == "rad"
        assert est.residual == js["identified_rms_rad"][name]
        assert est.noise_floor == res.floor[name]["total_rad"]
        if d.interval is None:
            assert js["not_identifiable"][name]["damping"] == d.reason
            continue
        stated += 1
        assert list(d.interval) == js["params_interval"][name]["damping"]
        assert d.interval[0] <= 2.0 * res.nominal[j, 0] <= d.interval[1]
    assert stated >= 2, [e.reasons for e in res.estimates]


def test_excite_check_reads_the_joint_estimate() -> None:
    """``excite --for``'s check reports a stated interval, or the reason with the interval
    the fit turned down (its local one), from the joint's estimate."""
    from types import SimpleNamespace

    from simgap.actuator.excite_check import outcome

    est = Estimate(
        (
            ParamEstimate.of("damping", "N m s/rad", 0.6, (0.5, 0.7)),
            ParamEstimate.of("armature", "kg m^2", 0.03, (0.01, 0.09), "spans x9"),
        ),
        0.002,
        "rad",
    )
    res = SimpleNamespace(joints=("elbow",), estimates=(est,))
    assert outcome(res, "elbow", "damping") == {"interval": [0.5, 0.7], "value": 0.6}
    assert outcome(res, "elbow", "armature") == {
        "reason": "spans x9",
        "value": 0.03,
        "local_interval": [0.01, 0.09],
    }
