"""Identify the ManiSkill controller's PD gains from a recording, with 95 % intervals.

The null is the agent's controller as training used it: each episode is replayed in ManiSkill
(``simgap.maniskill.replay``) from its first recorded state with its recorded commands, and
its RMS error per joint is held against the instrument's floor (one encoder count / sqrt 12:
a perfect simulator lands there). The fit is simgap's one least-squares engine
(``simgap.fit.search.least_squares``: Levenberg-Marquardt in normalised coordinates, 95 %
Student-t intervals from s^2 (J^T J)^-1, the identifiability checks of ``assess``) over
per-joint multipliers of the drive stiffness (``kp``) and damping (``kv``), and of the force
limit on the joints where halving it moves the replay by more than the floor (elsewhere the
limit never binds and the data cannot see it: said, with the number). ManiSkill's PhysX
replay is deterministic, so the Jacobian's finite differences are exact replays.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.fit.intervals import jacobian_intervals
from simgap.fit.params import ParamSet, multipliers
from simgap.fit.profile import (
    DelayProfile,
    block_intervals,
    delay_profile,
    jackknife_halfwidths,
    lag1_inflation,
    time_blocks,
)
from simgap.fit.search import FitResult, jacobian, least_squares
from simgap.fit.verdict import verdict as fit_verdict
from simgap.maniskill.replay import DriveGains, ManiSkillReplayer, recorded
from simgap.series import Trajectory

FORCE_PROBE = 0.5
"""The force limit is fitted on a joint only where scaling it by this factor moves the
nominal replay by more than the floor."""
BOUNDS = (0.1, 10.0)
"""Search range of each gain, as multipliers of the agent's own value."""
BLOCK_S = 2.0
"""Length of the time blocks the jackknife deletes one at a time [s]."""
MAX_DELAY_S = 0.15
"""Largest command delay profiled [s]."""


class ManiSkillBackend:
    """``simgap.fit.local_backend.Backend`` over ManiSkill replays (one env, candidates in turn).

    Attributes:
        problem: None: there is no MuJoCo ``ReplayProblem``; the logs and parameters are here.
        n_evals: candidate evaluations so far.
    """

    problem: Any = None

    def __init__(
        self,
        replayer: ManiSkillReplayer,
        logs: Sequence[Trajectory],
        params: ParamSet,
        nominal: DriveGains,
        delay_s: float = 0.0,
    ) -> None:
        self.replayer, self.logs, self.params, self.nominal = replayer, list(logs), params, nominal
        self.delay_s = delay_s
        self.n_evals = 0

    def gains(self, x: np.ndarray) -> DriveGains:
        """The gains of one normalised vector ``x`` (n,)."""
        return self.nominal.with_values(self.params.writes(x))

    def residuals(self, x: np.ndarray) -> np.ndarray:
        """Replayed minus recorded joint positions [rad] of each row of ``x`` (k, n), all
        logs and frames after the first flattened: shape (k, m)."""
        x = np.atleast_2d(np.asarray(x, dtype=float))
        self.n_evals += x.shape[0]
        rows = []
        for row in x:
            g = self.gains(row)
            rows.append(
                np.concatenate(
                    [
                        (
                            self.replayer.replay(log, g, delay_s=self.delay_s)
                            - recorded(log, self.replayer.joints)
                        )[1:].ravel()
                        for log in self.logs
                    ]
                )
            )
        out = np.asarray(rows)
        return np.where(np.isfinite(out), out, 1e3)

    def close(self) -> None:
        """Nothing to release (the replayer is the caller's)."""


def replay_rms(
    replayer: ManiSkillReplayer,
    logs: Sequence[Trajectory],
    gains: DriveGains | dict[str, Any],
    delay_s: float = 0.0,
) -> np.ndarray:
    """RMS replay error per joint over ``logs`` (frames after the first) [rad], shape (J,),
    each command acting ``delay_s`` [s] late."""
    err = np.concatenate(
        [
            (replayer.replay(log, gains, delay_s=delay_s) - recorded(log, replayer.joints))[1:]
            for log in logs
        ]
    )
    out: np.ndarray = np.sqrt(np.mean(err**2, axis=0))
    return out


@dataclass(frozen=True)
class GainFit:
    """The ManiSkill controller's gains fitted to recordings.

    Attributes:
        joints: the controller's joints, length J.
        nominal: the agent's own gains.
        fitted: the identified gains (nominal where not fitted).
        fit: simgap's least-squares result: values, identifiability, white-noise intervals.
        half_width: the 95 % half-widths [SI] stated, shape (n,) in ``fit.names`` order: the
            larger of the Gauss-Newton one (inflated for the residuals' lag-1
            autocorrelation) and the delete-one-block jackknife, plus the step the search
            left (``interval_halfwidths``).
        floor_rad: the instrument's floor per joint [rad] (one encoder count / sqrt 12).
        nominal_rms_rad: replay RMS error with the nominal gains per joint [rad], shape (J,).
        fitted_rms_rad: the same with the fitted gains [rad], shape (J,).
        force_effect_rad: per joint, the largest change of the nominal replay when the force
            limit is scaled by ``FORCE_PROBE`` [rad] (the limit is fitted where it exceeds
            the floor).
        episodes: the recordings' episode indices fitted.
        delay_s: the command delay the gains were fitted at [s] (0: none).
    """

    joints: tuple[str, ...]
    nominal: DriveGains
    fitted: DriveGains
    fit: FitResult
    half_width: np.ndarray
    floor_rad: float
    nominal_rms_rad: np.ndarray
    fitted_rms_rad: np.ndarray
    force_effect_rad: np.ndarray
    episodes: tuple[int, ...]
    delay_s: float = 0.0

    def interval(self, name: str) -> tuple[float, float]:
        """The 95 % interval [SI] of a fitted parameter (``joint.kp``, ``joint.kv``,
        ``joint.force_limit``)."""
        k = self.fit.names.index(name)
        v, h = float(self.fit.values[k]), float(self.half_width[k])
        return v - h, v + h


def fit_gains(
    replayer: ManiSkillReplayer,
    logs: Sequence[Trajectory],
    *,
    encoder_rad: float,
    joints: Sequence[str] | None = None,
    max_iter: int = 30,
    delay_s: float = 0.0,
) -> GainFit:
    """Fit the stiffness and damping (and the force limit where it moves the replay) of the
    joints ``joints`` (default: every controller joint) to ``logs``.

    Args:
        replayer: the ManiSkill env at the logs' control period.
        logs: the recordings to fit (hold others out to prove the result).
        encoder_rad: one encoder count [rad]: the floor is ``encoder_rad / sqrt(12)``.
        joints: the joints whose gains are fitted.
        max_iter: Levenberg-Marquardt iterations per run.
        delay_s: the command delay held while the gains are fitted [s].
    """
    if not logs:
        raise InputError(field="logs", expected="at least one recording to fit", got=0)
    if not encoder_rad > 0:
        raise InputError(
            field="encoder_rad", expected="a positive encoder count [rad]", got=encoder_rad
        )
    joints = tuple(joints or replayer.joints)
    unknown = [j for j in joints if j not in replayer.joints]
    if unknown:
        raise InputError(
            field="joints",
            expected=f"joints of the controller {list(replayer.joints)}",
            got=unknown,
        )
    floor = float(encoder_rad / np.sqrt(12.0))
    nominal = replayer.nominal_gains()
    base = [replayer.replay(log, nominal, delay_s=delay_s) for log in logs]
    probe = nominal.with_values(
        {
            ("force_limit", j): FORCE_PROBE * nominal.force_limit[i]
            for i, j in enumerate(nominal.joints)
        }
    )
    effect = np.max(
        [
            np.abs(replayer.replay(log, probe, delay_s=delay_s) - b).max(axis=0)
            for log, b in zip(logs, base, strict=True)
        ],
        axis=0,
    )
    keys = [(kind, j) for j in joints for kind in ("kp", "kv")]
    keys += [("force_limit", j) for j in joints if effect[replayer.joints.index(j)] > floor]
    values = {("kp", j): s for j, s in zip(nominal.joints, nominal.stiffness, strict=True)}
    values |= {("kv", j): d for j, d in zip(nominal.joints, nominal.damping, strict=True)}
    values |= {
        ("force_limit", j): f for j, f in zip(nominal.joints, nominal.force_limit, strict=True)
    }
    params = multipliers(keys, values, *BOUNDS)
    backend = ManiSkillBackend(replayer, logs, params, nominal, delay_s)
    meas = [recorded(log, replayer.joints) for log in logs]
    nominal_rms = np.sqrt(
        np.mean(np.concatenate([(b - m)[1:] for b, m in zip(base, meas, strict=True)]) ** 2, axis=0)
    )
    result = least_squares(backend, params, max_iter=max_iter, noise=floor)
    fitted = backend.gains(result.x)
    hw = interval_halfwidths(
        backend,
        result.x,
        [log.t.size - 1 for log in logs],
        block=max(2, int(round(BLOCK_S * replayer.control_freq))),
        floor_rad=floor,
    )
    return GainFit(
        joints=replayer.joints,
        nominal=nominal,
        fitted=fitted,
        fit=result,
        half_width=hw * np.abs([p.value_per_x for p in params.params]),
        floor_rad=floor,
        nominal_rms_rad=nominal_rms,
        fitted_rms_rad=replay_rms(replayer, logs, fitted, delay_s),
        force_effect_rad=effect,
        episodes=tuple(log.episode for log in logs),
        delay_s=delay_s,
    )


def interval_halfwidths(
    backend: ManiSkillBackend, x: np.ndarray, lengths: list[int], block: int, floor_rad: float
) -> np.ndarray:
    """95 % half-widths in normalised coordinates at the fit ``x``, the way the joint-dynamics
    fit states them: max(Gauss-Newton x lag-1 inflation, block jackknife) + the Gauss-Newton
    step the search left + what the floor hides.

    The last term treats the instrument's floor as a bias, not as noise that averages down:
    a change of the parameters whose replay moves by less than ``floor_rad`` RMS cannot be
    told from quantisation, so the half-width of parameter k is
    ``floor sqrt(m [(J^T J)^-1]_kk)`` (m residuals). It is what keeps a ridge honest:
    with the SO-100's drive (damping / stiffness = 0.1 s against a 0.05 s frame) the replay
    sees the ratio sharply and the stiffness alone only through the gravity sag, a fraction
    of a 4096-count encoder's count.

    Args:
        lengths: residual frames per log (frames after the first); block: frames per block;
        floor_rad: the instrument's floor [rad].
    """
    params = backend.params
    r0 = backend.residuals(x[None])[0]
    jac = jacobian(backend, x, r0, params.x_upper)
    J = len(backend.replayer.joints)
    N = sum(lengths)
    # the backend's rows are frame-major (frame, joint); the profile helpers want joint-major
    resid = r0.reshape(N, J).T
    jac_jm = jac.reshape(N, J, -1).transpose(1, 0, 2).reshape(J * N, -1)
    infl = max(lag1_inflation(row) for row in resid)
    cols = np.arange(len(params))
    hw, _ = block_intervals(jac_jm, resid.reshape(-1), infl, cols)
    jk, left = jackknife_halfwidths(jac_jm, resid, time_blocks(lengths, block), cols)
    # the floor's bound is one standard error of this bias: floor sqrt(m [(J^T J)^-1]_kk)
    hide = jacobian_intervals(jac_jm, np.zeros(J * N), s2_min=floor_rad**2 * J * N).sd[cols]
    out: np.ndarray = np.maximum(hw, jk) + left + hide
    return out


def verdict(
    nominal_rms_rad: np.ndarray,
    fitted_rms_rad: np.ndarray,
    floor_rad: float,
) -> str:
    """The one identification verdict (``simgap.fit.verdict``) on the worst joint."""
    k = int(np.argmax(nominal_rms_rad))
    return fit_verdict(float(nominal_rms_rad[k]), float(fitted_rms_rad[k]), floor_rad)


def profile_delay(
    replayer: ManiSkillReplayer,
    logs: Sequence[Trajectory],
    gains: DriveGains | dict[str, Any],
    *,
    encoder_rad: float,
    max_delay_s: float = MAX_DELAY_S,
) -> DelayProfile:
    """The command delay of ``logs`` against ManiSkill with ``gains``: one delay for every
    joint (the commands travel together), profiled over the physics steps 0..``max_delay_s``
    (the replay's resolution) by simgap's one delay profile (``simgap.fit.profile.
    delay_profile``): its 95 % profile-likelihood interval, with the residuals' lag-1
    inflation and the floor as a bias (never narrower than the delays whose replays differ by
    less than the floor RMS), widened to half a physics step either side of the best grid
    delay (the replay's resolution), which is the best stated.

    Args:
        replayer: the ManiSkill env at the logs' control period.
        logs: the recordings.
        gains: the controller's gains held while the delay is profiled (the agent's own, or a
            fit's).
        encoder_rad: one encoder count [rad]: the floor is ``encoder_rad / sqrt(12)``.
        max_delay_s: the largest delay profiled [s].
    """
    if not logs:
        raise InputError(field="logs", expected="at least one recording", got=0)
    if not encoder_rad > 0:
        raise InputError(
            field="encoder_rad", expected="a positive encoder count [rad]", got=encoder_rad
        )
    step = 1.0 / replayer.sim_freq
    grid = np.arange(0, int(round(max_delay_s / step)) + 1) * step
    resid = []
    for d in grid:
        resid.append(
            np.concatenate(
                [
                    (
                        replayer.replay(log, gains, delay_s=float(d))
                        - recorded(log, replayer.joints)
                    )[1:]
                    for log in logs
                ]
            )
        )
    ssr = np.array([float(np.sum(r**2)) for r in resid])
    best = resid[int(np.argmin(ssr))]
    floor = float(encoder_rad / np.sqrt(12.0))
    infl = max(lag1_inflation(col) for col in best.T)
    prof = delay_profile(
        grid, ssr, dof=best.size, inflation=infl, s2_min=floor**2, min_rise=best.size * floor**2
    )
    # the replay holds a command for whole physics steps, so it cannot tell delays within half
    # a step of its best grid point: the parabola through a profile sampled at that
    # resolution says nothing finer (on an exact 50 ms plant it put the best at 51.7 ms and
    # its interval at [51.3, 52.1]); the best is the grid point, the interval at least
    # half a step either side of it
    d0 = float(grid[int(np.argmin(ssr))])
    lo, hi = prof.interval_s
    return dataclasses.replace(
        prof, best_s=d0, interval_s=(max(0.0, min(lo, d0 - step / 2)), max(hi, d0 + step / 2))
    )
