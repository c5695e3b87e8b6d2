"""The training envelope's figures: one record per check (observation noise, speed, control
rate, grasp margin, initial states), each with the check's name as ``check``.

A not-measured check carries only what it measured (the rest reads as not measured).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Record, figure

PERCENT = "%"
"""A percentile's rank, 0..100."""


@dataclass(frozen=True)
class NoiseFigures(Record):
    """Real joint-reading noise at rest against the noise training added."""

    branch = "envelope"
    kind = "observation_noise"

    check: str = figure(TEXT, "the check: 'observation_noise'")
    covered_by_training: bool | None = figure(
        TEXT, "the real noise lies inside what training added", default=None
    )
    real_noise_std_rad: float = figure(
        "rad", "RMS over joints of the noise at rest", default=math.nan
    )
    training_noise_std_rad: float = figure("rad", "the noise training added", default=math.nan)
    training_to_real_ratio: float = figure(
        UNITLESS,
        "training's noise over the real, each floored at one encoder count",
        default=math.nan,
    )
    raw_training_to_real_ratio: float | None = figure(
        UNITLESS, "the same ratio without the floor", default=None
    )
    encoder_floor_rad: float = figure("rad", "one encoder count", default=math.nan)
    real_noise_std_per_joint_rad: tuple[float, ...] = figure(
        "rad", "each body joint's noise at rest", default=()
    )
    still_samples: int | None = figure(UNITLESS, "samples at rest", default=None)


@dataclass(frozen=True)
class NoiseDetails(Record):
    """The readings at rest, for the report's histogram."""

    branch = "envelope"
    kind = "observation_noise"

    check: str = figure(TEXT, "the check")
    residuals_deg: tuple[float, ...] = figure(
        "deg", "readings at rest minus their trend", default=()
    )
    training_std_deg: float = figure("deg", "training's noise", default=math.nan)


@dataclass(frozen=True)
class SpeedFigures(Record):
    """The real arm's top joint speed against training's (simulated rollouts, or the stated
    top speed), with the speed factors the rig names."""

    branch = "envelope"
    kind = "speed"

    check: str = figure(TEXT, "the check: 'speed'")
    real_top_speed_rad_s: float = figure(
        "rad/s", "the real top speed (percentile, max joint)", default=math.nan
    )
    training_top_speed_rad_s: float = figure("rad/s", "training's top speed", default=math.nan)
    reference: str = figure(TEXT, "'sim_dataset' or 'training.top_speed_rad_s'", default="")
    top_speed_ratio: float = figure(UNITLESS, "real over training", default=math.nan)
    percentile: float = figure(PERCENT, "the percentile of |qd| taken per joint", default=math.nan)
    real_p95_per_joint_rad_s: Mapping[str, float] = figure(
        "rad/s", "joint -> real percentile speed", default_factory=dict
    )
    causes: Mapping[str, float] = figure(
        UNITLESS,
        "named speed factor (action_scale_ratio, rate_ratio, ...) -> its ratio",
        default_factory=dict,
    )
    named_causes_product: float = figure(UNITLESS, "action scale x rate factors", default=math.nan)
    sim_p95_per_joint_rad_s: Mapping[str, float] = figure(
        "rad/s", "joint -> simulated percentile speed", default_factory=dict
    )


@dataclass(frozen=True)
class SpeedDetails(Record):
    """Speed distributions, real against simulated."""

    branch = "envelope"
    kind = "speed"

    check: str = figure(TEXT, "the check")
    percentiles: tuple[float, ...] = figure(PERCENT, "the percentiles drawn", default=())
    real_abs_qd_deg_s: tuple[float, ...] = figure(
        "deg/s", "real |qd| of the fastest joint at each percentile", default=()
    )
    sim_abs_qd_deg_s: tuple[float, ...] | None = figure(
        "deg/s", "simulated |qd| at each percentile (None: no rollouts)", default=None
    )


@dataclass(frozen=True)
class RateFigures(Record):
    """The real decision rate against training's."""

    branch = "envelope"
    kind = "control_rate"

    check: str = figure(TEXT, "the check: 'control_rate'")
    real_rate_hz: float = figure("Hz", "1 / the median real interval", default=math.nan)
    training_rate_hz: float = figure("Hz", "training's rate", default=math.nan)
    rate_ratio: float = figure(UNITLESS, "real rate over training's", default=math.nan)
    real_dt_s: float = figure("s", "the median real interval", default=math.nan)
    training_dt_s: float = figure("s", "training's period", default=math.nan)
    training_dt_from: str = figure(TEXT, "the rig key training's period comes from", default="")
    declared_real_dt_s: float | None = figure("s", "the rig's control.real_dt_s", default=None)


@dataclass(frozen=True)
class RateDetails(Record):
    """The real decision intervals."""

    branch = "envelope"
    kind = "control_rate"

    check: str = figure(TEXT, "the check")
    intervals_ms: tuple[float, ...] = figure("ms", "real decision intervals", default=())
    training_dt_ms: float = figure("ms", "training's period", default=math.nan)


@dataclass(frozen=True)
class SqueezeFigures(Record):
    """While holding: measured gripper opening minus its target (the squeeze)."""

    branch = "envelope"
    kind = "grasp_margin"

    check: str = figure(TEXT, "the check: 'grasp_margin'")
    grasp_evidence: str = figure(TEXT, "why no episode grasped, when none did", default="")
    real_squeeze_median_deg: float = figure("deg", "median real squeeze", default=math.nan)
    real_squeeze_p10_deg: float = figure("deg", "its 10th percentile", default=math.nan)
    real_squeeze_p90_deg: float = figure("deg", "its 90th percentile", default=math.nan)
    min_squeeze_deg: float = figure(
        "deg", "a median below this is a marginal grasp", default=math.nan
    )
    gripper_torque_limit_fraction: float | None = figure(
        UNITLESS, "the real gripper's torque cap", default=None
    )
    sim_squeeze_median_deg: float = figure("deg", "median simulated squeeze", default=math.nan)


@dataclass(frozen=True)
class SqueezeDetails(Record):
    """The squeeze samples."""

    branch = "envelope"
    kind = "grasp_margin"

    check: str = figure(TEXT, "the check")
    squeeze_deg: tuple[float, ...] = figure("deg", "real squeeze while holding", default=())


@dataclass(frozen=True)
class Placements(Record):
    """One evaluation's placements against the training area."""

    placements: int = figure(UNITLESS, "placements")
    outside: int = figure(UNITLESS, "placements outside the training area")
    outside_fraction: float = figure(UNITLESS, "their share")
    min_edge_distance_m: float | None = figure(
        "m", "signed distance to the nearest edge, smallest (negative: outside)"
    )
    farthest_outside_m: float = figure("m", "how far outside the farthest one is")
    inside_successes: int = figure(UNITLESS, "successes of trials inside")
    inside_trials: int = figure(UNITLESS, "trials inside")
    outside_successes: int = figure(UNITLESS, "successes of trials outside")
    outside_trials: int = figure(UNITLESS, "trials outside")
    fisher_p: float | None = figure(UNITLESS, "Fisher's exact p, inside vs outside")


@dataclass(frozen=True)
class PlacementFigures(Record):
    """Where each evaluation's object placements fall against the training area."""

    branch = "envelope"
    kind = "initial_states"

    check: str = figure(TEXT, "the check: 'initial_states'")
    training_x_m: tuple[float, float] | None = figure(
        "m", "the training area's x range", default=None
    )
    training_y_m: tuple[float, float] | None = figure(
        "m", "the training area's y range", default=None
    )
    real: Placements | None = figure(TEXT, "the real evaluation", default=None)
    sim: Placements | None = figure(TEXT, "the simulated evaluation", default=None)
    key_outside_fraction: float = figure(
        UNITLESS, "share outside of the real (else simulated) placements", default=math.nan
    )


@dataclass(frozen=True)
class PlacementPoints(Record):
    """One evaluation's placements, for the report's scatter."""

    xy_m: tuple[tuple[float, float], ...] = figure("m", "each placement (x, y)")
    edge_distance_m: tuple[float, ...] = figure("m", "signed distance to the nearest edge")
    success: tuple[float | None, ...] = figure(
        UNITLESS, "share of each placement's trials that succeeded (None: never tried)"
    )


@dataclass(frozen=True)
class PlacementDetails(Record):
    """The placements, per evaluation."""

    branch = "envelope"
    kind = "initial_states"

    check: str = figure(TEXT, "the check")
    training_x_m: tuple[float, float] | None = figure(
        "m", "the training area's x range", default=None
    )
    training_y_m: tuple[float, float] | None = figure(
        "m", "the training area's y range", default=None
    )
    real: PlacementPoints | None = figure(TEXT, "the real evaluation", default=None)
    sim: PlacementPoints | None = figure(TEXT, "the simulated evaluation", default=None)


ENVELOPE_FIGURES: tuple[type[Record], ...] = (
    NoiseFigures,
    SpeedFigures,
    RateFigures,
    SqueezeFigures,
    PlacementFigures,
)
"""Every check's figures."""
ENVELOPE_DETAILS: tuple[type[Record], ...] = (
    NoiseDetails,
    SpeedDetails,
    RateDetails,
    SqueezeDetails,
    PlacementDetails,
)
"""Every check's details."""


def envelope_records(check: str) -> tuple[type[Record], type[Record]]:
    """The (figures, details) records of one check (``observation_noise``, ...)."""
    figs = {r.kind: r for r in ENVELOPE_FIGURES}
    dets = {r.kind: r for r in ENVELOPE_DETAILS}
    return figs[check], dets[check]
