"""Per-joint verdicts of a joint identification: the delay profile, the intervals, and the
reason in numbers for every parameter the data do not pin down (see ``joint_id``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simgap.fit.params import UNITS
from simgap.fit.profile import (
    GridFit,
    LinearFit,
    block_intervals,
    delay_profile,
    jackknife_delay,
    jackknife_halfwidths,
    lag1_inflation,
    linear_fit,
)

RIDGE_MIN_WIDTH_S = 0.01
"""A delay interval narrower than this is a delay, not a ridge [s]."""


def _interp_z(fit: GridFit, j: int, K: int, d: float) -> np.ndarray:
    """Joint j's fitted z at delay d, linear between the bracketing grid points."""
    zj = fit.z[:, j * K : (j + 1) * K]
    return np.array([np.interp(d, fit.delays, zj[:, k]) for k in range(K)])


def _effective(values: np.ndarray, kinds: tuple[str, ...], delay: float) -> float:
    """d + (kv + damping) / kp: the low-frequency lag of a PD-held joint [s]."""

    def get(kind: str) -> float:
        return float(values[kinds.index(kind)]) if kind in kinds else 0.0

    kp = get("kp")
    if kp <= 0:
        return delay
    return delay + (get("kv") + get("damping")) / kp


def assess_joint(
    problem: Any,
    fit: GridFit,
    j: int,
    floor_rad: float,
    encoder_rad: float,
    delay_interval: tuple[float, float] | None = None,
    cache: dict[int, LinearFit] | None = None,
) -> dict[str, Any]:
    """Profile, values, 95 % intervals, reasons, effective delay and ridge of joint ``j``.

    The delay interval is the wider of the profile-likelihood one and the block
    jackknife's (``problem.blocks``), or ``delay_interval`` where the caller widened it
    (the arm's shared delay; ``profile_stat``). The reported ``profile`` also holds every
    delay whose replay moves by less than the model floor RMS (an SSR rise below
    ``N * floor^2``). Each parameter's half-width is the widest of Gauss-Newton
    (residual variance at least the model floor, lag-1 inflated), the block jackknife of
    the refit, plus the step the LM left and the change that moves the replay by the
    model floor (what the floor cannot tell apart); widened over the fits at every delay
    inside the delay interval.

    ``cache`` (grid index -> ``LinearFit``) shares the linearised fit of each grid point
    between the joints and the passes of one identification: it depends on the grid fit
    and the blocks only, not on the joint."""
    from simgap.actuator.joint_id import MAX_SPAN

    K, kinds, name = problem.K, problem.kinds, problem.joints[j]
    ref = problem.ref[j]
    ssr = fit.ssr[:, j]
    N = fit.resid.shape[-1]
    cols = np.arange(j * K, (j + 1) * K)
    rows = slice(j * N, (j + 1) * N)
    g = int(np.argmin(ssr))
    infl = lag1_inflation(fit.resid[g, j])
    # the replay's own floor bounds what the data can tell apart: below it the variance
    # of the residual is not the noise (a start known to half a count moves the replay)
    s2_min = float(problem.floor_replay[j]) ** 2
    prof = delay_profile(fit.delays, ssr, N - K - 1, infl, s2_min)
    # a delay whose replay moves by less than the floor RMS is not told apart either; the
    # reported interval holds them (the parameters carry the floor in their own half-widths,
    # so they are widened over the statistical interval only: the floor counts once)
    by_floor = delay_profile(
        fit.delays, ssr, N - K - 1, infl, s2_min, min_rise=N * s2_min
    ).interval_s
    blocks = getattr(problem, "blocks", None) or [np.arange(N)]
    if delay_interval is None:
        per_block = np.array([np.sum(fit.resid[:, j, idx] ** 2, axis=-1) for idx in blocks])
        hw_d = jackknife_delay(fit.delays, per_block, N - K - 1)
        d_lo = max(float(fit.delays[0]), prof.best_s - hw_d)
        d_hi = min(float(fit.delays[-1]), prof.best_s + hw_d)
        delay_interval = (min(prof.interval_s[0], d_lo), max(prof.interval_s[1], d_hi))
    prof = replace(prof, interval_s=(float(delay_interval[0]), float(delay_interval[1])))
    z = _interp_z(fit, j, K, prof.best_s)
    values = ref * np.exp(z)
    lo_d, hi_d = prof.interval_s
    inside = [
        i for i in range(fit.delays.size) if lo_d - 1e-12 <= fit.delays[i] <= hi_d + 1e-12
    ] or [g]
    zlo, zhi = z.copy(), z.copy()

    lins = cache if cache is not None else {}

    def hw_at(i: int) -> tuple[np.ndarray, np.ndarray]:
        if i not in lins:
            lins[i] = linear_fit(np.ascontiguousarray(fit.jac[i]), fit.resid[i], blocks)
        lin = lins[i]
        hw, corr = block_intervals(
            fit.jac[i], fit.resid[i].reshape(-1), infl, cols, s2_min, lin=lin
        )
        jk, left = jackknife_halfwidths(fit.jac[i], fit.resid[i], blocks, cols, lin=lin)
        # the model floor as a bias: a change of z_k whose replay moves by less than the
        # floor (RMS) cannot be told from the replay's own chaos, whatever the noise says
        sens = np.sqrt(np.mean(fit.jac[i][rows][:, cols] ** 2, axis=0))
        indist = np.sqrt(s2_min) / np.maximum(sens, 1e-300)
        return np.maximum(hw, jk) + left + indist, corr

    hw_best, corr = hw_at(g)
    for i in inside:
        hw, _ = hw_at(i)
        zi = fit.z[i, cols]
        zlo = np.minimum(zlo, zi - hw)
        zhi = np.maximum(zhi, zi + hw)
    zlo = np.minimum(zlo, z - hw_best)
    zhi = np.maximum(zhi, z + hw_best)
    lo_b = problem.lo[cols]
    hi_b = problem.hi[cols]
    iv = np.stack(
        [ref * np.exp(np.maximum(zlo, lo_b)), ref * np.exp(np.minimum(zhi, hi_b))], axis=1
    )
    reasons: dict[str, str] = {}
    jac = fit.jac[g][rows][:, cols]
    for k, kind in enumerate(kinds):
        span = float(np.exp(min(zhi[k], hi_b[k]) - max(zlo[k], lo_b[k])))
        at_bound = z[k] <= lo_b[k] + 1e-3 or z[k] >= hi_b[k] - 1e-3
        sens = float(np.sqrt(np.mean((jac[:, k] * np.log(2.0)) ** 2)))
        model_floor = float(np.sqrt(s2_min))
        weak = sens < model_floor
        if span <= MAX_SPAN and not at_bound and np.isfinite(span) and not weak:
            continue
        v, unit = float(values[k]), UNITS[kind]
        parts = [
            f"doubling {kind} ({v:.3g} -> {2 * v:.3g} {unit}) moves {name} by "
            f"{sens * 1e3:.3g} mrad RMS, {sens / encoder_rad:.2g} of an encoder count "
            f"({encoder_rad * 1e3:.3g} mrad)"
        ]
        others = [(abs(corr[k, i]), i) for i in range(K) if i != k and np.isfinite(corr[k, i])]
        if others:
            c, i = max(others)
            if c > 0.9:
                parts.append(
                    f"it trades off with {kinds[i]} (correlation "
                    f"{corr[k, i]:+.3f}): only their combination is identified"
                )
        if weak:
            parts.append(
                f"below the replay floor of {model_floor * 1e3:.3g} mrad RMS (the "
                "replay's change for a start known to half an encoder count: what "
                "the data cannot tell apart)"
            )
        if at_bound:
            b = float(np.exp(lo_b[k] if z[k] <= lo_b[k] + 1e-3 else hi_b[k]))
            parts.append(f"the fit ended at its search bound ({b:.3g} x nominal)")
        lo_v, hi_v = iv[k]
        if not np.isfinite(span):
            parts.append("the interval is unbounded (a null direction)")
        elif span > MAX_SPAN:
            parts.append(
                f"95% interval [{lo_v:.3g}, {hi_v:.3g}] {unit} spans x{span:.3g} (> x{MAX_SPAN:g})"
            )
        reasons[kind] = "; ".join(parts)
    # effective delay along the profile
    eff = np.array(
        [
            _effective(ref * np.exp(fit.z[i, cols]), kinds, float(fit.delays[i]))
            for i in range(fit.delays.size)
        ]
    )
    eff_best = _effective(values, kinds, prof.best_s)
    eff_in = eff[inside]
    e_lo, e_hi = float(min(eff_in.min(), eff_best)), float(max(eff_in.max(), eff_best))
    width = hi_d - lo_d
    ridge = ""
    # the text quotes the interval the figures carry (the statistical one widened by the
    # delays the floor cannot tell apart), not the narrower one the ridge test used
    # and a delay is resolved to the physics step: an onset inside a step is averaged over
    # it (or, on the step clock, moved to its end), which biases a recorder that splits its
    # steps at each arrival by up to half a step (measured: +1 to +4.5 ms on a 5 ms step)
    half_step = 0.5 * float(getattr(getattr(problem, "replayer", None), "physics_dt", 0.0))
    q_lo = max(float(fit.delays[0]), min(lo_d, float(by_floor[0])) - half_step)
    q_hi = min(float(fit.delays[-1]), max(hi_d, float(by_floor[1])) + half_step)
    if width > RIDGE_MIN_WIDTH_S and (e_hi - e_lo) < 0.5 * width:
        ridge = (
            f"delay and the servo's own lag (kv + damping) / kp trade off: over the 95% "
            f"delay interval [{q_lo * 1e3:.1f}, {q_hi * 1e3:.1f}] ms the effective delay "
            f"stays within [{e_lo * 1e3:.1f}, {e_hi * 1e3:.1f}] ms; the effective delay "
            f"{eff_best * 1e3:.1f} ms is identified, the split is not"
        )
    elif "hi" in prof.open_ends and width > RIDGE_MIN_WIDTH_S:
        ridge = (
            f"the delay profile stays flat up to the largest delay searched "
            f"({fit.delays[-1] * 1e3:.0f} ms): no upper bound"
        )
    rms = float(np.sqrt(max(float(ssr[g]), 0.0) / N))
    reported = replace(prof, interval_s=(q_lo, q_hi))
    return {
        "profile": reported,
        "profile_stat": prof,
        "values": values,
        "intervals": iv,
        "reasons": reasons,
        "effective": (eff_best, e_lo, e_hi),
        "ridge": ridge,
        "rms": rms,
        "floor": floor_rad,
    }


def saturation_reasons(
    problem: Any,
    reasons: list[dict[str, str]],
    sat: np.ndarray,
    values: np.ndarray,
    threshold: float = 0.2,
) -> list[dict[str, str]]:
    """The gains inside the actuator's force clamp (``CLAMPED``: kp and kv, since MuJoCo's
    position actuator clips ``kp * (u - q) - kv * qdot`` as a whole) are masked where the
    force sits at its limit: at ``SATURATED`` of the samples or more such a gain is not
    identifiable whatever its interval says (a saturated servo's torque depends on neither,
    and the replay is only piecewise smooth there); above ``threshold`` the saturation is
    added to a reason the gain already has. Joint damping, frictionloss and armature act
    outside the clamp and keep their intervals."""
    from simgap.actuator.joint_id import CLAMPED, SATURATED

    out = [dict(r) for r in reasons]
    for kind in CLAMPED:
        if kind not in problem.kinds:
            continue
        k = problem.kinds.index(kind)
        for j, r in enumerate(out):
            msg = (
                f"{kind} masked: force saturated in {100 * sat[j]:.0f}% of samples (a "
                f"saturated servo's torque does not depend on {kind}; fitted "
                f"{values[j, k]:.4g} {UNITS[kind]})"
            )
            if sat[j] >= SATURATED:
                r[kind] = msg + ("; " + r[kind] if kind in r else "")
            elif kind in r and sat[j] >= threshold:
                r[kind] = msg + "; " + r[kind]
    return out


def floor_reasons(
    problem: Any,
    reasons: list[dict[str, str]],
    best_rms: np.ndarray,
    floor_rad: np.ndarray,
    values: np.ndarray,
    gate: float,
) -> list[dict[str, str]]:
    """Every kind that still states an interval at a joint whose best fit stays at ``gate``
    times its noise floor or more is declared not identifiable, with the numbers.

    Args:
        best_rms: each joint's best-fit RMS residual [rad], shape (J,); floor_rad: its noise
            floor [rad], shape (J,); values: fitted values, shape (J, K).
    """
    out = [dict(r) for r in reasons]
    for j, r in enumerate(out):
        ratio = float(best_rms[j]) / max(float(floor_rad[j]), 1e-300)
        if ratio < gate:
            continue
        for k, kind in enumerate(problem.kinds):
            if kind in r:
                continue
            r[kind] = (
                f"{kind} not stated: the best fit's RMS {best_rms[j] * 1e3:.3g} mrad "
                f"is {ratio:.1f}x the noise floor {floor_rad[j] * 1e3:.3g} mrad (at "
                f"{gate:g}x or more the fit has not reached the model the data "
                f"follow, so its local interval is not a 95 % interval); fitted "
                f"{values[j, k]:.4g} {UNITS[kind]}"
            )
    return out
