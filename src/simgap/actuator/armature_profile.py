"""Is the servo's armature pinned by the logs, or does it trade with a latency?

With the torque on throughout, the closed loop's phase lag comes from its inertia and from
any latency between the logged command and the motor alike: on the 12 real XL330 logs with
the free swing of lift_and_drop held out, the fit put the armature at 3.5 g m^2 with no
delay, and 1.5 g m^2 with an 11 ms delay fits the same training logs within 0.6 mrad (0.4
encoder count); the held-out free swing, which the latency does not touch, says 1.5. With
the free swings in the fit the same probe costs 3.0 mrad (half the armature) and 8.8 mrad
(twice it). The profile here holds the armature at ``PROBE_FACTORS`` times its fitted
value, refits everything else with a transport delay free (BAM's logs are fitted without
one: BAM's model has none), and declares the armature not identifiable where the training
MAE rises by less than ``RIDGE_FLOOR_FRACTION`` of the noise floor.

Where the fit has no delay (BAM's logs), one more refit frees the delay and the armature
together (``latency_probe``): a latency that fits the training logs better by that fraction
of the floor is one the delay-free model spends on its other parameters, and the profile
says so (``latency_reason``). On the 12 real logs it gains 0.2 mrad (7.2 ms): below it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from simgap.actuator.families import ServoFamily
from simgap.actuator.family_fit import FamilyFit, fit_families, per_log_mae
from simgap.actuator.folds import SAME_FIT_FLOOR_FRACTION
from simgap.actuator.servo import ServoBatch
from simgap.fit import cma_es as cma_fit

PROBE_FACTORS = (0.5, 2.0)
"""Factors of the fitted armature at which it is held [-]."""

RIDGE_FLOOR_FRACTION = SAME_FIT_FLOOR_FRACTION
"""A probe whose training MAE rises by less than this fraction of the noise floor leaves the
armature not identifiable [-]."""


def _refit(
    fit: FamilyFit,
    batch: ServoBatch,
    train: np.ndarray,
    servo: ServoFamily,
    seed: int,
    evaluations: int,
) -> tuple[float, float, float]:
    """The family of ``fit`` refitted on ``train`` with a transport delay free, on ``servo``
    (its armature box): (training MAE [rad], delay [s], armature [kg m^2])."""
    probe = fit_families(
        batch,
        train[None],
        servo,
        seed,
        [fit.family],
        cma_fit.CmaSettings(evaluations=evaluations),
        fit_max_velocity=fit.space.fit_max_velocity,
        fit_delay=True,
    )[fit.family]
    p = probe.params(0)
    return (
        float(per_log_mae(probe.pred[0], batch)[train].mean()),
        float(p["delay_s"]),
        float(p["armature"]),
    )


def armature_profile(
    fit: FamilyFit,
    batch: ServoBatch,
    train: np.ndarray,
    servo: ServoFamily,
    seed: int,
    evaluations: int,
    base_mae_rad: float | None = None,
) -> list[dict[str, float]]:
    """Refit the family of ``fit`` (row 0, fitted on ``train``) with the armature held at
    each of ``PROBE_FACTORS`` times its value (clipped to the servo's box; a factor that the
    box leaves within 10 % of the value is skipped) and a transport delay free.

    Args:
        fit: the family's fit; row 0 is the one on ``train``.
        batch: the logs.
        train: which logs row 0 was fitted on, shape (L,), bool.
        servo: the servo family (its armature box).
        seed: seed of the probes' searches.
        evaluations: CMA-ES rollouts per probe.
        base_mae_rad: row 0's training MAE [rad], where the caller has it.

    Returns:
        one dict per probe: ``factor``, ``armature_kg_m2``, ``delay_s`` (refitted),
        ``train_mae_rad`` and ``rise_rad`` (over row 0's own training MAE).
    """
    a = float(fit.params(0)["armature"])
    base = (
        float(per_log_mae(fit.pred[0], batch)[train].mean())
        if base_mae_rad is None
        else base_mae_rad
    )
    lo, hi = servo.armature_box
    out: list[dict[str, float]] = []
    for k, f in enumerate(PROBE_FACTORS):
        held = min(max(a * f, lo), hi)
        if abs(held - a) < 0.1 * a:
            continue
        mae, delay, _ = _refit(
            fit,
            batch,
            train,
            replace(servo, armature_box=(held, held)),
            seed + 101 * (k + 1),
            evaluations,
        )
        out.append(
            {
                "factor": f,
                "armature_kg_m2": held,
                "delay_s": delay,
                "train_mae_rad": mae,
                "rise_rad": mae - base,
            }
        )
    return out


def latency_probe(
    fit: FamilyFit,
    batch: ServoBatch,
    train: np.ndarray,
    servo: ServoFamily,
    seed: int,
    evaluations: int,
    base_mae_rad: float,
) -> dict[str, float] | None:
    """Where ``fit`` has no transport delay (BAM's logs), the same family refitted with one
    free, the armature free too: ``delay_s``, ``armature_kg_m2``, ``train_mae_rad`` and
    ``gain_rad`` (how much lower its training MAE is); None where the fit has a delay."""
    if fit.space.fit_delay:
        return None
    mae, delay, arm = _refit(fit, batch, train, servo, seed + 307, evaluations)
    return {
        "delay_s": delay,
        "armature_kg_m2": arm,
        "train_mae_rad": mae,
        "gain_rad": base_mae_rad - mae,
    }


def latency_reason(probe: dict[str, float] | None, floor_rad: float) -> str:
    """Why the fit without a delay is misspecified, or "" where a delay gains less than
    ``RIDGE_FLOOR_FRACTION`` of the noise floor in training."""
    if probe is None or probe["gain_rad"] < RIDGE_FLOOR_FRACTION * floor_rad:
        return ""
    return (
        f"a {probe['delay_s'] * 1e3:.1f} ms command latency fits the training logs "
        f"{probe['gain_rad'] * 1e3:.2f} mrad better (over {RIDGE_FLOOR_FRACTION:g} x the "
        f"noise floor, {floor_rad * 1e3:.2f} mrad); BAM's model has none, so the fit "
        "without it spends the latency on its other parameters: check the recorder's "
        "timing before trusting them"
    )


def ridge_reason(
    armature: float, probes: list[dict[str, float]], floor_rad: float, torque_off: bool
) -> str:
    """Why the armature is not identifiable, or "" when every probe costs at least
    ``RIDGE_FLOOR_FRACTION`` of the noise floor.

    Args:
        armature: the fitted armature [kg m^2].
        probes: ``armature_profile``'s output.
        floor_rad: the noise floor [rad].
        torque_off: whether the training logs hold samples with the torque off.
    """
    flat = [p for p in probes if p["rise_rad"] < RIDGE_FLOOR_FRACTION * floor_rad]
    if not flat:
        return ""
    p = min(flat, key=lambda q: q["rise_rad"])
    hint = (
        ""
        if torque_off
        else "; no training log has the torque off: record one with a "
        "free swing (BAM's lift_and_drop) to separate the inertia from a latency"
    )
    change = (
        f"rises by {p['rise_rad'] * 1e3:.2f} mrad, under {RIDGE_FLOOR_FRACTION:g} x "
        f"the noise floor ({floor_rad * 1e3:.2f} mrad)"
        if p["rise_rad"] >= 0
        else f"falls by {-p['rise_rad'] * 1e3:.2f} mrad"
    )
    return (
        f"armature {armature * 1e3:.2f} g m^2 is not pinned by these logs: held at "
        f"{p['armature_kg_m2'] * 1e3:.2f} g m^2 with a {p['delay_s'] * 1e3:.1f} ms command "
        f"delay refitted, the training MAE {change}{hint}"
    )


def profile_entry(
    fit: FamilyFit,
    batch: ServoBatch,
    train: np.ndarray,
    servo: ServoFamily,
    seed: int,
    evaluations: int,
    floor_rad: float,
    base_mae_rad: float | None = None,
) -> dict[str, Any]:
    """The JSON of the profile: the probes and the armature's verdict (``reason`` "" when
    pinned); where the fit has no delay, the latency probe and its verdict
    (``latency_reason`` "" when a delay gains nothing)."""
    base = (
        float(per_log_mae(fit.pred[0], batch)[train].mean())
        if base_mae_rad is None
        else base_mae_rad
    )
    probes = armature_profile(fit, batch, train, servo, seed, evaluations, base)
    latency = latency_probe(fit, batch, train, servo, seed, evaluations, base)
    torque_off = bool(((~batch.enable[train]) & (batch.mask[train] > 0)).any())
    a = float(fit.params(0)["armature"])
    return {
        "armature_kg_m2": a,
        "probes": probes,
        "torque_off_in_training": torque_off,
        "reason": ridge_reason(a, probes, floor_rad, torque_off),
        "latency_probe": latency,
        "latency_reason": latency_reason(latency, floor_rad),
    }
