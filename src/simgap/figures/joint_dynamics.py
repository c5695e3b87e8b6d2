"""The actuator branch's ``joint_dynamics`` figures (:class:`JointDynamicsFigures`,
:class:`JointDynamicsDetails`): a LeRobot dataset replayed against the rig's own MJCF, the
delay profiled, every parameter with a 95 % interval or a reason;
``simgap.branches.actuator_dataset`` (the controller branch reports the gains of the same fit).

One name, one quantity: ``delay_s`` is always the whole command-to-motion delay of a joint
(control loop + servo); where it is split, the :class:`~simgap.figures.delay.Delay` of
:class:`DelayAccount` carries the loop's share (``loop_s``, the latency branch's median loop
time) and the servo's (``servo_s``). ``effective_delay_s`` is another quantity: the delay
and the servo's lag taken as one, which a replay identifies where the two trade off.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite, sig
from simgap.figures.delay import Delay
from simgap.figures.patch import PatchOffer

_Interval = tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class JointExcitation(Record):
    """How well one joint's commands excite what the fit must identify."""

    span_counts: float = figure(UNITLESS, "the commanded span in encoder counts")
    rms_speed_rad_s: float = figure("rad/s", "RMS commanded speed")
    reversals: int = figure(UNITLESS, "reversals of the commanded motion")
    band_hz: float = figure("Hz", "frequency below which 95 % of the commands' power lies")
    excited: bool = figure(TEXT, "the joint is excited enough to identify")
    unseen: Mapping[str, str] = figure(
        TEXT, "what the commands cannot show, and why", default_factory=dict
    )


@dataclass(frozen=True, kw_only=True)
class Excitation(Record):
    """The data's amounts and thresholds, and per joint its excitation checks."""

    fitted_s: float = figure("s", "seconds fitted")
    proof_s: float = figure("s", "seconds left to prove a patch on")
    fitted_episodes: int = figure(UNITLESS, "episodes fitted")
    fitted_frames: int = figure(UNITLESS, "frames fitted")
    min_fit_s: float = figure("s", "fewest seconds to fit")
    min_proof_s: float = figure("s", "fewest seconds to prove on")
    thin: str = figure(TEXT, "why the data are too thin to answer ('' when they are not)")
    min_span_counts: float = figure(UNITLESS, "least span that excites a joint [counts]")
    min_reversals: int = figure(UNITLESS, "fewest reversals that excite a joint")
    min_band_hz: float = figure("Hz", "least band that excites a joint")
    joints: Mapping[str, JointExcitation] = figure(
        TEXT, "each joint's checks", default_factory=dict
    )


@dataclass(frozen=True, kw_only=True)
class Clock(Record):
    """The replay's clock: when a recorded command reaches the model."""

    chosen: str = figure(TEXT, "'exact' (at its stamp) or 'step' (on the model's step)")
    source: str = figure(TEXT, "'rig', 'identified' or 'default'")
    delay_s: float = figure(
        "s", "the command-to-motion delay of the fit the clock was chosen at", default=math.nan
    )
    rms_rad: Mapping[str, float] = figure(
        "rad", "replay RMS error under each clock", default_factory=dict
    )
    gain_needed: float = figure(
        UNITLESS,
        "the fraction of squared error another clock must remove to be chosen",
        default=math.nan,
    )


@dataclass(frozen=True, kw_only=True)
class DelayAccount(Record):
    """How much of each joint's command-to-motion delay the control loop explains, and what
    is left for the servo (the loop's share is the latency branch's median loop time)."""

    loop_s: float | None = figure(
        "s",
        "the control loop's median latency from the latency "
        "finding (None: that branch did not measure it)",
    )
    delays: Mapping[str, Delay] = figure(
        TEXT,
        "per joint: the whole delay with its interval, split into the loop's and the "
        "servo's shares when the loop was measured",
        default_factory=dict,
    )
    servo_interval_s: Mapping[str, _Interval] = figure(
        "s",
        "per joint: the servo share's 95 % interval (the whole delay's, less the loop)",
        default_factory=dict,
    )
    note: str = figure(TEXT, "the account in words")


@dataclass(frozen=True, kw_only=True)
class JointDynamicsFigures(Record):
    """A LeRobot dataset replayed against the rig's MJCF: the delay and the parameters the
    data identify (each with its 95 % interval, or why not), the replay error before and
    after, and the patch's held-out proof."""

    branch = "actuator"
    kind = "joint_dynamics"

    delay_s: Mapping[str, float] = figure(
        "s", "per joint: the command-to-motion delay (loop + servo), the profile's best point"
    )
    delay_interval_s: Mapping[str, _Interval] = figure("s", "per joint: its 95 % interval")
    params: Mapping[str, Mapping[str, float]] = figure(
        TEXT,
        "per joint, the identified parameters (kp [N m/rad], kv and damping "
        "[N m s/rad], frictionloss [N m], armature [kg m^2], force_limit [N m])",
    )
    params_interval: Mapping[str, Mapping[str, _Interval]] = figure(
        TEXT, "per joint, each identified parameter's 95 % interval (its unit)"
    )
    not_identifiable: Mapping[str, Mapping[str, str]] = figure(
        TEXT, "per joint, each parameter (or 'delay') the data do not identify, and why"
    )
    shared_delay_s: float = figure("s", "the delay shared by every joint, best point")
    shared_delay_interval_s: _Interval | None = figure("s", "its 95 % interval", default=None)
    effective_delay_s: Mapping[str, float] = figure(
        "s", "per joint: delay and servo lag taken as one delay (identified on a ridge)"
    )
    effective_delay_interval_s: Mapping[str, _Interval] = figure("s", "its 95 % interval")
    delay_ridge: Mapping[str, str] = figure(
        TEXT, "joints whose delay trades off with the servo's lag, and how"
    )
    nominal_rms_rad: Mapping[str, float] = figure(
        "rad", "per joint: the rig's model's replay RMS error on the fitted episodes"
    )
    identified_rms_rad: Mapping[str, float] = figure(
        "rad", "per joint: the identified model's replay RMS error"
    )
    noise_floor_rad: Mapping[str, Mapping[str, float | bool]] = figure(
        "rad", "per joint, the noise floor's parts (total_rad and what it adds up from)"
    )
    force_saturation: Mapping[str, float] = figure(
        UNITLESS, "per joint: the fraction of samples the actuator's force saturates"
    )
    params_nominal: Mapping[str, Mapping[str, float]] = figure(
        TEXT, "per joint, the rig model's value of each parameter fitted (as params)"
    )
    bounds_x_nominal: Mapping[str, _Interval] = figure(
        UNITLESS, "each parameter's search bounds as multiples of its nominal value"
    )
    joint_verdicts: Mapping[str, str] = figure(TEXT, "per joint: its verdict")
    fitted_episodes: int | None = figure(
        UNITLESS, "episodes fitted (the rest held out)", default=None
    )
    fit_seconds: float = figure("s", "seconds of each fitted episode replayed")
    clock: Clock | None = figure(TEXT, "the replay's clock", default=None)
    joint_held: Mapping[str, str] = figure(
        TEXT, "joints the replay implicates held at inconclusive, and why", default_factory=dict
    )
    excitation: Excitation | None = figure(TEXT, "the data's excitation checks", default=None)
    delay_account: DelayAccount | None = figure(
        TEXT, "the delay split into the loop's and the servo's shares", default=None
    )
    worst_nominal_rms_rad: float = figure(
        "rad", "the largest replay RMS error of the rig's model over the joints"
    )
    estimate_of_record: str = figure(TEXT, "which fit is the estimate of record")
    patch_proof: PatchOffer | None = figure(TEXT, "the MJCF patch's held-out proof", default=None)
    patch: str = figure(TEXT, "the patch's outcome in words")
    isaaclab_not_offered: Mapping[str, str] = figure(
        TEXT, "joints left out of the Isaac Lab export, and why", default_factory=dict
    )

    def headline(self) -> Headline | None:
        """The joint the identified model replays worst (the finding's residual): its
        residual against its own noise floor (never another joint's), from what the rig's
        model left; the joint the rig's model replays worst (the key figure) where that is
        another; then the shared delay with its interval where the data identify it [mrad,
        ms]."""
        floors = {j: finite(v.get("total_rad")) for j, v in self.noise_floor_rad.items()}
        res = {
            j: r
            for j, r in self.identified_rms_rad.items()
            if finite(r) is not None and floors.get(j) is not None
        }
        if not res:
            return None
        j = max(res, key=lambda k: res[k])
        r, floor = 1e3 * res[j], 1e3 * float(floors[j] or 0.0)
        text = f"{j}: residual {sig(r)} mrad against its floor {sig(floor)} mrad"
        nominal = {k: v for k, v in self.nominal_rms_rad.items() if finite(v) is not None}
        if j in nominal:
            text += f", from {sig(1e3 * nominal[j])} mrad on the rig's model"
        worst = max(nominal, key=lambda k: nominal[k]) if nominal else j
        if worst != j:
            text += f" (worst there: {worst}, {sig(1e3 * nominal[worst])} mrad)"
        d, ci = finite(self.shared_delay_s), self.shared_delay_interval_s
        if d is not None and ci is not None:
            text += f"; delay {sig(1e3 * d)} ms [{sig(1e3 * ci[0])}, {sig(1e3 * ci[1])}]"
        return Headline(text, r, floor)


@dataclass(frozen=True, kw_only=True)
class DelayProfile(Record):
    """One joint's delay profile: the fit's squared error at each assumed delay."""

    delays_s: tuple[float, ...] = figure("s", "the assumed delays", default=())
    ssr_rad2: tuple[float, ...] = figure(
        "rad^2", "the fit's summed squared error at each", default=()
    )
    threshold_rad2: float = figure("rad^2", "the 95 % threshold on it")
    open_ends: tuple[str, ...] = figure(TEXT, "ends of the grid the interval runs into", default=())


@dataclass(frozen=True, kw_only=True)
class Traces(Record):
    """One held-out episode of a joint, as recorded and replayed (thinned)."""

    t_s: tuple[float, ...] = figure("s", "time from the episode's start", default=())
    real_rad: tuple[float, ...] = figure("rad", "the recorded joint", default=())
    before_rad: tuple[float, ...] = figure("rad", "replayed on the rig's model", default=())
    after_rad: tuple[float, ...] = figure("rad", "replayed on the proven patch", default=())


@dataclass(frozen=True, kw_only=True)
class TraceJoint(Record):
    """One joint's held-out traces."""

    traces: Traces = figure(TEXT, "the traces")
    selected: str = figure(TEXT, "'identified' when a patch was proven, else 'nominal'")


@dataclass(frozen=True, kw_only=True)
class GlobalStart(Record):
    """The fit's global start: random draws mixed into the rig model's values."""

    draws: int = figure(UNITLESS, "random starts drawn")
    seed: int | None = figure(UNITLESS, "their seed", default=None)
    joints_from_draw: Mapping[str, float] = figure(
        UNITLESS,
        "per joint: the share of grid points that started from a draw",
        default_factory=dict,
    )
    ssr_model_rad2: float = figure(
        "rad^2", "squared error from the model's values", default=math.nan
    )
    ssr_start_rad2: float = figure("rad^2", "squared error from the start chosen", default=math.nan)


@dataclass(frozen=True, kw_only=True)
class JointDynamicsDetails(Record):
    """The identification of record whole, and the held-out traces the report plots."""

    branch = "actuator"
    kind = "joint_dynamics"

    delay_s: Mapping[str, float] = figure("s", "as the figures")
    delay_interval_s: Mapping[str, _Interval] = figure("s", "as the figures")
    params: Mapping[str, Mapping[str, float]] = figure(TEXT, "as the figures")
    params_interval: Mapping[str, Mapping[str, _Interval]] = figure(TEXT, "as the figures")
    not_identifiable: Mapping[str, Mapping[str, str]] = figure(TEXT, "as the figures")
    effective_delay_s: Mapping[str, float] = figure("s", "as the figures")
    effective_delay_interval_s: Mapping[str, _Interval] = figure("s", "as the figures")
    delay_ridge: Mapping[str, str] = figure(TEXT, "as the figures")
    nominal_rms_rad: Mapping[str, float] = figure("rad", "as the figures")
    identified_rms_rad: Mapping[str, float] = figure("rad", "as the figures")
    noise_floor_rad: Mapping[str, Mapping[str, float | bool]] = figure("rad", "as the figures")
    force_saturation: Mapping[str, float] = figure(UNITLESS, "as the figures")
    params_nominal: Mapping[str, Mapping[str, float]] = figure(TEXT, "as the figures")
    params_fitted: Mapping[str, Mapping[str, float]] = figure(
        TEXT, "per joint, every parameter's best fit, identified or not (as params)"
    )
    delay_profile: Mapping[str, DelayProfile] = figure(TEXT, "per joint: the delay profile")
    shared_delay_s: float = figure("s", "as the figures")
    shared_delay_interval_s: _Interval | None = figure("s", "as the figures", default=None)
    bounds_x_nominal: Mapping[str, _Interval] = figure(UNITLESS, "as the figures")
    clock: Clock | None = figure(TEXT, "as the figures", default=None)
    global_start: GlobalStart | None = figure(TEXT, "the fit's global start", default=None)
    n_evals: int | None = figure(UNITLESS, "replays evaluated", default=None)
    verdict: str = figure(TEXT, "the branch's verdict")
    joint_verdicts: Mapping[str, str] = figure(TEXT, "as the figures")
    joint_held: Mapping[str, str] = figure(TEXT, "as the figures", default_factory=dict)
    patch_joints: tuple[str, ...] = figure(TEXT, "joints the patch is written for", default=())
    excitation: Excitation | None = figure(TEXT, "as the figures", default=None)
    seed: int | None = figure(UNITLESS, "seed of every random choice", default=None)
    fitted_episodes: int | None = figure(UNITLESS, "as the figures", default=None)
    held_out_episodes: int | None = figure(
        UNITLESS, "episodes held out to prove a patch on", default=None
    )
    fit_seconds: float = figure("s", "as the figures")
    null_hypothesis: str = figure(TEXT, "the model the recording is held against")
    joints: Mapping[str, TraceJoint] = figure(
        TEXT, "per joint, a held-out episode's traces", default_factory=dict
    )
