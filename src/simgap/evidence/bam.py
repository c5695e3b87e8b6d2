"""BAM (Better Actuator Models) JSON servo logs -> ActuatorLog.

One file is one trajectory of one servo swinging a pendulum: a header (``mass`` [kg],
``length`` [m], ``kp`` firmware gain, ``vin`` [V], ``motor``, ``trajectory``, optional
``arm_mass``) and ``entries`` with ``timestamp`` [s], ``position`` [rad], ``speed`` [rad/s],
``goal_position`` [rad], ``torque_enable``, ``load`` and ``input_volts`` [V] (kept as the
log's ``vin``: the supply sags under load, 5.7-8.5 V on the 7.4 V XL330 bench).

The XL330 trap: ``load`` holds the Present PWM register as an unsigned 16-bit number (65535
means -1). It is cast to int16 and divided by 885 (the XL330's full-scale PWM) to give the
duty cycle in [-1, 1]. Raw logs are sampled irregularly (about 190 Hz, faster while torque
is off): they are resampled onto a regular grid explicitly and the log says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.evidence._checks import check_bam
from simgap.series import Trajectory
from simgap.validate import read_json
from simgap.values.actuator_log import (
    ActuatorLog,
    check_finite,
    check_time,
    interp_channels,
    resample_uniform,
)

BAM_DT_S = 0.005
"""Grid step BAM's own processing resamples to [s] (200 Hz)."""

BAM_START_STEPS = 5
"""How many grid steps after 0 a BAM log's first sample may come for its grid to start at 0
(the shared XL330 logs: 3.5 ms)."""

XL330_PWM_FULL_SCALE = 885.0
"""Present PWM register value at 100 % duty on the XL330."""

HEADER_KEYS = ("mass", "length", "kp", "vin", "motor", "trajectory")
ENTRY_KEYS = ("timestamp", "position", "goal_position", "torque_enable")


def pwm_register_to_duty(raw: np.ndarray, motor: str) -> np.ndarray:
    """Present-PWM register values (stored unsigned) -> duty cycle in [-1, 1]."""
    signed = np.asarray(raw, dtype=np.int64).astype(np.uint16).astype(np.int16)
    del motor  # one register layout is known (the XL330's); kept for other servos' scales
    return signed.astype(float) / XL330_PWM_FULL_SCALE


def bam_resample(
    t: np.ndarray,
    channels: dict[str, np.ndarray | None],
    dt: float,
) -> tuple[np.ndarray, dict[str, np.ndarray | None], dict[str, Any]]:
    """Resample as BAM's own processing does (``bam/process.py`` of BAM 1.0.2), so that
    simgap and BAM simulate the same samples: the grid is ``arange(0, t_last, dt)`` on the
    log's own clock (BAM logs count from the trajectory's start), each value linearly
    interpolated between the raw samples around it, and extrapolated along the first two
    before the first one (the first raw sample comes a few ms after 0). A log whose clock
    does not start within ``BAM_START_STEPS`` steps of 0 is put on a grid from its first
    sample instead (an absolute clock; BAM's processing would extrapolate across it).

    Returns:
        (grid times from 0 [s], resampled channels, report), as ``resample_uniform``.
    """
    steps = np.diff(t)
    origin = 0.0 if 0.0 <= t[0] <= BAM_START_STEPS * dt else float(t[0])
    grid = np.arange(origin, t[-1], dt)
    if grid.size < 2:
        grid = np.array([origin, origin + dt])
    out = interp_channels(grid, t, channels)
    report: dict[str, Any] = {
        "raw_samples": int(t.size),
        "raw_median_dt_s": float(np.median(steps)),
        "raw_max_dt_s": float(steps.max()),
        "dt_s": float(dt),
        "resampled": True,
        "grid": "BAM's (bam/process.py): arange(0, last timestamp, dt)"
        if origin == 0.0
        else "from the first sample (the clock does not start at 0)",
    }
    return grid - origin, out, report


def read_bam_log(path: str | Path, *, dt: float | None = BAM_DT_S) -> ActuatorLog:
    """Read one BAM JSON log.

    Args:
        path: the JSON file.
        dt: grid step for resampling [s] (``bam_resample``, BAM's own grid); None keeps
            the raw median step.

    Returns:
        An ActuatorLog whose one joint is named after the header's ``motor``, with the header
        in ``traj.meta`` (``mass``, ``arm_mass``, ``length``, ``kp``, ``vin``, ``motor``,
        ``trajectory``) and the resampling report.

    Raises:
        InputError: not JSON, a header or entry key missing, NaN values, non-increasing
            timestamps, or less than a second of data.
    """
    path = Path(path)
    src = str(path)
    if not path.exists():
        raise InputError(file=path, expected="a BAM JSON log", got="no such file")
    if path.suffix.lower() in (".csv", ".tsv", ".txt"):
        raise InputError(
            file=path,
            field="--format",
            expected="a BAM JSON log with --format bam",
            got=f"a {path.suffix} file",
            fix="a CSV log (t, cmd_<joint>, q_<joint>) takes --format csv",
        )
    raw: Any = read_json(path, "a BAM JSON log")
    if not isinstance(raw, dict):
        raise InputError(
            file=path, expected="a JSON object with a header and 'entries'", got=type(raw).__name__
        )
    for key in (*HEADER_KEYS, "entries"):
        if key not in raw:
            raise InputError(
                file=path,
                field=key,
                expected="this BAM header key",
                got="nothing",
                fix="record with BAM's recorder, which writes mass, length, kp, "
                "vin, motor, trajectory and entries",
            )
    entries = raw["entries"]
    if not isinstance(entries, list) or not entries:
        raise InputError(
            file=path,
            field="entries",
            expected="a non-empty list of samples",
            got=type(entries).__name__,
        )
    check_bam(raw, path)
    for i, entry in enumerate(entries):
        missing = [k for k in ENTRY_KEYS if k not in entry]
        if missing:
            raise InputError(
                file=path,
                field=f"entries[{i}].{missing[0]}",
                expected="this key in every entry",
                got="nothing",
            )

    def col(key: str) -> np.ndarray:
        vals = [e.get(key) for e in entries]
        return np.array([np.nan if v is None else v for v in vals], dtype=float)

    t = col("timestamp")
    check_time(t, src)
    q = col("position")
    q_cmd = col("goal_position")
    qd = col("speed") if all("speed" in e for e in entries) else None
    check_finite("position", q, src)
    check_finite("goal_position", q_cmd, src)
    check_finite("speed", qd, src)
    motor = str(raw["motor"])
    duty = None
    if all("load" in e for e in entries):
        duty = pwm_register_to_duty(np.array([e["load"] for e in entries]), motor)
    enable = np.array([bool(e["torque_enable"]) for e in entries], dtype=float)
    volts = col("input_volts") if all("input_volts" in e for e in entries) else None
    if volts is not None and not np.all(np.isfinite(volts) & (volts > 0)):
        volts = None  # a broken voltage channel: fall back on the header's vin
    channels = {"q": q, "q_cmd": q_cmd, "qd": qd, "duty": duty, "enable": enable, "vin": volts}
    tt, ch, report = (
        resample_uniform(t, channels, dt) if dt is None else bam_resample(t, channels, dt)
    )
    meta = {
        "mass": float(raw["mass"]),
        "arm_mass": float(raw.get("arm_mass", 0.0)),
        "length": float(raw["length"]),
        "kp": float(raw["kp"]),
        "vin": float(raw["vin"]),
        "motor": motor,
        "trajectory": str(raw["trajectory"]),
        "format": "bam",
    }
    q_r, cmd_r = ch["q"], ch["q_cmd"]
    assert q_r is not None and cmd_r is not None
    traj = Trajectory(
        t=tt, q_cmd=cmd_r, q=q_r, qd=ch["qd"], joint_names=(motor,), source=src, meta=meta
    )
    en = ch["enable"]
    assert en is not None
    d = ch["duty"]
    return ActuatorLog(
        traj=traj,
        torque_enable=(en > 0.5).reshape(-1, 1),
        dt=float(report["dt_s"]),
        duty=None if d is None else d.reshape(-1, 1),
        vin=ch["vin"],
        resampling=report,
    )
