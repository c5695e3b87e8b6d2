"""The friction family's selection and the fit it reports: a richer family is kept only
when it beats the simpler one held out *and* fits the training logs better; the reported
fit on all training logs is the best of its searches."""

from __future__ import annotations

from typing import Any

import numpy as np

from simgap.actuator.families import XL330
from simgap.actuator.family_fit import FamilyFit
from simgap.actuator.friction import friction_family
from simgap.actuator.physical import PhysicalSpace
from simgap.actuator.physical_rung import _best_first, _select, unpinned_groups
from simgap.actuator.rungs import LadderConfig

CFG = LadderConfig(noise_floor_rad=0.0015)


def _row(held: float, train_all: list[float]) -> dict[str, Any]:
    return {"validation_mae_rad": held, "all_logs_train_mae_by_search_rad": train_all}


def test_a_held_out_gain_without_a_training_gain_is_not_a_better_family() -> None:
    # M3 holds M1 at zero load friction: the same training fit, a luckier fold draw
    table = {"m1": _row(0.0192, [0.000724, 0.000724]), "m3": _row(0.0138, [0.000724, 0.0007])}
    assert _select(["m1", "m3"], table, CFG)[0] == "m1"
    # the same held-out gain with a real training gain (0.2 of a count): the richer one
    table["m3"] = _row(0.0138, [0.000724 - 0.0003, 0.0009])
    assert _select(["m1", "m3"], table, CFG)[0] == "m3"
    # a training gain without a held-out gain beyond 10 % and the floor: the simpler one
    table = {"m1": _row(0.054, [0.054]), "m3": _row(0.050, [0.029])}
    chosen, reason = _select(["m1", "m3"], table, CFG)
    assert chosen == "m1" and "training" in reason


def test_the_reported_fit_is_the_best_of_its_searches() -> None:
    sp = PhysicalSpace(friction_family("m1"), XL330, fit_delay=False)
    F, L, T = 5, 2, 3
    fit = FamilyFit(
        family="m1",
        space=sp,
        x=np.arange(F)[:, None] * np.ones((F, 6)),
        train_cost=np.array([0.03, 0.9, 0.8, 0.02, 0.05]),
        pred=np.arange(F)[:, None, None] * np.ones((F, L, T)),
        evaluations=np.arange(F),
    )
    best = _best_first(fit, np.array([0, 3, 4]))  # rows 0, 3, 4 search the same logs
    assert best.train_cost[0] == 0.02 and best.x[0, 0] == 3 and best.pred[0, 0, 0] == 3
    assert best.train_cost[3] == 0.03 and best.x[3, 0] == 0  # swapped, not lost
    assert np.array_equal(best.train_cost[[1, 2, 4]], fit.train_cost[[1, 2, 4]])
    assert _best_first(fit, np.array([0, 4])) is fit  # row 0 already best


GROUPS = ("lift_and_drop", "sin_sin", "up_and_down")


def test_a_group_the_searches_predict_apart_at_equal_training_is_unpinned() -> None:
    # a random M3 bench (benchmarks/actuator_random.py, seed 6262, bench 0): three searches
    # of each fold, training MAE alike, lift_and_drop predicted at 0.014 or 0.079
    train = np.array([[0.0020, 0.0012, 0.0010], [0.0019, 0.0012, 0.0010], [0.0019, 0.0012, 0.0010]])
    held = np.array([[0.0143, 0.0035, 0.0011], [0.0794, 0.0036, 0.0011], [0.0789, 0.0035, 0.0012]])
    out = unpinned_groups(GROUPS, train, held, 0.0015, 0.1)
    assert set(out) == {"lift_and_drop"} and "0.0143 to 0.0794" in out["lift_and_drop"]
    # the search that predicts apart fits its training logs a count worse: not alike
    train[0, 0] = 0.0035
    assert unpinned_groups(GROUPS, train, held, 0.0015, 0.1) == {}
    # searches alike that also predict alike (within the floor): pinned
    held[:, 0] = [0.0790, 0.0794, 0.0789]
    train[0, 0] = 0.0020
    assert unpinned_groups(GROUPS, train, held, 0.0015, 0.1) == {}


def test_families_are_compared_without_a_group_the_others_do_not_pin() -> None:
    def row(by: list[float], train_all: float, unpinned: dict[str, str]) -> dict[str, Any]:
        return {
            "validation_mae_rad": float(np.mean(by)),
            "all_logs_train_mae_by_search_rad": [train_all],
            "held_out_by_group_rad": dict(zip(GROUPS, by, strict=True)),
            "unpinned_held_out": unpinned,
        }

    m1 = row([0.0352, 0.0191, 0.0290], 0.0186, {})
    m3 = row([0.0793, 0.0035, 0.0011], 0.0016, {"lift_and_drop": "a draw"})
    chosen, reason = _select(["m1", "m3"], {"m1": m1, "m3": m3}, CFG)
    assert chosen == "m3"  # 25x better on the two groups that pin it
    m3["unpinned_held_out"] = {}  # taken at its word, lift_and_drop decides
    assert _select(["m1", "m3"], {"m1": m1, "m3": m3}, CFG)[0] == "m1"
    # m3 kept against a richer m4 compared without the unpinned group: the reason says so
    m4 = row([0.0895, 0.0035, 0.0013], 0.0016, {"lift_and_drop": "a draw"})
    m3["unpinned_held_out"] = {"lift_and_drop": "a draw"}
    chosen, reason = _select(["m1", "m3", "m4"], {"m1": m1, "m3": m3, "m4": m4}, CFG)
    assert chosen == "m3" and "with m4 without lift_and_drop" in reason
