"""Rung 3 on a known servo: BAM's friction families M1-M6 as sub-rungs, selected by how
they carry to held-out trajectory types.

Every family is fitted (``family_fit``) on every fold of the main held-out scheme (leave
one trajectory *type* out when the logs name several types) and, where the firmware gain
varies, of leave-one-gain-out too; all of it in one lockstep CMA-ES. The families are
walked from the simplest (``SELECTION_ORDER``), and the first one that no richer family
beats on the held-out type by more than ``improve_fraction`` (and the noise floor) is kept:
the simplest model the held-out types do not reject. Its fit on all training logs is the
rung's parameters, with bootstrap intervals.

The fit on all training logs, the one reported and exported, is searched
``LadderConfig.searches`` times too, and the search with the lowest training cost is kept
(one search of it landed in another basin on a random bench: kt and R off the truth along
their ridge, with bootstrap intervals, warm started there, that missed it).

Each held-out fold is searched ``LadderConfig.searches`` times, independently: where the
training types leave parameters free (a fold without the free swing of lift_and_drop does
not pin the armature), equal training errors come with held-out errors 30 % apart, so a
family is scored by the median over its searches, and the JSON keeps every search's score
and each type's range (``validation_mae_by_search_rad``, ``held_out_by_group_range_rad``).

Where the searches of one fold fit its training groups alike and predict the held-out group
apart (by more than the floor and ``improve_fraction``), that group's score is a draw, not
a property of the family (``unpinned_groups``): two families are then compared over the
groups that pin both, and the JSON names the group (``unpinned_held_out``). On a random M3
bench (seed 6262) the torque-on types left the split between back-EMF and viscous friction
free, M3's lift_and_drop searches predicted it at 0.014-0.079 rad, and M1 was selected over
the true M3 for a 25x worse fit of the two other types.

The selected family's armature is then profiled against a latency (``armature_profile``):
held at half and twice its value with a transport delay refitted. Where the training MAE
hardly moves (torque-on logs only: the inertia and a latency lag the loop alike), the
armature's interval is marked not identifiable with the numbers, and the JSON keeps the
probes (``armature_profile``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from simgap.actuator.armature_profile import profile_entry
from simgap.actuator.families import ServoFamily
from simgap.actuator.family_fit import (
    SELECTION_ORDER,
    FamilyFit,
    bootstrap_intervals,
    bootstrap_json,
    fit_families,
    per_log_mae,
)
from simgap.actuator.folds import SAME_FIT_FLOOR_FRACTION, Folds, by_group, fold_scores, test_scores
from simgap.actuator.in_bam import in_bam
from simgap.actuator.rungs import LadderConfig, RungResult
from simgap.actuator.servo import ServoBatch
from simgap.fit import cma_es as cma_fit
from simgap.fit.estimate import ParamEstimate


@dataclass(frozen=True)
class PhysicalRung:
    """The servo rung on a known servo.

    Attributes:
        result: the rung (the selected family's scores and parameters).
        family: the selected family.
        fit: the selected family's FamilyFit (row 0: all training logs).
        table: every family's scores: name -> dict (train, held out, per group, gain-out).
        reason: why that family was kept.
        legacy_params: the M1 projection in ``servo.PARAM_NAMES`` order (km = kt / R,
            dm = kt^2 / R, armature, friction_base, friction_viscous, lag 0), for the
            exports that read the six-parameter servo.
    """

    result: RungResult
    family: str
    fit: FamilyFit
    table: dict[str, dict[str, Any]]
    reason: str
    legacy_params: np.ndarray


def _family_scores(
    fit: FamilyFit,
    batch: ServoBatch,
    folds: Folds,
    rows: np.ndarray,
) -> tuple[float, float, np.ndarray]:
    """Scores of the fold rows ``rows`` (row 0 first) of a fit under ``folds``."""
    return fold_scores(fit.pred[rows], batch, folds)


def _best_first(fit: FamilyFit, rows: np.ndarray) -> FamilyFit:
    """The fit with the lowest training cost among ``rows`` (searches of the same training
    logs) moved to row 0, the one the rung reports, and row 0 moved to its place."""
    best = int(rows[int(np.argmin(fit.train_cost[rows]))])
    if best == 0:
        return fit
    order = np.arange(fit.x.shape[0])
    order[[0, best]] = order[[best, 0]]
    return replace(
        fit,
        x=fit.x[order],
        train_cost=fit.train_cost[order],
        pred=fit.pred[order],
        evaluations=fit.evaluations[order],
    )


def rung_physical(
    batch: ServoBatch,
    folds: Folds,
    gain_folds: Folds | None,
    servo: ServoFamily,
    config: LadderConfig,
    *,
    fit_delay: bool = True,
) -> PhysicalRung:
    """Fit and select among M1-M6 (see the module docstring).

    Args:
        batch: the logs (training then held out).
        folds: the main held-out scheme (type-out, validate, or log-out).
        gain_folds: leave-one-gain-out folds (None when the gain does not vary).
        servo: the servo family.
        config: noise floor, improvement fraction, CMA-ES budget, seed.
        fit_delay: fit a transport delay (False: the logs stamp each command when it is
            sent, as BAM's recorder does).
    """
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    n_main = folds.train.shape[0]
    S = max(1, int(config.searches)) if n_main > 1 else 1
    blocks = [folds.train] + ([] if gain_folds is None else [gain_folds.train[1:]])
    n_gain = 0 if gain_folds is None else gain_folds.train.shape[0] - 1
    blocks += [folds.train[1:]] * (S - 1)  # more searches of each held-out fold
    S0 = max(1, int(config.searches))  # and of the fit on all training logs
    blocks += [folds.train[:1]] * (S0 - 1)
    train = np.vstack(blocks)
    settings = cma_fit.CmaSettings(evaluations=config.cma_evaluations)
    fits = fit_families(
        batch,
        train,
        servo,
        config.seed,
        config.families,
        settings,
        fit_max_velocity=servo.max_velocity_box is not None,
        fit_delay=fit_delay,
    )
    extra0 = n_main + n_gain
    first0 = extra0 + (S - 1) * (n_main - 1)
    all_rows = np.r_[0, first0 + np.arange(S0 - 1)]
    all_costs = {name: [float(c) for c in fit.train_cost[all_rows]] for name, fit in fits.items()}
    fits = {name: _best_first(fit, all_rows) for name, fit in fits.items()}
    search_rows = [np.arange(n_main)] + [
        np.r_[0, extra0 + (s - 1) * (n_main - 1) + np.arange(n_main - 1)] for s in range(1, S)
    ]
    table: dict[str, dict[str, Any]] = {}
    results: dict[str, RungResult] = {}
    for name, fit in fits.items():
        scored = [_family_scores(fit, batch, folds, rows) for rows in search_rows]
        tr = float(np.median([x[0] for x in scored]))
        vas = [x[1] for x in scored]
        va = float(np.median(vas))
        per = np.median(np.stack([x[2] for x in scored]), axis=0)
        groups = [by_group(x[2], folds) for x in scored]
        if folds.groups and S > 1:
            unpinned = unpinned_groups(
                folds.groups,
                np.array([fit.train_cost[rows[1:]] for rows in search_rows]),
                np.array([[d[g] for g in folds.groups] for d in groups]),
                config.noise_floor_rad,
                config.improve_fraction,
            )
        else:
            unpinned = {}
        row: dict[str, Any] = {
            "train_mae_rad": tr,
            "validation_mae_rad": va,
            "held_out_by_group_rad": {
                g: float(np.median([d[g] for d in groups])) for g in groups[0]
            },
            "searches": S,
            "all_logs_train_mae_by_search_rad": all_costs[name],
            "validation_mae_by_search_rad": vas,
            "held_out_by_group_range_rad": {
                g: [min(d[g] for d in groups), max(d[g] for d in groups)] for g in groups[0]
            },
            "unpinned_held_out": unpinned,
            "evaluations": int(fit.evaluations.sum()),
            "fit_time_s": fit.fit_time_s,
            "params": fit.params(0),
            **test_scores(fit.pred, batch, folds),
        }
        if gain_folds is not None:
            g_rows = np.r_[0, np.arange(n_main, n_main + n_gain)]
            _, g_va, g_per = _family_scores(fit, batch, gain_folds, g_rows)
            row["gain_out_mae_rad"] = g_va
            row["gain_out_by_group_rad"] = by_group(g_per, gain_folds)
        table[name] = row
        results[name] = RungResult(
            f"servo_{name}", tr, va, fit.params(0), fit.fit_time_s, tuple(per.tolist())
        )
    order = [f for f in SELECTION_ORDER if f in fits]
    chosen, reason = _select(order, table, config)
    fit = fits[chosen]
    estimate = (
        bootstrap_intervals(
            fit,
            batch,
            folds.train[0],
            config.seed,
            replicates=config.bootstrap_replicates,
            noise_floor_rad=config.noise_floor_rad,
        )
        if config.bootstrap_replicates > 1
        else None
    )
    train0 = folds.train[0]
    own = float(per_log_mae(fit.pred[0], batch)[train0].mean())
    profile = profile_entry(
        fit, batch, train0, servo, config.seed, config.cma_evaluations, config.noise_floor_rad, own
    )
    if estimate is not None and profile["reason"] and "armature" in estimate.names:
        # the armature profile's reason turns the bootstrap interval down (kept as evidence)
        a = estimate["armature"]
        arm = ParamEstimate.of(a.name, a.unit, a.value, a.interval or a.rejected, profile["reason"])
        estimate = replace(estimate, params=tuple(arm if p is a else p for p in estimate.params))
    intervals = bootstrap_json(estimate) if estimate is not None else {}
    fit = replace(fit, estimate=estimate)
    sel = results[chosen]
    p = fit.params(0)
    params: dict[str, Any] = {
        "family": chosen,
        "servo_family": servo.name,
        **p,
        "intervals": intervals,
    }
    details: dict[str, Any] = {
        "held_out_by_group_rad": table[chosen]["held_out_by_group_rad"],
        "in_bam": in_bam(fit.space, fit.x[0], batch, train0, own),
        "families": table,
        "family_reason": reason,
        "armature_profile": profile,
        "cpu_time_s": time.process_time() - cpu0,
        "held_out": folds.scheme,
    }
    for key in ("gain_out_mae_rad", "test_mae_rad", "test_per_log_rad"):
        if key in table[chosen]:
            details[key] = table[chosen][key]
    result = RungResult(
        "servo",
        sel.train_mae_rad,
        sel.validation_mae_rad,
        params,
        time.perf_counter() - t0,
        sel.validation_per_log_rad,
        details,
        estimate,
    )
    legacy = np.array(
        [
            p["kt"] / p["R"],
            p["kt"] ** 2 / p["R"],
            p["armature"],
            p["friction_base"],
            p["friction_viscous"],
            0.0,
        ]
    )
    return PhysicalRung(
        result=result, family=chosen, fit=fit, table=table, reason=reason, legacy_params=legacy
    )


def _select(
    order: list[str],
    table: dict[str, dict[str, Any]],
    config: LadderConfig,
) -> tuple[str, str]:
    """The simplest family that no richer family beats on held-out data.

    A richer family beats a simpler one when its held-out MAE is lower by ``frac`` and by
    the noise floor, and its fit on all training logs is lower by a tenth of the floor:
    where the extra terms explain nothing in training (a family containing the simpler one
    at zero), a held-out gain is a draw of the searches of a fold the training types do not
    pin (synthetic M1 logs: M3's lift_and_drop searches landed anywhere in 0.002-0.043 rad
    at M1's training MAE to 1e-8)."""
    frac, floor = config.improve_fraction, config.noise_floor_rad

    def train_all(g: str) -> float:
        return float(min(table[g]["all_logs_train_mae_by_search_rad"]))

    def held(f: str, g: str) -> tuple[float, float, list[str]]:
        """Held-out MAE of f and g over the groups that pin both (and those left out)."""
        skip = sorted(
            set(table[f].get("unpinned_held_out", {})) | set(table[g].get("unpinned_held_out", {}))
        )
        if not skip:
            return table[f]["validation_mae_rad"], table[g]["validation_mae_rad"], []
        by_f, by_g = table[f]["held_out_by_group_rad"], table[g]["held_out_by_group_rad"]
        keep = [k for k in by_f if k not in skip]
        if not keep:
            return table[f]["validation_mae_rad"], table[g]["validation_mae_rad"], []
        return (
            float(np.mean([by_f[k] for k in keep])),
            float(np.mean([by_g[k] for k in keep])),
            skip,
        )

    def beats(g: str, f: str) -> bool:
        va, vg, _ = held(f, g)
        return (
            vg < va * (1 - frac) and va - vg > floor and train_all(g) < train_all(f) - 0.1 * floor
        )

    for i, f in enumerate(order):
        va = table[f]["validation_mae_rad"]
        if not any(beats(g, f) for g in order[i + 1 :]):
            rest = ", ".join(f"{g} {table[g]['validation_mae_rad']:.4f}" for g in order[i + 1 :])
            left = [
                f"with {g} without {', '.join(held(f, g)[2])}"
                for g in order[i + 1 :]
                if held(f, g)[2]
            ]
            note = (
                f"; compared {'; '.join(left)} (held-out groups the other groups do not "
                "pin: unpinned_held_out)"
                if left
                else ""
            )
            return f, (
                f"{f} (held-out {va:.4f} rad) is the simplest family no richer one "
                f"beats by more than {frac:.0%} held out while fitting the training "
                "logs better" + (f" ({rest})" if rest else "") + note
            )
    return order[-1], "richest family"


def unpinned_groups(
    groups: tuple[str, ...], train: np.ndarray, held: np.ndarray, floor_rad: float, frac: float
) -> dict[str, str]:
    """The held-out groups whose prediction is a draw of the searches: searches that fit
    the other groups alike (training MAE within ``SAME_FIT_FLOOR_FRACTION`` of the floor of the
    best) predict the group differently by more than the floor and ``frac`` of their median.
    On such a group the other groups do not pin what it needs (torque-on types leave the
    split between back-EMF and viscous friction, which only a free swing separates), so it
    says nothing about the family, and ``_select`` compares families without it.

    Args:
        groups: the held-out group of each fold.
        train: each search's training MAE per fold [rad], shape (S, G).
        held: each search's held-out MAE per group [rad], shape (S, G).
        floor_rad: the noise floor [rad].
        frac: the improvement fraction of the selection [-].

    Returns:
        group -> why it is not pinned (only such groups).
    """
    out: dict[str, str] = {}
    for i, g in enumerate(groups):
        t, h = train[:, i], held[:, i]
        same = t <= t.min() + SAME_FIT_FLOOR_FRACTION * floor_rad
        if same.sum() < 2:
            continue
        lo, hi = float(h[same].min()), float(h[same].max())
        if hi - lo > max(floor_rad, frac * float(np.median(h[same]))):
            out[g] = (
                f"{int(same.sum())} searches fit the other groups alike (training MAE "
                f"{t[same].min() * 1e3:.2f}-{t[same].max() * 1e3:.2f} mrad) and predict "
                f"{g} anywhere from {lo:.4f} to {hi:.4f} rad"
            )
    return out
