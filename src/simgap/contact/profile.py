"""A 1-D profile of one contact coefficient over every logged push, with its 95 % interval.

Scoring: each simulated push is compared with the logged one on the object's position and,
where the log has it, its orientation, each divided by the tracker's stated noise:
``chi2 = sum |dp|^2 / sigma_m^2 + sum |dtheta|^2 / sigma_rad^2`` (dtheta the rotation vector
between the logged and simulated orientation). Under Gaussian tracker noise this is -2 log
likelihood up to a constant, so the profile's 95 % interval is the likelihood-ratio set
``chi2(v) - chi2_min <= 3.84`` (chi-square, one degree of freedom). Where the best fit still
misses by more than the noise (``chi2_min / n > 1``), the noise is scaled up by that factor
first, as a least-squares interval would, so a misfit model does not earn a narrow interval.

A set that reaches an end of the swept range is not an interval: the coefficient is then
"not identifiable from these pushes", and the range that fits is reported instead of a point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.fit.pose_loss import quat_half_angle_vectors

CHI2_95_1DOF = 3.841458820694124
"""95 % quantile of chi-square with one degree of freedom."""


@dataclass(frozen=True)
class Noise:
    """The tracker's stated noise: position [m] and orientation [rad] per axis, 1 sigma.
    ``rad`` None: no orientation noise was stated, so orientation is not scored."""

    m: float
    rad: float | None = None


@dataclass(frozen=True)
class PushScore:
    """Scores of B candidates on L pushes.

    Attributes:
        chi2: noise-normalised squared error, shape (B, L).
        n: residual count per push, shape (L,).
        sse_m: summed squared position error [m^2], shape (B, L).
        n_pos: position samples per push (each 3 coordinates), shape (L,).
        sse_rad: summed squared rotation error [rad^2], shape (B, L).
        n_rot: orientation samples per push, shape (L,) (0 where not logged).
    """

    chi2: np.ndarray
    n: np.ndarray
    sse_m: np.ndarray
    n_pos: np.ndarray
    sse_rad: np.ndarray
    n_rot: np.ndarray

    def rms_m(self, pushes: Sequence[int] | None = None) -> np.ndarray:
        """RMS position error [m] per candidate, shape (B,)."""
        k = list(range(self.chi2.shape[1])) if pushes is None else list(pushes)
        out: np.ndarray = np.sqrt(self.sse_m[:, k].sum(1) / max(1, self.n_pos[k].sum()))
        return out

    def rms_rad(self, pushes: Sequence[int] | None = None) -> np.ndarray:
        """RMS rotation error [rad] per candidate (0 when no orientation is logged)."""
        k = list(range(self.chi2.shape[1])) if pushes is None else list(pushes)
        out: np.ndarray = np.sqrt(self.sse_rad[:, k].sum(1) / max(1, self.n_rot[k].sum()))
        return out


def score(
    sim: Sequence[tuple[np.ndarray, np.ndarray]],
    logged: Sequence[tuple[np.ndarray, np.ndarray | None]],
    noise: Noise,
) -> PushScore:
    """Score simulated pushes (per push: positions (B, T, 3), quaternions (B, T, 4))
    against the logged ones (per push: positions (T, 3), quaternions (T, 4) or None)."""
    cols: dict[str, list[np.ndarray]] = {"chi2": [], "sse_m": [], "sse_rad": []}
    n, n_pos, n_rot = [], [], []
    for (pos, quat), (lpos, lquat) in zip(sim, logged, strict=True):
        dp = np.nan_to_num(pos - lpos[None], nan=1.0, posinf=1.0, neginf=-1.0)
        sse_m = np.sum(dp**2, axis=(1, 2))
        chi2 = sse_m / noise.m**2
        sse_r = np.zeros_like(sse_m)
        if lquat is not None and noise.rad is not None:
            q = np.nan_to_num(quat, nan=0.0)
            dr = 2.0 * quat_half_angle_vectors(np.broadcast_to(lquat[None], q.shape), q)
            sse_r = np.sum(dr**2, axis=(1, 2))
            chi2 = chi2 + sse_r / noise.rad**2
        cols["chi2"].append(chi2)
        cols["sse_m"].append(sse_m)
        cols["sse_rad"].append(sse_r)
        n_pos.append(lpos.shape[0])
        nr = 0 if lquat is None or noise.rad is None else lquat.shape[0]
        n_rot.append(nr)
        n.append(3 * lpos.shape[0] + 3 * nr)
    return PushScore(
        chi2=np.stack(cols["chi2"], 1),
        n=np.asarray(n),
        sse_m=np.stack(cols["sse_m"], 1),
        n_pos=np.asarray(n_pos),
        sse_rad=np.stack(cols["sse_rad"], 1),
        n_rot=np.asarray(n_rot),
    )


@dataclass(frozen=True)
class Interval:
    """What a profile says about its coefficient.

    Attributes:
        identifiable: True when the 95 % set lies strictly inside the swept range.
        best: the minimising value (None when not identifiable: never a point then).
        lo, hi: the 95 % interval, or the range that fits (None: open towards that end).
        scale: the factor the noise variance was scaled by (>= 1).
        reason: one sentence with the numbers when not identifiable.
    """

    identifiable: bool
    best: float | None
    lo: float | None
    hi: float | None
    scale: float
    reason: str = ""


MAX_SPAN = 5.0
"""A 95 % set wider than this factor (hi / lo) is a range that fits, not an estimate."""
SMOOTH_WINDOW = 5
"""Points in the running median that reads a rough profile."""


def smooth(c: np.ndarray, window: int = SMOOTH_WINDOW) -> tuple[np.ndarray, float]:
    """A running median of the profile, and the profile's relative roughness around it
    (1 sigma of log chi2, from the median absolute deviation). Contact replays are rough in
    their coefficients (stick-slip, contact sets that switch), so the profile is read
    through the median, and its roughness counts as noise of the replay itself."""
    h = window // 2
    lc = np.log(np.maximum(c, 1e-12))
    padded = np.concatenate([np.repeat(lc[:1], h), lc, np.repeat(lc[-1:], h)])
    sm = np.array([np.median(padded[i : i + window]) for i in range(len(c))])
    rough = 1.4826 * float(np.median(np.abs(lc - sm)))
    return np.exp(sm), rough


def _second_diff_sigma(c: np.ndarray) -> float:
    """1 sigma of log chi2 around its neighbours' mean (median absolute second difference;
    a smooth curve's own curvature counts too, which errs wide)."""
    lc = np.log(np.maximum(c, 1e-12))
    if lc.size < 3:
        return 0.0
    d = lc[1:-1] - 0.5 * (lc[:-2] + lc[2:])
    return 1.4826 * float(np.median(np.abs(d))) / np.sqrt(1.5)


def _roughness(x: np.ndarray, c: np.ndarray, bins: int = 16) -> float:
    """Relative roughness of a profile: the larger of the estimate over every point (a
    refined cluster, where the curve itself is nearly straight) and over points spread
    evenly in log(value), one per bin (so a locally smooth cluster does not hide it)."""
    lx = np.log(x)
    edges = np.linspace(lx[0], lx[-1] + 1e-12, bins + 1)
    pick = sorted({int(np.flatnonzero(lx >= e)[0]) for e in edges[:-1] if np.any(lx >= e)})
    return max(_second_diff_sigma(c), _second_diff_sigma(c[pick]))


def interval(values: np.ndarray, chi2: np.ndarray, n_total: int, unit: str = "") -> Interval:
    """The likelihood-ratio set of a profile (values ascending and > 0; see module doc).

    The set holds every swept value whose smoothed chi2 (``smooth``) lies within
    ``3.84 * scale + 2 * roughness * minimum`` of its minimum; its ends are the first swept values
    outside (conservative). A set wider than ``MAX_SPAN``, or one that reaches an end of
    the swept range, is a range that fits, never a point."""
    x = np.asarray(values, dtype=float)
    c = np.asarray(chi2, dtype=float)
    sm, _ = smooth(c) if len(c) >= SMOOTH_WINDOW else (c, 0.0)
    rough = _roughness(x, c)
    i0 = int(np.argmin(sm))
    c_min = float(sm[i0])
    scale = max(1.0, c_min / max(1, n_total - 1))
    thresh = CHI2_95_1DOF * scale + 2.0 * rough * c_min
    ok = np.flatnonzero(sm - c_min <= thresh)
    a, b = int(ok.min()), int(ok.max())
    best = float(x[i0])
    if 0 < i0 < len(x) - 1:  # a parabola through the smoothed minimum and its neighbours
        lx = np.log(x[i0 - 1 : i0 + 2])
        coef = np.polyfit(lx, sm[i0 - 1 : i0 + 2], 2)
        if coef[0] > 0:
            best = float(np.exp(np.clip(-coef[1] / (2 * coef[0]), lx[0], lx[2])))
    # a profile that comes back within the threshold next to an end stays open there
    step = (np.log(x[-1]) - np.log(x[0])) / 16
    lo = None if a <= 1 or np.log(x[a] / x[0]) <= step else float(x[a - 1])
    hi = None if b >= len(x) - 2 or np.log(x[-1] / x[b]) <= step else float(x[b + 1])
    if lo is not None and hi is not None and hi / lo <= MAX_SPAN:
        return Interval(True, best, lo, hi, scale)
    if lo is not None and hi is not None:  # a flat-bottomed profile: a range, no point
        return Interval(
            False,
            None,
            lo,
            hi,
            scale,
            f"not identifiable from these pushes: every value in {lo:.3g} .. "
            f"{hi:.3g}{unit} fits (a span of {hi / lo:.3g}x, more than "
            f"{MAX_SPAN:g}x)",
        )
    rng = (
        f"{'<=' if lo is None else ''}{x[0] if lo is None else lo:.3g} .. "
        f"{x[-1] if hi is None else hi:.3g}{'+' if hi is None else ''}{unit}"
    )
    spread = float((sm - c_min).max()) / scale
    why = (
        f"not identifiable from these pushes: every value in {rng} fits within the "
        f"tracker noise (the profile rises by at most {spread:.3g} against "
        f"{CHI2_95_1DOF:.2f} needed for 95 %)"
        if spread <= CHI2_95_1DOF
        else f"not identifiable from these pushes: the profile stays within its 95 % "
        f"threshold up to the {'lower' if lo is None else 'upper'} end of the swept "
        f"range ({rng})"
    )
    return Interval(False, None, lo, hi, scale, why)


def refine(
    evaluate: Callable[[np.ndarray], np.ndarray],
    lo: float,
    hi: float,
    n_coarse: int = 17,
    n_fine: int = 11,
    rounds: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """Evaluate a log-spaced grid on [lo, hi], then zoom around the minimum ``rounds``
    times; ``evaluate(values)`` returns the per-push chi2, shape (K, L). Returns all values
    (ascending, unique) and their chi2 rows."""
    xs = list(np.geomspace(lo, hi, n_coarse))
    rows = list(evaluate(np.asarray(xs)))
    for _ in range(rounds):
        order = np.argsort(xs)
        xa = np.asarray(xs)[order]
        tot = np.asarray(rows)[order].sum(1)
        i = int(np.argmin(tot))
        a, b = xa[max(0, i - 2)], xa[min(len(xa) - 1, i + 2)]
        if b <= a:
            break
        new = [
            v
            for v in np.geomspace(a, b, n_fine + 2)[1:-1]
            if np.min(np.abs(np.log(xa) - np.log(v))) > 1e-9
        ]
        if not new:
            break
        xs.extend(new)
        rows.extend(evaluate(np.asarray(new)))
    order = np.argsort(xs)
    return np.asarray(xs)[order], np.asarray(rows)[order]


def summary(iv: Interval, unit: str) -> dict[str, Any]:
    """JSON-able form of an interval."""
    return {
        "identifiable": iv.identifiable,
        "best": iv.best,
        "interval": [iv.lo, iv.hi],
        "noise_scale": iv.scale,
        "reason": iv.reason,
        "unit": unit,
    }
