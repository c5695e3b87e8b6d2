"""The next motion to record: for a parameter the identification declared not identifiable,
the excitation that would identify it, and the interval it is predicted to give.

For one joint at a time the candidates (``candidates``) are motions of that joint alone,
the others holding the recording's first pose: chirps over three bands, square steps of
three sizes (the largest a swing at the servo's torque limit, where the armature and the
link's inertia set the acceleration), and a staircase of holds across the range (the
servo held against gravity at each level). Each stays inside the joint's range less a
10 % margin, and its replay at the current estimate inside the speed limit and no more
chaotic than the recording's (``excite_replay.replay_floor``).

Each candidate is scored by the Fisher information of the joint's parameters at the
current estimate: the finite-difference sensitivities of the replay
(``simgap.fit.profile``'s central Jacobian over the joint problem's batched replays, the
same the identification's intervals come from) of the recording and of the candidate
stacked, with the delay as a nuisance column. The predicted 95 % half-width in the
log-multiplier is the Gauss-Newton one (``block_intervals``) at the variance of the
recording's residual at the estimate (at least the replay's own floor), inflated for its
lag-1 autocorrelation as the identification inflates it, plus the change that moves the
replay by that floor (``joint_id_report.assess_joint``'s rule). The design is the
candidate that narrows the parameter most.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simgap.fit.profile import block_intervals, block_jacobian

MARGIN = 0.1
"""Fraction of the joint's half range kept clear at either end."""

SPEED_USE = 0.8
"""Fraction of the speed limit a chirp commands at its peak (the servo's replay overshoots
its command a little)."""

RAMP_S = 1.0
"""Seconds of the cosine ramp into and out of each segment."""

SEGMENT_S = 6.0
"""Seconds of each candidate motion."""

STEP_HOLD_S = 0.75
"""Seconds each level of a step candidate is held."""

CHIRP_BANDS_HZ: tuple[tuple[float, float], ...] = ((0.3, 1.5), (1.5, 4.0), (4.0, 10.0))
"""Chirp bands [Hz]; the top is cut at 40 % of the frame rate."""

STEP_SIZES: tuple[float, ...] = (0.25, 0.5, 0.9)
"""Step half-sizes as fractions of the usable half range."""

HOLD_LEVELS = 5
"""Levels of the hold staircase across the usable range."""

H_Z = 0.1
"""Central-difference half-step in the log-multiplier (the identification's own)."""

H_DELAY_S = 0.005
"""Central-difference half-step of the delay column [s]."""

DELAY = "delay"
"""The name of the delay column (a target when the delay sits on a ridge)."""


@dataclass(frozen=True)
class Segment:
    """One candidate motion of one joint.

    Attributes:
        joint: the model joint that moves.
        name: the motion in words (band, size, levels).
        family: ``chirp`` | ``steps`` | ``holds``.
        q: the joint's targets [rad], shape (T,), at the recording's frame rate.
    """

    joint: str
    name: str
    family: str
    q: np.ndarray


def candidates(
    joint: str,
    lo: float,
    hi: float,
    fps: float,
    *,
    vmax_rad_s: float,
    seconds: float = SEGMENT_S,
    seed: int = 0,
) -> list[Segment]:
    """The candidate motions of ``joint`` inside [lo, hi] [rad] (module docstring)."""
    rng = np.random.default_rng(seed)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * (1.0 - MARGIN)
    t = np.arange(int(round(seconds * fps))) / fps
    out = []
    for f0, f1 in CHIRP_BANDS_HZ:
        f1 = min(f1, 0.4 * fps)
        if f1 <= f0:
            continue
        freq = f0 + (f1 - f0) * t / seconds
        phase = 2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * seconds))
        amp = np.minimum(half, SPEED_USE * vmax_rad_s / (2 * np.pi * freq))
        q = mid + amp * np.sin(phase + rng.uniform(0, 2 * np.pi))
        out.append(
            Segment(
                joint,
                f"chirp {f0:g}-{f1:g} Hz, amplitude up to {float(amp.max()):.2f} rad",
                "chirp",
                q,
            )
        )
    n_hold = max(1, int(round(STEP_HOLD_S * fps)))
    for s in STEP_SIZES:
        sign = np.where((np.arange(t.size) // n_hold) % 2 == 0, 1.0, -1.0)
        out.append(
            Segment(
                joint,
                f"steps of +-{s * half:.2f} rad about {mid:.2f} rad, {STEP_HOLD_S:g} s each",
                "steps",
                mid + s * half * sign,
            )
        )
    levels = np.linspace(mid - half, mid + half, HOLD_LEVELS)
    idx = np.minimum((t / (seconds / HOLD_LEVELS)).astype(int), HOLD_LEVELS - 1)
    out.append(
        Segment(
            joint,
            f"holds at {HOLD_LEVELS} levels {lo:.2f}..{hi:.2f} rad (against gravity)",
            "holds",
            levels[idx],
        )
    )
    return out


def _ramp(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    w = 0.5 - 0.5 * np.cos(np.pi * np.arange(1, n + 1) / n)
    out: np.ndarray = a[None] + w[:, None] * (b - a)[None]
    return out


def assemble(
    start: np.ndarray,
    joints: Sequence[str],
    segments: Sequence[Segment],
    fps: float,
    vmax_rad_s: float = np.inf,
) -> np.ndarray:
    """Commands [rad], shape (T, J): a ramp's length at ``start``, then each segment in
    turn, ramped into from ``start`` and back to it, the other joints at ``start``. A
    ramp lasts ``RAMP_S`` or longer, so that its peak speed (pi / 2 x distance / length)
    stays under half ``vmax_rad_s``."""
    n_r = max(2, int(round(RAMP_S * fps)))

    def n_ramp(a: np.ndarray, b: np.ndarray) -> int:
        need = 0.5 * np.pi * float(np.max(np.abs(b - a))) / (0.5 * vmax_rad_s) * fps
        return max(n_r, int(np.ceil(need)))

    parts = [np.repeat(start[None], n_r, axis=0)]
    for seg in segments:
        j = list(joints).index(seg.joint)
        body = np.repeat(start[None], seg.q.size, axis=0)
        body[:, j] = seg.q
        parts += [
            _ramp(start, body[0], n_ramp(start, body[0])),
            body,
            _ramp(body[-1], start, n_ramp(body[-1], start)),
        ]
    parts.append(np.repeat(start[None], n_r, axis=0))
    return np.concatenate(parts)


def sensitivities(problem: object, z: np.ndarray, delay_s: float) -> np.ndarray:
    """The replay's sensitivities at ``z`` (log-multipliers of ``problem.joints``) and the
    delay: shape (J*N, J*K + 1) [rad per unit z; rad/s for the last, delay, column], rows
    joint-major, from central differences in one batched call each."""
    p = problem
    z = np.asarray(z, dtype=float)
    d = np.array([delay_s])
    r0 = p.residuals(z[None], d).reshape(1, -1)  # type: ignore[attr-defined]
    jac, _ = block_jacobian(
        lambda zz, dd: p.residuals(zz, dd).reshape(zz.shape[0], -1),  # type: ignore[attr-defined]
        z[None],
        r0,
        d,
        H_Z,
        p.lo,  # type: ignore[attr-defined]
        p.hi,  # type: ignore[attr-defined]
        central=True,
    )
    lo_d = max(0.0, delay_s - H_DELAY_S)
    rd = p.residuals(  # type: ignore[attr-defined]
        np.repeat(z[None], 2, axis=0),
        np.array([delay_s + H_DELAY_S, lo_d]),
    ).reshape(2, -1)
    col = (rd[0] - rd[1]) / (delay_s + H_DELAY_S - lo_d)
    out: np.ndarray = np.concatenate([jac[0], col[:, None]], axis=1)
    return out


@dataclass(frozen=True)
class Prediction:
    """The predicted 95 % intervals of one joint's parameters and its delay.

    Attributes:
        columns: the kinds, then ``delay``.
        halfwidth: 95 % half-widths: in the log-multiplier for a kind, in s for the
            delay, shape (K + 1,) (inf along a null direction).
        corr: their correlations, shape (K + 1, K + 1).
    """

    columns: tuple[str, ...]
    halfwidth: np.ndarray
    corr: np.ndarray

    def span(self, column: str) -> float:
        """hi / lo of a kind's predicted interval (the identification's ``MAX_SPAN`` test)."""
        return float(np.exp(2.0 * self.halfwidth[self.columns.index(column)]))


def predict(
    jacs: Sequence[np.ndarray],
    kinds: Sequence[str],
    s2: float,
    s2_min: float,
    inflation: float = 1.0,
) -> Prediction:
    """Predicted intervals from one joint's sensitivity blocks (each (N_b, K + 1), the
    recording's and the candidate's, stacked): Gauss-Newton at noise variance
    max(``s2``, ``s2_min``) [rad^2] times the residuals' lag-1 ``inflation``, plus the
    change that moves the replay by the replay's floor sqrt(``s2_min``) (``assess_joint``'s
    rule)."""
    jac = np.concatenate([np.asarray(b, dtype=float) for b in jacs], axis=0)
    hw, corr = block_intervals(jac, np.zeros(jac.shape[0]), inflation, None, max(s2, s2_min))
    sens = np.sqrt(np.mean(jac**2, axis=0))
    hw = hw + np.sqrt(s2_min) / np.maximum(sens, 1e-300)
    return Prediction(columns=(*kinds, DELAY), halfwidth=hw, corr=corr)
