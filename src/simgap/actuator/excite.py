"""Excitation for actuator identification: a chirp per joint over a wide band.

A model fitted on narrow excitation oscillates when it meets frequencies it never saw; the
seed's recipe swept 1 to 25 Hz. Each joint in turn sweeps a linear chirp from ``f0`` to
``f1`` around the middle of its range while the others hold still. The amplitude at
frequency f is ``min(range margin, v_max / (2 pi f))`` so positions stay inside the joint
limits (with a 10 % margin) and the commanded velocity inside ``v_max``; both ends ramp in
and out over half a second.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.outputs import atomic_write_text
from simgap.rig import Rig

DEFAULT_VMAX_RAD_S = 2.0 * np.pi
"""Commanded velocity limit when the model gives none [rad/s]."""

RAMP_S = 0.5
MARGIN = 0.1


def chirp_targets(
    ranges: dict[str, tuple[float, float]],
    *,
    duration_s: float = 10.0,
    f0_hz: float = 1.0,
    f1_hz: float = 25.0,
    rate_hz: float = 200.0,
    vmax_rad_s: float = DEFAULT_VMAX_RAD_S,
    seed: int = 0,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Joint targets [rad]: each joint's chirp in turn.

    Returns:
        (time [s] shape (T,), joint -> targets [rad] shape (T,)).
    """
    if not 0 < f0_hz < f1_hz:
        raise InputError(field="f0/f1", expected="0 < f0 < f1", got=(f0_hz, f1_hz))
    if f1_hz >= rate_hz / 2:
        raise InputError(
            field="f1",
            expected=f"below the Nyquist frequency {rate_hz / 2:g} Hz",
            got=f1_hz,
            fix="raise --rate or lower --f1",
        )
    if duration_s < 2 * RAMP_S + 1.0:
        raise InputError(
            field="duration", expected=f"at least {2 * RAMP_S + 1:g} s per joint", got=duration_s
        )
    rng = np.random.default_rng(seed)
    n = int(round(duration_s * rate_hz))
    tj = np.arange(n) / rate_hz
    freq = f0_hz + (f1_hz - f0_hz) * tj / duration_s
    phase = 2 * np.pi * (f0_hz * tj + (f1_hz - f0_hz) * tj**2 / (2 * duration_s))
    ramp = np.clip(np.minimum(tj, duration_s - tj) / RAMP_S, 0.0, 1.0)
    names = list(ranges)
    t = np.arange(n * len(names)) / rate_hz
    mids = {j: 0.5 * (lo + hi) for j, (lo, hi) in ranges.items()}
    out = {j: np.full(t.size, mids[j]) for j in names}
    for i, j in enumerate(names):
        lo, hi = ranges[j]
        half = 0.5 * (hi - lo) * (1.0 - MARGIN)
        amp = np.minimum(half, vmax_rad_s / (2 * np.pi * freq))
        out[j][i * n : (i + 1) * n] = mids[j] + amp * ramp * np.sin(
            phase + rng.uniform(0, 2 * np.pi)
        )
    return t, out


def write_excitation(
    rig: Rig,
    out: str | Path,
    *,
    duration_s: float = 10.0,
    f0_hz: float = 1.0,
    f1_hz: float = 25.0,
    rate_hz: float = 200.0,
    vmax_rad_s: float = DEFAULT_VMAX_RAD_S,
    lerobot: bool = False,
    seed: int = 0,
) -> Path:
    """Write the chirps as a joint-target CSV (``t, cmd_<joint>`` in rad) or, with
    ``lerobot``, as an action table (``t`` and the rig's recorded feature names in recorded
    units). Joint ranges come from the rig's model."""
    from simgap.sim.load import joint_ranges

    names = list(rig.joint_names)
    t, targets = chirp_targets(
        joint_ranges(rig.model_path, names),
        duration_s=duration_s,
        f0_hz=f0_hz,
        f1_hz=f1_hz,
        rate_hz=rate_hz,
        vmax_rad_s=vmax_rad_s,
        seed=seed,
    )
    buf = io.StringIO()
    w = csv.writer(buf)
    if lerobot:
        w.writerow(["t"] + [rig.joint(j).recorded for j in names])
        cols = [rig.joint(j).unit.from_rad(targets[j]) for j in names]
    else:
        w.writerow(["t"] + [f"cmd_{j}" for j in names])
        cols = [targets[j] for j in names]
    for k in range(t.size):
        w.writerow([f"{t[k]:.6f}"] + [f"{c[k]:.6f}" for c in cols])
    path = Path(out)
    if path.is_dir():
        path = path / ("excitation_actions.csv" if lerobot else "excitation.csv")
    return atomic_write_text(path, buf.getvalue())
