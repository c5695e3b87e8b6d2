"""The envelope's control-rate check: the real decision rate against training's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simgap.episodes.envelope import EnvelopeCheck

RATE_TOL = 0.1
"""A real decision rate more than this fraction away from training's is outside."""


TRAINING_DT_NEED = "[training] control_dt_s = ... from your training config"
"""What a rig without training's control period must add for the control-rate check."""


def rate_check(
    times: Sequence[np.ndarray],
    training_dt_s: float | None,
    declared_real_dt_s: float | None,
    *,
    source: str = "training.control_dt_s",
    why_not: str = "",
) -> EnvelopeCheck:
    """The real decision rate (median interval between samples) against training's.

    Args:
        times: each real episode's sample times [s].
        training_dt_s: training's control period [s]; None when the rig states none.
        declared_real_dt_s: the rig's ``control.real_dt_s`` [s], reported beside.
        source: the rig key ``training_dt_s`` was read from.
        why_not: why there is no training period, for the not-measured summary.
    """
    title = "Control rate"
    dts = (
        np.concatenate([np.diff(np.asarray(t, dtype=float)) for t in times])
        if times
        else np.empty(0)
    )
    dts = dts[dts > 0]
    if dts.size == 0:
        return EnvelopeCheck(
            "control_rate",
            title,
            "not_measured",
            summary="The real episodes carry no increasing timestamps.",
            next_step="Record the real episodes with their timestamps.",
            needs=("evidence.dataset with timestamps",),
        )
    real_dt = float(np.median(dts))
    if training_dt_s is None:
        # a rate held against nothing (or against a guess made from this recording) is no
        # verdict: say what was measured and what would make it one
        why = why_not or "the rig does not give training's control period"
        return EnvelopeCheck(
            "control_rate",
            title,
            "not_measured",
            figures={
                "real_rate_hz": 1.0 / real_dt,
                "real_dt_s": real_dt,
                "declared_real_dt_s": declared_real_dt_s,
            },
            summary=f"The real arm decides at {1 / real_dt:.3g} Hz, but {why}: nothing to "
            "hold it against.",
            next_step=f"Add {TRAINING_DT_NEED}.",
            needs=(TRAINING_DT_NEED,),
        )
    ratio = (1.0 / real_dt) / (1.0 / training_dt_s)
    outside = abs(ratio - 1.0) > RATE_TOL
    figs = {
        "real_rate_hz": 1.0 / real_dt,
        "training_rate_hz": 1.0 / training_dt_s,
        "rate_ratio": ratio,
        "real_dt_s": real_dt,
        "training_dt_s": float(training_dt_s),
        "training_dt_from": source,
        "declared_real_dt_s": declared_real_dt_s,
    }
    against = (
        "training's"
        if source == "training.control_dt_s"
        else f"the simulated control rate ({source}, standing in for training's),"
    )
    summary = (
        f"The real arm decides at {1 / real_dt:.3g} Hz against {against} "
        f"{1 / training_dt_s:.3g} Hz (ratio {ratio:.3g})."
    )
    step = (
        "Run the real loop at training's rate, or retrain at the deployed rate."
        if outside
        else "Nothing to change for the control rate."
    )
    return EnvelopeCheck(
        "control_rate",
        title,
        "outside" if outside else "inside",
        figs,
        "rate_ratio",
        summary,
        step,
        {"intervals_ms": (dts[:4000] * 1e3).tolist(), "training_dt_ms": training_dt_s * 1e3},
    )
