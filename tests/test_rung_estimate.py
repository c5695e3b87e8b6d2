"""Every rung of the actuator ladder states the one ``Estimate``, and a parameter that ended
at a bound of its search range says so (in the estimate and in ``simgap actuator``'s lines)."""

from __future__ import annotations

import numpy as np
import pytest

from simgap.actuator.ladder import JointResult
from simgap.actuator.lag import LAG_BOUNDS_S
from simgap.actuator.rung_estimate import AT_BOUND, at_bound, delay_bounds, rung_estimate
from simgap.errors import NameNotFoundError
from simgap.series import Trajectory
from simgap.values.actuator_log import ActuatorLog

DT = 0.01
LAG_S = 50.0
"""The bench's lag [s]: ten times the delay-lag rung's upper bound (``LAG_BOUNDS_S``)."""


def _lagged(cmd: np.ndarray, lag_s: float) -> np.ndarray:
    """Euler first-order lag (the state before each command), written out here."""
    out = np.empty_like(cmd)
    u = cmd[0]
    for k in range(cmd.size):
        out[k] = u
        u = u + DT / lag_s * (cmd[k] - u)
    return out


def _logs(lag_s: float) -> list[ActuatorLog]:
    rng = np.random.default_rng(3)
    logs = []
    t = np.arange(0, 3, DT)
    for i in range(3):
        cmd = sum(0.5 * np.sin(2 * np.pi * f * t + rng.uniform(0, 6)) for f in (0.3, 0.8, 1.9))
        q = _lagged(np.asarray(cmd), lag_s)
        tr = Trajectory(t=t, q_cmd=cmd, q=q, joint_names=("j",), source=f"syn{i}.csv")
        logs.append(ActuatorLog(traj=tr, torque_enable=np.ones((t.size, 1), bool), dt=DT))
    return logs


@pytest.fixture(scope="module")
def ladder() -> tuple[dict, dict[str, JointResult]]:
    from simgap.branches.actuator import analyse

    return analyse(_logs(LAG_S), use_net=False)


def test_every_rung_states_an_estimate(ladder: tuple[dict, dict[str, JointResult]]) -> None:
    out, fits = ladder
    fit = fits["j"]
    assert [r.model for r in fit.rungs] == ["ideal", "delay_lag", "servo"]
    floor = out["noise_floor_rad"]
    for r in fit.rungs:
        est = r.estimate
        assert est is not None, r.model
        numeric = [
            k for k, v in r.params.items() if isinstance(v, float | int) and not isinstance(v, bool)
        ]
        assert list(est.names) == numeric
        assert all(p.interval is None and p.reason for p in est), est.reasons
        assert est.residual == r.validation_mae_rad
        assert (est.statistic, est.residual_unit) == ("MAE", "rad")
        assert est.noise_floor == pytest.approx(floor)
    assert fit.rung("ideal").estimate.names == ()  # type: ignore[union-attr]
    assert fit.rung("delay_lag").estimate.evaluations > 0  # type: ignore[union-attr]
    # the servo's global search alone rolls out LadderConfig.global_samples candidates
    assert fit.rung("servo").estimate.evaluations > 384  # type: ignore[union-attr]
    units = {p.name: p.unit for p in fit.rung("servo").estimate}  # type: ignore[union-attr]
    assert units["stiffness_nm_per_rad"] == "N m/rad" and units["delay_s"] == "s"


def test_lag_beyond_its_bound_is_flagged(ladder: tuple[dict, dict[str, JointResult]]) -> None:
    fit = ladder[1]["j"]
    lag = fit.rung("delay_lag").estimate["lag_s"]  # type: ignore[index]
    assert lag.value == pytest.approx(LAG_BOUNDS_S[1], rel=1e-3)
    assert lag.reason == "ended at its bound (5 s): the data do not bound it"
    # the delay is near 0 (a pure lag), which is a delay, not the end of a search
    delay = fit.rung("delay_lag").estimate["delay_s"]  # type: ignore[index]
    assert AT_BOUND not in delay.reason and "held-out MAE" in delay.reason


def test_a_lag_inside_its_range_is_not_flagged() -> None:
    from simgap.branches.actuator import analyse

    _, fits = analyse(_logs(0.05)[:2], use_net=False)
    est = fits["j"].rung("delay_lag").estimate
    assert est is not None and est.value("lag_s") == pytest.approx(0.05, rel=0.05)
    assert not any(AT_BOUND in p.reason for p in est)


def test_cli_marks_the_parameter_at_bound(
    ladder: tuple[dict, dict[str, JointResult]], capsys: pytest.CaptureFixture[str]
) -> None:
    from simgap.cli._actuator_lines import print_ladder

    out, fits = ladder
    print_ladder(out, False, fits)
    text = capsys.readouterr().out
    assert "delay_lag lag_s 5.00 s (at bound): the data do not bound it" in text
    print_ladder(out, False)  # without the fits: the JSON alone carries no estimate
    assert "(at bound)" not in capsys.readouterr().out


def test_at_bound_rule() -> None:
    assert at_bound(4.9999997, LAG_BOUNDS_S, "s").startswith("ended at its bound (5 s)")
    assert at_bound(0.001000001, LAG_BOUNDS_S, "s").startswith("ended at its bound (0.001 s)")
    assert at_bound(4.9, LAG_BOUNDS_S, "s") == ""
    assert at_bound(0.0, (None, 0.25), "s") == ""  # a zero delay is not flagged
    # only the configured cap is a bound of the delay, not the cross-correlation delay
    from simgap.actuator.rungs import LadderConfig

    cfg = LadderConfig(noise_floor_rad=1e-3, max_delay_s=0.25)
    assert delay_bounds(0.25, cfg) == (None, 0.25)
    assert delay_bounds(0.12, cfg) == (None, None)
    assert delay_bounds(0.25, None) == (None, None)


def test_unknown_parameter_names_the_valid_ones() -> None:
    with pytest.raises(NameNotFoundError, match="lag_s") as e:
        rung_estimate("delay_lag", {"lag_ms": 3.0}, 1e-3)
    assert e.value.name == "lag_ms" and "stiffness_nm_per_rad" in e.value.valid
    est = rung_estimate("delay_lag", {"lag_s": 0.05}, 2e-3)
    assert est.noise_floor is None and "2 mrad" in est["lag_s"].reason
