"""What BAM 1.0.2 computes with a fit written as its parameter file (``simgap.export.bam``).

What BAM computes with the file is stated, not assumed (``in_bam``): BAM 1.0.2's simulator
is simgap's physical servo (``physical.py``; the same samples, ``evidence.bam.bam_resample``)
driven by the header's supply voltage, without a delay, and with its XL330 firmware current
limit (1.75 A). On BAM's own logs simgap fits exactly that; elsewhere (a logged voltage, a
fitted delay) the file's ``simgap.in_bam`` gives the training MAE BAM will report and which
differences apply. ``tests/bam_real`` checks it against BAM 1.0.2 itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simgap.actuator.family_fit import per_log_mae
from simgap.actuator.friction import PHYS_NAMES
from simgap.actuator.physical import PhysicalSpace, simulate_physical
from simgap.actuator.servo import ServoBatch

BAM_RELEASE = "1.0.2"
"""The BAM release ``in_bam`` describes (better-actuator-models on PyPI)."""

BAM_CURRENT_LIMIT_A = {"xl330": 1.75}
"""The firmware current limit [A] BAM 1.0.2's simulator applies to a servo's duty
(``bam/dynamixel/actuator.py``: ``XL330Actuator(max_current=1.75)``). BAM's main branch
dropped it after the release (commit edef2f4: the XL330 does not limit current in its
voltage mode)."""


def as_bam_simulates(batch: ServoBatch, servo: str) -> ServoBatch:
    """The logs as BAM 1.0.2's simulator drives them: the header's supply voltage (BAM
    does not read the logged one) and BAM's current limit for the servo, if any."""
    lim = BAM_CURRENT_LIMIT_A.get(servo)
    return replace(batch, vin_t=None, i_max=None if lim is None else np.full(batch.n_logs, lim))


def bam_prediction(space: PhysicalSpace, x: np.ndarray, batch: ServoBatch) -> np.ndarray:
    """What BAM 1.0.2 predicts with the parameters ``x`` (n,) on every log: shape (L, T)
    [rad] (the delay dropped, ``as_bam_simulates``)."""
    sup = space.superset(np.asarray(x, dtype=float)[None])
    sup[:, PHYS_NAMES.index("delay_s")] = 0.0
    out: np.ndarray = simulate_physical(sup, as_bam_simulates(batch, space.servo.name))[0]
    return out


def in_bam(
    space: PhysicalSpace, x: np.ndarray, batch: ServoBatch, train: np.ndarray, own_mae_rad: float
) -> dict[str, Any]:
    """How the fit ``x`` (n,) scores once loaded in BAM 1.0.2, on the training logs
    (``train``: shape (L,), bool): the MAE BAM reports, simgap's own, and the differences
    between the two simulations that apply to this fit."""
    per = per_log_mae(bam_prediction(space, x, batch), batch)
    notes = []
    delay = space.named(x).get("delay_s", 0.0)
    if delay > 0:
        notes.append(f"BAM has no transport delay: the fitted {delay * 1e3:.3g} ms is dropped")
    if batch.vin_t is not None:
        notes.append("BAM drives with the header's supply voltage, simgap with the logged one")
    lim = BAM_CURRENT_LIMIT_A.get(space.servo.name)
    ours = batch.i_max
    if (lim is None) != (ours is None) or (
        lim is not None and ours is not None and not np.allclose(ours, lim)
    ):
        notes.append(
            f"BAM {BAM_RELEASE} limits the {space.servo.name}'s current to {lim} A, "
            f"simgap to {None if ours is None else float(np.max(ours))} A"
            if lim is not None
            else f"BAM {BAM_RELEASE} does not limit the {space.servo.name}'s current, simgap does"
        )
    return {
        "release": BAM_RELEASE,
        "train_mae_rad": float(per[train].mean()),
        "train_mae_by_log_rad": [float(v) for v in per[train]],
        "simgap_train_mae_rad": float(own_mae_rad),
        "differences": notes,
    }
