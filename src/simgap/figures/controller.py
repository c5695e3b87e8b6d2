"""The controller branch's figures: two kinds, one per fit.

- ``simpler`` (:class:`SimplerFigures`): SIMPLER's controller identification on the rig's
  logs (``simgap.branches.controller``): per-joint kp and kv searched to match the logged
  end-effector pose.
- ``joint_dynamics`` (:class:`GainsFigures`): the gains of the joint dynamics of record
  (``simgap.branches.controller_record``), the fit the actuator branch reports, with
  SIMPLER's pose fit as a cross-check only.

SIMPLER's pose loss has no SI unit: it is the mean end-effector translation error in metres
plus the mean half geodesic rotation angle in radians, added as plain numbers (weight 1), so
1 mm of position counts as much as 1 mrad of half-angle (2 mrad of rotation). Its figures are
declared :data:`POSE_LOSS` and each says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite, sig

_Interval = tuple[float, float]

POSE_LOSS = UNITLESS
"""SIMPLER's pose loss: metres of translation error plus radians of half-angle rotation
error, added as plain numbers (no SI unit; see the module docstring)."""

_LOSS = (
    "SIMPLER's pose loss (mean translation error [m] + mean half geodesic rotation "
    "angle [rad], added as plain numbers)"
)

GAINS_DOC = "kp [N m/rad], kv [N m s/rad]"


@dataclass(frozen=True, kw_only=True)
class ParamRow(Record):
    """One parameter of a search: its value, nominal and 95 % half-width."""

    value: float = figure(TEXT, "the fitted value (the parameter's unit)")
    nominal: float = figure(TEXT, "the model's value (same unit)")
    half_width: float = figure(
        TEXT, "its 95 % half-width (same unit; NaN: infinite, or withdrawn: see why)"
    )
    identified: bool = figure(TEXT, "the data pin it")
    why: str = figure(TEXT, "why it is not identified ('' when it is)", default="")


@dataclass(frozen=True, kw_only=True)
class Method(Record):
    """One search method's result."""

    loss_after: float = figure(POSE_LOSS, f"{_LOSS} at its best")
    table: Mapping[str, ParamRow] = figure(
        TEXT, "per parameter ('joint.kind'), its row", default_factory=dict
    )
    at_bounds: tuple[str, ...] = figure(TEXT, "parameters at a bound of the box", default=())
    cond: float = figure(UNITLESS, "cond(J^T J) at its best")
    n_evals: int | None = figure(UNITLESS, "candidate evaluations (rollouts per log)", default=None)
    seed: int | None = figure(UNITLESS, "the seed (annealing)", default=None)


@dataclass(frozen=True, kw_only=True)
class Traces(Record):
    """The end-effector translation error over the first episode, before and after."""

    t: tuple[float, ...] = figure("s", "the episode's times", default=())
    before_m: tuple[float, ...] = figure(
        "m", "translation error with the nominal gains", default=()
    )
    after_m: tuple[float, ...] = figure("m", "translation error with the fitted gains", default=())


@dataclass(frozen=True, kw_only=True)
class SimplerFigures(Record):
    """SIMPLER's controller fit: the pose loss before and after fitting kp and kv, and the
    gains the logs identify with their 95 % intervals."""

    branch = "controller"
    kind = "simpler"

    loss_before: float = figure(POSE_LOSS, f"{_LOSS} with the model's gains")
    loss_after: float = figure(POSE_LOSS, f"{_LOSS} with the fitted gains")
    noise_floor: float = figure(
        POSE_LOSS, f"{_LOSS} one encoder count per joint can cause", default=math.nan
    )
    cond: float = figure(UNITLESS, "cond(J^T J) of the better method at its best")
    intervals: Mapping[str, Mapping[str, float | None]] = figure(
        TEXT,
        f"per joint, each gain's 95 % half-width ({GAINS_DOC}; None: infinite, or withdrawn "
        "because the fit misses the data: not_identifiable says why)",
    )
    params: Mapping[str, Mapping[str, float]] = figure(
        TEXT, f"per joint, the identified gains ({GAINS_DOC})"
    )
    params_interval: Mapping[str, Mapping[str, _Interval]] = figure(
        TEXT, "per joint, each identified gain's 95 % interval (its unit)"
    )
    not_identifiable: Mapping[str, Mapping[str, str]] = figure(
        TEXT, "per joint, each gain the logs do not identify, and why"
    )

    def headline(self) -> Headline | None:
        """SIMPLER's pose loss before -> after against its noise floor."""
        before, after = finite(self.loss_before), finite(self.loss_after)
        if before is None or after is None:
            return None
        floor = finite(self.noise_floor)
        thr = f" against its noise floor {sig(floor)}" if floor is not None else ""
        return Headline(
            f"SIMPLER pose loss {sig(before)} -> {sig(after)}{thr} (m of "
            "translation + rad of half-angle rotation)",
            after,
            floor,
        )


@dataclass(frozen=True, kw_only=True)
class SimplerDetails(Record):
    """SIMPLER's fit whole (``simgap controller``'s JSON), which the report plots."""

    branch = "controller"
    kind = "simpler"

    verdict: str = figure(TEXT, "the branch's verdict")
    params: Mapping[str, Mapping[str, float]] = figure(
        TEXT, f"per joint, the better method's gains, identified or not ({GAINS_DOC})"
    )
    loss_before: float = figure(POSE_LOSS, f"{_LOSS} with the model's gains")
    loss_after: float = figure(POSE_LOSS, f"{_LOSS} with the fitted gains")
    intervals: Mapping[str, Mapping[str, float | None]] = figure(
        TEXT, "per joint, each gain's 95 % half-width (None: infinite, or withdrawn: see why)"
    )
    identified: Mapping[str, Mapping[str, bool]] = figure(
        TEXT, "per joint: which gains the logs pin"
    )
    methods: Mapping[str, Method] = figure(
        TEXT, "each search method's result", default_factory=dict
    )
    best: str = figure(TEXT, "the better method")
    at_bounds: tuple[str, ...] = figure(TEXT, "parameters at a bound (better method)", default=())
    cond: float = figure(UNITLESS, "cond(J^T J) (better method)")
    why: Mapping[str, str] = figure(
        TEXT, "per parameter, why it is not identified", default_factory=dict
    )
    noise_floor: float = figure(POSE_LOSS, f"{_LOSS} one encoder count per joint can cause")
    interval_inflation: float = figure(
        UNITLESS,
        "the factor the better method's half-widths were widened by for autocorrelated "
        "residuals (the square root of the lag-1 variance inflation; 1: white)",
        default=1.0,
    )
    seed: int | None = figure(UNITLESS, "the fit's seed", default=None)
    loss_measure: str = figure(TEXT, "the pose loss in words")
    traces: Traces | None = figure(TEXT, "the error over the first episode", default=None)


@dataclass(frozen=True, kw_only=True)
class CrossCheck(Record):
    """SIMPLER's pose fit at the shared delay: a cross-check, not the estimate of record."""

    delay_s: float = figure("s", "the command-to-motion delay the replay used (the joints' median)")
    loss_before: float = figure(POSE_LOSS, f"{_LOSS} with the model's gains")
    loss_after: float = figure(POSE_LOSS, f"{_LOSS} with SIMPLER's own gains")
    noise_floor: float = figure(POSE_LOSS, f"{_LOSS} one encoder count per joint can cause")
    simpler_params: Mapping[str, Mapping[str, float]] = figure(
        TEXT, f"per joint, SIMPLER's gains ({GAINS_DOC})"
    )
    role: str = figure(TEXT, "what the figure is for")


@dataclass(frozen=True, kw_only=True)
class GainsFigures(Record):
    """The servo gains of the joint dynamics of record, shared with the actuator branch."""

    branch = "controller"
    kind = "joint_dynamics"

    params: Mapping[str, Mapping[str, float]] = figure(
        TEXT, f"per joint, the identified gains ({GAINS_DOC})"
    )
    params_interval: Mapping[str, Mapping[str, _Interval]] = figure(
        TEXT, "per joint, each identified gain's 95 % interval (its unit)"
    )
    not_identifiable: Mapping[str, Mapping[str, str]] = figure(
        TEXT, "per joint, each gain the data do not identify, and why"
    )
    delay_s: Mapping[str, float] = figure(
        "s", "per joint: the command-to-motion delay (loop + servo) of the same fit"
    )
    delay_interval_s: Mapping[str, _Interval] = figure("s", "per joint: its 95 % interval")
    estimate_of_record: str = figure(TEXT, "which fit is the estimate of record")
    simpler_cross_check: CrossCheck | None = figure(
        TEXT, "SIMPLER's pose fit as a cross-check", default=None
    )
    residual_rad: Mapping[str, float] = figure(
        "rad", "per joint: the identified model's RMS replay residual", default_factory=dict
    )
    noise_floor_rad: Mapping[str, float] = figure(
        "rad",
        "per joint: the least RMS residual its verdict may expect (the encoder floor, with "
        "the model's own step in quadrature)",
        default_factory=dict,
    )

    def worst_joint(self) -> str | None:
        """The joint whose residual lies furthest above its own noise floor (the ratio), or
        None when no joint has both."""
        ratio = {}
        for j, r in self.residual_rad.items():
            res, floor = finite(r), finite(self.noise_floor_rad.get(j))
            if res is not None and floor is not None:
                ratio[j] = res / max(floor, 1e-300)
        return max(ratio, key=lambda j: ratio[j]) if ratio else None

    def headline(self) -> Headline | None:
        """The worst joint's replay residual against its own noise floor (not another
        joint's): the joint is named."""
        j = self.worst_joint()
        if j is None:
            return None
        r, f = self.residual_rad[j], self.noise_floor_rad[j]
        more = f" (worst of {len(self.residual_rad)} joints)" if len(self.residual_rad) > 1 else ""
        return Headline(
            f"{j}: replay residual {sig(r)} rad with the identified gains against its own "
            f"noise floor {sig(f)} rad{more}",
            r,
            f,
        )


@dataclass(frozen=True, kw_only=True)
class GainsDetails(Record):
    """What the gains finding found changed."""

    branch = "controller"
    kind = "joint_dynamics"

    gains_changed: tuple[str, ...] = figure(
        TEXT, "each gain whose interval excludes the nominal value, in words", default=()
    )
