"""Report plots of the training-envelope branch: one per check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from simgap.figures.envelope import (
    NoiseDetails,
    PlacementDetails,
    PlacementPoints,
    RateDetails,
    SpeedDetails,
    SqueezeDetails,
)
from simgap.finding import details_of
from simgap.report.svg.distribution import histogram
from simgap.report.svg.lines import lines
from simgap.report.svg.scatter import scatter


def speed_plot(details: SpeedDetails) -> str:
    """Distributions of |joint velocity| (fastest joint per sample), real vs simulated."""
    series: dict[str, npt.ArrayLike] = {"real": details.real_abs_qd_deg_s}
    if details.sim_abs_qd_deg_s is not None:
        series["simulated"] = details.sim_abs_qd_deg_s
    return lines(
        list(details.percentiles),
        series,
        xlabel="percentile [%]",
        ylabel="|joint velocity| [deg/s]",
        title="Joint speed distribution (fastest joint), real vs simulated",
    )


def placements_plot(details: PlacementDetails) -> str:
    """Placements (x, y) against the training square, each marked by its outcome (a
    placement's success is the fraction of its trials that succeeded: 0 is drawn as an x);
    the real runs solid on top, the simulated ones as larger hollow marks around them."""
    assert details.training_x_m is not None and details.training_y_m is not None
    (x0, x1), (y0, y1) = details.training_x_m, details.training_y_m
    groups: dict[str, tuple[np.ndarray, Sequence[object]]] = {}
    evals: tuple[tuple[str, PlacementPoints | None], ...] = (
        ("sim", details.sim),
        ("real", details.real),
    )  # real last: drawn on top
    for k, v in evals:
        if v is not None:
            groups[k] = (np.asarray(v.xy_m, dtype=float).reshape(-1, 2), list(v.success))
    return scatter(
        groups,
        xlabel="x [m]",
        ylabel="y [m]",
        title="Initial object placements against the training square",
        rect=(float(x0), float(x1), float(y0), float(y1)),
        rect_label="training square",
    )


def plots(finding: Mapping[str, Any]) -> list[str]:
    """HTML snippets for one envelope Finding, chosen by its kind (its check)."""
    kind = finding.get("kind")
    if not finding.get("details"):
        return []
    if kind == SpeedDetails.kind:
        speed = details_of(finding, SpeedDetails)
        return [speed_plot(speed)] if speed.percentiles else []
    if kind == NoiseDetails.kind:
        noise = details_of(finding, NoiseDetails)
        if not noise.residuals_deg:
            return []
        s = float(noise.training_std_deg)
        return [
            histogram(
                list(noise.residuals_deg),
                xlabel="reading at rest minus its trend [deg]",
                title="Real joint-reading noise at rest vs training's spread",
                ylabel="samples",
                vlines=[(-s, "-1 sd (training)"), (s, "+1 sd (training)")],
            )
        ]
    if kind == RateDetails.kind:
        rate = details_of(finding, RateDetails)
        if not rate.intervals_ms:
            return []
        return [
            histogram(
                list(rate.intervals_ms),
                xlabel="decision interval [ms]",
                title="Real decision intervals vs training's",
                ylabel="decisions",
                vlines=[(float(rate.training_dt_ms), "training period")],
            )
        ]
    if kind == SqueezeDetails.kind:
        squeeze = details_of(finding, SqueezeDetails).squeeze_deg
        if not squeeze:
            return []
        return [
            histogram(
                list(squeeze),
                xlabel="measured opening - target [deg]",
                title="Gripper squeeze while holding",
                ylabel="samples",
                vlines=[(5.0, "5 deg")],
            )
        ]
    if kind == PlacementDetails.kind:
        placed = details_of(finding, PlacementDetails)
        if placed.training_x_m is None or placed.training_y_m is None:
            return []
        return [placements_plot(placed)]
    return []
