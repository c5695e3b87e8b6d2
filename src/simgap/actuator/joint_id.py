"""Joint-dynamics identification held against the rig's own MJCF.

The null hypothesis is the rig's model exactly as given: its position actuators (kp, kv,
force range), joint damping, frictionloss and armature, replayed open loop from each
episode's first observation with the episode's commands (``simgap.sim.replay``: LeRobot
record timing, commands at their own times). Never an ideal actuator.

1. **Noise floor, the instrument's** per joint (``noise_floor``): encoder quantisation
   (count / sqrt 12), sampling (timestamp error x joint speed), the reads' jitter where the
   rig states it, and the start state (the replay's change for a start known to half a
   count). A perfect model lands at this floor. The replay's discretisation, which every
   candidate shares, is reported beside it as a property of the model, not added to it.
2. **Delay profiled** (``simgap.fit.profile``): the dynamics are refitted at every delay of
   a coarse grid and then of a fine grid around its minimum, each grid one batched LM; the
   per-joint profile gives the best delay and its 95 % interval.
3. **Every parameter with an interval or a reason**: Gauss-Newton intervals at the best
   delay (inflated for residual autocorrelation), widened by the fits at every delay inside
   the delay interval; a parameter whose interval spans more than ``MAX_SPAN`` is not
   identifiable, with the reason in numbers (force saturation, sensitivity against an
   encoder count, correlation with another parameter).
4. **The recorder's clock identified**: the fit is refitted at its best delay under each
   clock of ``simgap.sim.clock.CLOCKS`` (when a frame is read and its command takes effect
   against the physics steps); one that fits better by ``CLOCK_GAIN`` is kept and the delay
   profiled again under it (``IdConfig.clock``: ``auto``, or the rig's own).
5. **A second start, when asked** (``global_start``, ``IdConfig.starts`` > 0): at every
   delay of the coarse grid, that many draws spread over the physical box (a Latin
   hypercube in the log-multipliers) are replayed in one batch; each joint takes its
   parameters from the draw (or the model's own values) that replays that joint best, and
   where the assembled start replays the arm better than the model's values the coarse
   grid is fitted from both, the lower SSR kept per delay. Off by default: a start that
   replays better is no better basin (on 20 seeds of the 24-parameter SO-101 problem,
   ``benchmarks/replay_seeds.py --starts 16``, the LM from the drawn start alone ended
   worse on 12; kept as the better of the two, the median error went from 0.86x
   mujoco.sysid's [0.46, 1.25] to 0.74x [0.43, 1.10] and the fits over 1.5x the truth's
   SSR from 4 to 1, at 0.80x sysid's time against 0.47x, the machine shared by 3 jobs).
6. **Delay against the dynamics**: where the delay interval is wide and the servo's own
   lag (kv + damping) / kp absorbs the change, the identified quantity is the effective
   delay d + (kv + damping) / kp, reported with its interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.actuator.global_start import global_start
from simgap.actuator.joint_problem import BOUNDS, FORCE_KIND, KINDS, MAX_BATCH, JointProblem
from simgap.actuator.model_floor import model_floor
from simgap.actuator.noise_floor import CHAOS_EPS_RAD, noise_floor
from simgap.actuator.profile_fit import delay_grid, profile_fit
from simgap.actuator.shared_delay import shared_delay
from simgap.fit.estimate import Estimate, ParamEstimate
from simgap.fit.params import UNITS
from simgap.fit.profile import GridFit, grid_fit, time_blocks

__all__ = [
    "BOUNDS",
    "CHAOS_EPS_RAD",
    "FORCE_KIND",
    "KINDS",
    "MAX_BATCH",
    "IdConfig",
    "JointIdResult",
    "JointProblem",
    "identify",
    "noise_floor",
]

MAX_SPAN = 2.0
"""A parameter whose 95 % interval spans more than this factor (hi / lo) is not identified."""

BLOCK_S = 2.0
"""Length of a jackknife time block [s]: longer than the residuals' correlation time (the
replay's chaotic drift decorrelates over about a second), so blocks are nearly independent."""

MIN_BLOCKS = 4
"""Fewest jackknife blocks: shorter data are cut into shorter blocks."""

SATURATED = 0.5
"""Fraction of samples with the actuator force at its limit above which the clamped gains
(``CLAMPED``) are masked."""

CLAMPED: tuple[str, ...] = ("kp", "kv")
"""The kinds inside a position actuator's force clamp: saturation masks them together."""

FIT_FLOOR_GATE = 1.5
"""A joint whose best fit's RMS is at least this many times its noise floor states no
interval: a model that explains the data lands at the floor, and a local interval around
a fit that does not is not a 95 % one (on 56 simulated SO-101 benches, intervals above
the gate held the truth 12/23 times at 30 fps and 15/19 at 100 fps, below it 148/153 and
192/202; the gate was fixed on 32 of them and held on the 24 drawn after)."""


CLOCK_GAIN = 0.02
"""A clock replaces the one fitted first only if it lowers the arm's SSR at the best delay by
this fraction (each refitted with the same iterations from the same start)."""

CLOCK_ITERS = 3
"""LM iterations of each clock's refit from the first clock's best fit (at most the fine
grid's): the first clock starts at its own optimum, the other needs only to settle, and the
full fine iterations doubled the identification's time (SO-101 24-parameter problem, 20
iterations: 3.2-4.9 s against 1.6-2.1 s with the clock given, the same fit)."""


@dataclass(frozen=True)
class IdConfig:
    """Settings of one identification.

    Attributes:
        kinds: parameter kinds fitted per joint.
        max_delay_s: largest delay profiled [s].
        coarse_step_s: coarse grid step [s].
        fine_points: points of the fine grid, spanning two coarse steps around the best.
        polish_points: delays of a third grid around the fine grid's best (0: none),
            spanning a quarter of the fine spacing either side: the parabola through the
            profile's minimum and its neighbours is biased by the profile's asymmetry in
            proportion to the spacing (measured: +2.8 ms on a planted 40 ms at the fine
            grid's 10 ms).
        coarse_iters: LM iterations on the coarse grid.
        fine_iters: LM iterations on the fine grid.
        profile_delay: profile the delay (False: fit at ``fixed_delay_s`` only).
        fixed_delay_s: the delay when it is not profiled [s].
        central: central differences from the first LM iteration (default: forward ones
            until a step is rejected, which halves the cost of a smooth problem).
        joint_blocks: the LM's steps on the joint-block Jacobian (``fit.profile``), K
            candidates per difference instead of J K; the intervals always come from
            the full central Jacobian at the end. On by default since stop 30: on 40
            seeds of the SO-101 24-parameter problem it took 0.28x mujoco.sysid's time
            at a median error 0.77x sysid's (``benchmarks/replay_seeds.py``), and the
            benches of ``docs/actuator.md`` were rerun with it.
        clock: the recorder's clock (``simgap.sim.clock.CLOCKS``), or ``auto`` to
            identify it.
        jitter_s: the spread of the reads inside a frame [s] (uniform), as the rig states
            it (``[noise] clock_jitter_s``); it enters the noise floor.
        starts: draws of the second start at each coarse delay (``global_start``; 0, the
            default: the model's values only).
        seed: the draws' seed (the same data and seed give the same fit).
    """

    kinds: tuple[str, ...] = KINDS
    max_delay_s: float = 0.14
    coarse_step_s: float = 0.02
    fine_points: int = 5
    polish_points: int = 2
    coarse_iters: int = 2
    fine_iters: int = 6
    profile_delay: bool = True
    fixed_delay_s: float = 0.0
    central: bool = False
    joint_blocks: bool = True
    clock: str = "auto"
    jitter_s: float = 0.0
    starts: int = 0
    seed: int = 0


PER_JOINT_KEYS: tuple[str, ...] = (
    "delay_s",
    "delay_interval_s",
    "params",
    "params_interval",
    "not_identifiable",
    "effective_delay_s",
    "effective_delay_interval_s",
    "delay_ridge",
    "nominal_rms_rad",
    "identified_rms_rad",
    "noise_floor_rad",
    "force_saturation",
    "params_nominal",
    "params_fitted",
    "delay_profile",
)
"""The identification JSON's per-joint tables (``JointIdResult.to_json``), each keyed by joint."""


@dataclass(frozen=True)
class JointIdResult:
    """The identification of every joint (JSON: ``to_json``).

    Attributes:
        joints: fitted joints.
        kinds: kinds per joint.
        nominal: nominal values, shape (J, K) [SI].
        floor: per-joint noise floor [rad] and its parts.
        nominal_rms: per-joint RMS residual of the rig's model as given [rad], shape (J,).
        delay: per joint, the profile (``profile.DelayProfile``).
        estimates: per joint, its ``Estimate`` (parameters named by kind): the values at
            the joint's best delay [SI], each with its 95 % interval or the reason it is
            not identifiable (the computed interval then kept as ``rejected``), the RMS
            residual of the identified model [rad] against the joint's noise floor
            (``total_rad``), the rollouts per log of the whole identification.
        effective: per joint, effective delay (best, lo, hi) [s].
        ridge: per joint, the delay/dynamics trade-off in words ("" when none).
        saturation: per joint, fraction of samples with the actuator force at its limit.
        grids: the coarse and fine grid fits.
        n_evals: rollouts per log in all.
        shared_delay: the arm's one delay (best, lo, hi) [s] (``shared_delay``).
        clock: the recorder's clock the fit replays with, how it was chosen and the arm's
            RMS residual [rad] at the best delay under each clock tried.
        start: the global start (``StartInfo.to_json``), None when none was drawn.
    """

    joints: tuple[str, ...]
    kinds: tuple[str, ...]
    nominal: np.ndarray
    floor: dict[str, dict[str, float]]
    nominal_rms: np.ndarray
    delay: tuple[Any, ...]
    estimates: tuple[Estimate, ...]
    effective: np.ndarray
    ridge: tuple[str, ...]
    saturation: np.ndarray
    grids: tuple[GridFit, ...]
    n_evals: int
    shared_delay: tuple[float, float, float] = (float("nan"),) * 3
    clock: dict[str, Any] | None = None
    start: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The contract keys (``delay_s``, ``delay_interval_s``, ``params``,
        ``params_interval``, ``not_identifiable``) plus the profile and the floor."""
        out: dict[str, Any] = {k: {} for k in PER_JOINT_KEYS}
        for j, name in enumerate(self.joints):
            p = self.delay[j]
            out["delay_s"][name] = p.best_s
            out["delay_interval_s"][name] = list(p.interval_s)
            out["effective_delay_s"][name] = float(self.effective[j, 0])
            out["effective_delay_interval_s"][name] = [
                float(self.effective[j, 1]),
                float(self.effective[j, 2]),
            ]
            if self.ridge[j]:
                out["delay_ridge"][name] = self.ridge[j]
            out["params"][name], out["params_interval"][name] = {}, {}
            out["not_identifiable"][name] = {}
            out["params_nominal"][name] = {}
            out["params_fitted"][name] = {}
            est = self.estimates[j]
            for k, kind in enumerate(self.kinds):
                e = est[kind]
                out["params_nominal"][name][kind] = float(self.nominal[j, k])
                out["params_fitted"][name][kind] = e.value
                if e.interval is None:
                    out["not_identifiable"][name][kind] = e.reason
                else:
                    out["params"][name][kind] = e.value
                    out["params_interval"][name][kind] = list(e.interval)
            if self.ridge[j]:
                out["not_identifiable"][name]["delay"] = self.ridge[j]
            out["nominal_rms_rad"][name] = float(self.nominal_rms[j])
            out["identified_rms_rad"][name] = est.residual
            out["noise_floor_rad"][name] = self.floor[name]
            out["force_saturation"][name] = float(self.saturation[j])
            out["delay_profile"][name] = {
                "delays_s": [float(v) for v in p.delays],
                "ssr_rad2": [float(v) for v in p.ssr],
                "threshold_rad2": p.threshold,
                "open_ends": list(p.open_ends),
            }
        out["shared_delay_s"] = float(self.shared_delay[0])
        out["shared_delay_interval_s"] = [float(self.shared_delay[1]), float(self.shared_delay[2])]
        out["bounds_x_nominal"] = {k: list(BOUNDS[k]) for k in self.kinds}
        out["clock"] = dict(self.clock or {"chosen": "exact", "source": "default"})
        out["global_start"] = dict(self.start or {"draws": 0})
        out["n_evals"] = self.n_evals
        return out


def identify(
    problem: JointProblem,
    *,
    encoder_rad: float,
    config: IdConfig | None = None,
) -> JointIdResult:
    """Profile the delay and identify every joint's parameters (module docstring)."""
    from simgap.actuator.joint_id_report import assess_joint

    cfg = config or IdConfig()
    if cfg.clock != "auto":
        from simgap.sim.clock import check_clock

        problem.replayer.clock = check_clock(cfg.clock)
    start, start_info = global_start(problem, delay_grid(cfg), cfg.starts, cfg.seed)
    fit, grids = profile_fit(problem, cfg, start)
    clock: dict[str, Any] = {
        "chosen": problem.replayer.clock,
        "source": "rig" if cfg.clock != "auto" else "identified",
    }
    if cfg.clock == "auto":
        fit, grids, clock = _choose_clock(problem, cfg, fit, grids, start)
    floor = noise_floor(problem, encoder_rad, cfg.jitter_s)
    model_floor(problem, fit, floor)
    problem.floor_replay = np.array(
        [
            max(floor[j]["start_state_rad"], floor[j]["chaos_rad"], floor[j]["model_rad"])
            for j in problem.joints
        ]
    )
    r_nom = problem.residuals(problem.z0[None], np.array([0.0]))[0]
    nominal_rms = np.sqrt(np.mean(r_nom**2, axis=-1))
    lengths = [t.shape[0] for t in problem.targets]
    problem.blocks = time_blocks(
        lengths, min(_block_samples(problem.logs[0].t), max(2, sum(lengths) // MIN_BLOCKS))
    )
    cache: dict[int, Any] = {}  # the linearised fit per grid point, shared by the joints
    first = [
        assess_joint(problem, fit, j, floor[name]["total_rad"], encoder_rad, cache=cache)[
            "profile_stat"
        ]
        for j, name in enumerate(problem.joints)
    ]
    shared, widened = shared_delay(first, float(fit.delays[0]), float(fit.delays[-1]))
    profiles, values, intervals, reasons, effective, ridge, best_rms = [], [], [], [], [], [], []
    for j, name in enumerate(problem.joints):
        a = assess_joint(
            problem,
            fit,
            j,
            floor[name]["total_rad"],
            encoder_rad,
            delay_interval=widened[j],
            cache=cache,
        )
        profiles.append(a["profile"])
        values.append(a["values"])
        intervals.append(a["intervals"])
        reasons.append(a["reasons"])
        effective.append(a["effective"])
        ridge.append(a["ridge"])
        best_rms.append(a["rms"])
    # the arm's one delay as printed: its half-width at least the median joint's reported
    # one (the statistical interval widened by the delays the floor cannot tell apart), so
    # the arm-wide figure is never narrower than what each joint's own figure can claim
    shared, _ = shared_delay(profiles, float(fit.delays[0]), float(fit.delays[-1]))
    # saturation at each joint's own best fit (one replay at the median best delay)
    zb = np.log(np.array(values) / problem.ref).reshape(-1)
    sat = problem.saturation(zb, float(np.median([p.best_s for p in profiles])))
    from simgap.actuator.joint_id_report import floor_reasons, saturation_reasons

    reasons = saturation_reasons(problem, reasons, sat, np.array(values))
    reasons = floor_reasons(
        problem,
        reasons,
        np.array(best_rms),
        np.array([floor[n]["total_rad"] for n in problem.joints]),
        np.array(values),
        FIT_FLOOR_GATE,
    )
    estimates = tuple(
        Estimate(
            tuple(
                ParamEstimate.of(kind, UNITS[kind], values[j][k], intervals[j][k], r.get(kind, ""))
                for k, kind in enumerate(problem.kinds)
            ),
            float(best_rms[j]),
            "rad",
            "RMS",
            float(floor[name]["total_rad"]),
            problem.n_evals,
        )
        for j, (name, r) in enumerate(zip(problem.joints, reasons, strict=True))
    )
    return JointIdResult(
        joints=problem.joints,
        kinds=problem.kinds,
        nominal=problem.nominal,
        floor=floor,
        nominal_rms=nominal_rms,
        delay=tuple(profiles),
        estimates=estimates,
        effective=np.array(effective),
        ridge=tuple(ridge),
        saturation=sat,
        grids=tuple(grids),
        n_evals=problem.n_evals,
        shared_delay=shared,
        clock=clock,
        start=start_info,
    )


def _choose_clock(
    problem: JointProblem,
    cfg: IdConfig,
    fit: GridFit,
    grids: list[GridFit],
    start: np.ndarray | None = None,
) -> tuple[GridFit, list[GridFit], dict[str, Any]]:
    """The recorder's clock (``simgap.sim.clock.CLOCKS``) that replays the recording best.

    At the fit's best delay and half a physics step either side, the fit is continued under
    every clock with the same ``CLOCK_ITERS`` iterations from the same start (no final
    Jacobian: only the SSRs are compared), and each clock is scored at its best of the
    three; a clock other than the first one wins when it lowers the arm's SSR by
    ``CLOCK_GAIN``, and the delay is then profiled again under it (the
    grids of the first clock are dropped: their SSRs belong to another replay)."""
    from simgap.sim.clock import CLOCKS

    first = problem.replayer.clock
    g = int(np.argmin(fit.ssr.sum(axis=1)))
    h = problem.replayer.physics_dt
    # each clock at its own best delay near the fit's: the clocks place an onset up to a
    # step apart, so the delay that fits best moves by up to half a step between them
    d = np.unique(
        np.clip(fit.delays[g] + np.array([-0.5, 0.0, 0.5]) * h, 0.0, float(fit.delays[-1]))
    )
    z0 = np.repeat(fit.z[g : g + 1], d.size, axis=0)
    n = fit.resid.shape[-1]
    ssr: dict[str, float] = {}
    for c in CLOCKS:
        problem.replayer.clock = c
        refit = grid_fit(
            problem.residuals,
            d,
            z0,
            problem.lo,
            problem.hi,
            problem.J,
            problem.K,
            iters=min(cfg.fine_iters, CLOCK_ITERS),
            central=cfg.central,
            joint_blocks=cfg.joint_blocks,
            final_jacobian=False,
        )
        ssr[c] = float(refit.ssr.sum(axis=1).min())
    best = min(ssr, key=lambda c: ssr[c])
    chosen = best if ssr[best] < (1.0 - CLOCK_GAIN) * ssr[first] else first
    problem.replayer.clock = chosen
    rms = {c: float(np.sqrt(v / max(1, n * problem.J))) for c, v in ssr.items()}
    info = {
        "chosen": chosen,
        "source": "identified",
        "delay_s": float(fit.delays[g]),
        "rms_rad": rms,
        "gain_needed": CLOCK_GAIN,
    }
    if chosen != first:
        fit, grids = profile_fit(problem, cfg, start)
    return fit, grids, info


def _block_samples(t: np.ndarray) -> int:
    dt = float(np.median(np.diff(np.asarray(t, dtype=float))))
    return max(2, int(round(BLOCK_S / dt)))
