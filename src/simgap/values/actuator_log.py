"""ActuatorLog: one recorded trajectory of a servo, regularly sampled, plus its checks.

Readers (``simgap.evidence.bam``, ``simgap.evidence.servo_csv``, the LeRobot adapter) return
this value. Irregular sampling is never assumed regular: ``resample_uniform`` puts the
samples on a fixed grid by linear interpolation and the log records that it did so (raw
median and largest step) in ``resampling``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.series import Trajectory

MIN_DURATION_S = 1.0
"""Shortest log the fit accepts [s]."""

REGULAR_TOLERANCE = 0.02
"""Relative spread of sample steps below which a log counts as regularly sampled."""


@dataclass(frozen=True)
class ActuatorLog:
    """One servo trajectory on a regular time grid.

    Attributes:
        traj: command, measured position (and velocity/torque when logged), SI units,
            regular steps of ``dt`` [s].
        torque_enable: whether the servo drove its motor, shape (T, J), bool.
        duty: measured PWM duty cycle in [-1, 1], shape (T, J), when logged.
        vin: measured supply voltage [V], shape (T,), when logged (BAM ``input_volts``).
        dt: sample period [s].
        resampling: how the raw samples were put on the grid: ``{"resampled": bool,
            "raw_samples": int, "raw_median_dt_s": float, "raw_max_dt_s": float}``.
    """

    traj: Trajectory
    torque_enable: np.ndarray
    dt: float
    duty: np.ndarray | None = None
    vin: np.ndarray | None = None
    resampling: Mapping[str, Any] = field(default_factory=dict)

    @property
    def source(self) -> str:
        """Where the log was read from."""
        return self.traj.source

    @property
    def meta(self) -> Mapping[str, object]:
        """Header facts (mass, length, kp, vin, motor, trajectory) when the source has them."""
        return self.traj.meta


MAX_SPAN_STEPS_PER_SAMPLE = 20
"""A log whose span is more than this many median steps per sample is mostly gaps: the
regular grid it would be resampled on would interpolate across them (and a timestamp of
1e30 s would ask for 1e32 samples) [-]."""


def check_time(t: np.ndarray, source: str, field_name: str = "timestamp") -> None:
    """Refuse NaN or non-increasing timestamps and logs shorter than a second."""
    if t.ndim != 1 or t.size < 2:
        raise InputError(
            file=source,
            field=field_name,
            expected="at least two samples",
            got=f"{t.size} samples",
            fix="record at least a second of samples (simgap excite writes a 10 s excitation)",
        )
    if not np.all(np.isfinite(t)):
        raise InputError(
            file=source,
            field=field_name,
            expected="finite timestamps",
            got=f"{int(np.sum(~np.isfinite(t)))} NaN/inf values",
            fix="drop the broken rows from the log",
        )
    steps = np.diff(t)
    if np.any(steps <= 0):
        i = int(np.argmax(steps <= 0))
        raise InputError(
            file=source,
            field=field_name,
            expected="strictly increasing timestamps",
            got=f"t[{i + 1}] = {t[i + 1]:.6g} after t[{i}] = {t[i]:.6g}",
            fix="sort the samples by time and remove duplicates; a log that "
            "mixes two recordings must be split",
        )
    med = float(np.median(steps))
    with np.errstate(over="ignore"):
        span = float(t[-1] - t[0])
    if span > MAX_SPAN_STEPS_PER_SAMPLE * t.size * med:
        i = int(np.argmax(steps))
        raise InputError(
            file=source,
            field=field_name,
            expected="a continuous recording (a regular grid over its span holds "
            f"at most {MAX_SPAN_STEPS_PER_SAMPLE}x its samples)",
            got=f"t[{i + 1}] = {t[i + 1]:.6g} after t[{i}] = {t[i]:.6g}: a gap "
            f"of {steps[i]:.3g} s ({med:.3g} s the median step), in "
            f"{t.size} samples",
            fix="split the log at the gap (or fix the timestamp's units)",
        )
    if t[-1] - t[0] < MIN_DURATION_S:
        raise InputError(
            file=source,
            field=field_name,
            expected=f"at least {MIN_DURATION_S:g} s of data",
            got=f"{t[-1] - t[0]:.3g} s",
            fix="record longer (simgap excite writes a 10 s excitation)",
        )


def check_finite(name: str, arr: np.ndarray | None, source: str) -> None:
    """Refuse NaN or inf in a logged channel, naming the first bad row."""
    if arr is None:
        return
    bad = ~np.isfinite(np.asarray(arr, dtype=float))
    if np.any(bad):
        row = int(np.argwhere(bad)[0][0])
        raise InputError(
            file=source,
            field=name,
            expected="finite numbers",
            got=f"{int(bad.sum())} NaN/inf values (first at row {row})",
            fix="drop or repair the broken rows",
        )


def resample_uniform(
    t: np.ndarray,
    channels: Mapping[str, np.ndarray | None],
    dt: float | None,
) -> tuple[np.ndarray, dict[str, np.ndarray | None], dict[str, Any]]:
    """Put channels sampled at times ``t`` on a regular grid of step ``dt``.

    Args:
        t: raw sample times [s], shape (T,), strictly increasing.
        channels: name -> array of shape (T,) or (T, J) (None passes through).
        dt: grid step [s]; None takes the raw median step.

    Returns:
        (grid times starting at 0, resampled channels, report). The report says whether
        anything was interpolated: a log whose steps are all within 2 % of ``dt`` and that
        starts at 0 is kept as is.
    """
    steps = np.diff(t)
    med = float(np.median(steps))
    step = med if dt is None else float(dt)
    report: dict[str, Any] = {
        "raw_samples": int(t.size),
        "raw_median_dt_s": med,
        "raw_max_dt_s": float(steps.max()),
        "dt_s": step,
    }
    regular = bool(np.all(np.abs(steps - step) <= REGULAR_TOLERANCE * step))
    if regular:
        report["resampled"] = False
        tt = t - t[0]
        return (
            tt,
            {k: None if v is None else np.asarray(v, dtype=float) for k, v in channels.items()},
            report,
        )
    n = int(np.floor((t[-1] - t[0]) / step + 1e-9)) + 1
    grid = t[0] + step * np.arange(n)
    report["resampled"] = True
    return grid - t[0], interp_channels(grid, t, channels), report


def interp_channels(
    grid: np.ndarray, t: np.ndarray, channels: Mapping[str, np.ndarray | None]
) -> dict[str, np.ndarray | None]:
    """Channels sampled at times ``t`` (shape (T,) or (T, J); None passes through), linearly
    interpolated at ``grid`` and, before ``t[0]``, extrapolated along the first two samples
    (after ``t[-1]`` held)."""
    first = grid < t[0]

    def one(a: np.ndarray) -> np.ndarray:
        r = np.interp(grid, t, a)
        if first.any():
            r[first] = a[0] + (a[1] - a[0]) * (grid[first] - t[0]) / (t[1] - t[0])
        return r

    out: dict[str, np.ndarray | None] = {}
    for k, v in channels.items():
        if v is None:
            out[k] = None
            continue
        a = np.asarray(v, dtype=float)
        out[k] = (
            one(a) if a.ndim == 1 else np.stack([one(a[:, j]) for j in range(a.shape[1])], axis=1)
        )
    return out


def from_trajectory(traj: Trajectory, *, dt: float | None = None) -> ActuatorLog:
    """An ActuatorLog of a foundation Trajectory (LeRobot episodes): checked, and put on a
    regular grid when its timestamps are irregular (torque assumed on throughout)."""
    src = traj.source or f"episode {traj.episode}"
    t = np.asarray(traj.t, dtype=float)
    check_time(t, src)
    for name in ("q_cmd", "q", "qd", "tau"):
        check_finite(name, getattr(traj, name), src)
    tt, ch, report = resample_uniform(
        t, {"q_cmd": traj.q_cmd, "q": traj.q, "qd": traj.qd, "tau": traj.tau}, dt
    )
    q, cmd = ch["q"], ch["q_cmd"]
    assert q is not None and cmd is not None
    new = Trajectory(
        t=tt,
        q_cmd=cmd,
        q=q,
        qd=ch["qd"],
        tau=ch["tau"],
        joint_names=traj.joint_names,
        episode=traj.episode,
        source=src,
        meta=dict(traj.meta),
    )
    return ActuatorLog(
        traj=new,
        torque_enable=np.ones(q.shape, dtype=bool),
        dt=float(report["dt_s"]),
        resampling=report,
    )
