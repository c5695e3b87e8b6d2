"""Command-to-motion delay: the cross-correlation estimate that bounds the delay profiles.

A transport delay trades against the dynamics (inertia, gain, lag; see the MuJoCo sysid
measurements in the reference notes), so it is neither a free parameter of a gradient fit
nor measured alone and then held. It is *profiled* with the dynamics: at every delay of a
grid the dynamics are refitted, and the delay whose fit leaves the least residual is the
estimate (``simgap.fit.profile`` for the joint fit, every joint refitted at every grid
delay in one batch; the delay_lag and servo rungs of ``simgap.actuator.ladder`` for one
servo). This module holds the bound they start from:

- ``xcorr_delay``: the peak of the cross-correlation between command velocity and measured
  velocity, refined below one sample by a parabola through the peak and its neighbours.
  Differentiating whitens slow position signals so the peak is sharp. On a lagging servo the
  peak also holds the dynamics' own phase delay, so it is an upper bound: the rungs profile
  the delay between 0 and it, and the ladder reports it beside the profiled delay.
- ``parabolic_peak``: that sub-sample refinement of a sampled extremum.

The fractional-delay ``shift`` the profiles apply to a signal is ``simgap.fit.delay``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simgap.errors import InputError

DEFAULT_MAX_DELAY_S = 0.25
"""Largest delay searched [s]."""


def parabolic_peak(y_left: float, y_mid: float, y_right: float) -> float:
    """Offset in (-0.5, 0.5) samples of the extremum of the parabola through three points."""
    den = y_left - 2.0 * y_mid + y_right
    if den == 0.0 or not np.isfinite(den):
        return 0.0
    return float(np.clip(0.5 * (y_left - y_right) / den, -0.5, 0.5))


def xcorr_delay(
    cmds: Sequence[np.ndarray],
    meas: Sequence[np.ndarray],
    dt: float,
    *,
    max_delay_s: float = DEFAULT_MAX_DELAY_S,
    source: str = "",
) -> float:
    """Delay [s] by which the measured motion follows the command, pooled over logs.

    Args:
        cmds: commanded positions [rad], one 1-D array per log (same ``dt``).
        meas: measured positions [rad], matching ``cmds``.
        dt: sample period [s].
        max_delay_s: largest delay considered [s].
        source: named in the error when the command never moves.

    Returns:
        The delay [s] >= 0 maximising the summed normalised cross-correlation of the two
        velocities over lags 0..max_delay, refined to a fraction of a sample.

    Raises:
        InputError: the command is constant in every log (nothing to correlate).
    """
    kmax = max(1, int(round(max_delay_s / dt)))
    total = np.zeros(kmax + 1)
    used = 0
    for c, m in zip(cmds, meas, strict=True):
        vc = np.diff(np.asarray(c, dtype=float))
        vm = np.diff(np.asarray(m, dtype=float))
        vc = vc - vc.mean()
        vm = vm - vm.mean()
        n = vc.size
        if n <= kmax + 2 or not np.any(vc):
            continue
        nc, nm = float(np.linalg.norm(vc)), float(np.linalg.norm(vm))
        if nc == 0.0 or nm == 0.0:
            continue
        for k in range(kmax + 1):
            total[k] += float(np.dot(vc[: n - k], vm[k:])) / (nc * nm)
        used += 1
    if used == 0:
        raise InputError(
            file=source,
            field="command",
            expected="a command that moves",
            got="a constant command in every log (no excitation)",
            fix="record while exciting the joint, e.g. with the chirps of 'simgap excite'",
        )
    k = int(np.argmax(total))
    frac = parabolic_peak(total[k - 1], total[k], total[k + 1]) if 0 < k < kmax else 0.0
    return max(0.0, (k + frac) * dt)
