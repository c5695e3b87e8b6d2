"""The ladder's held-out logs (``Folds``, ``make_folds``: which logs each fit trains on and
which it is scored on) and the scores of a rung's predictions on them (``fold_scores``,
``by_group``, ``test_scores``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.actuator.servo import (
    ServoBatch,
)
from simgap.errors import InputError


@dataclass(frozen=True)
class Folds:
    """Training and held-out logs: row 0 is the fit on all training logs, rows 1.. the
    folds. ``train`` (F, L) and ``held`` (F, L) are boolean; ``scheme`` names how the logs
    were held out and ``groups`` the group each fold row holds out (row 0 excepted).
    ``test`` (L,) bool marks the ``--validate`` logs when the selection ran on folds of the
    training logs: no row trains on them or holds them out, and only row 0's prediction
    is scored on them (``test_scores``), an error no choice was made on (None: no such
    logs)."""

    train: np.ndarray
    held: np.ndarray
    scheme: str = "leave-one-trajectory-out"
    groups: tuple[str, ...] = ()
    test: np.ndarray | None = None


SAME_FIT_FLOOR_FRACTION = 0.5
"""Two fits whose training MAE differ by less than this fraction of the noise floor fit the
training logs alike (a probe that costs less leaves a parameter free; searches that differ
less are the same fit) [-]."""

HELD_OUT_SCHEMES = (
    "validate",
    "leave-one-trajectory-type-out",
    "leave-one-gain-out",
    "leave-one-trajectory-out",
)


def make_folds(
    n_train: int,
    n_val: int,
    groups: Sequence[str] | None = None,
    scheme: str = "leave-one-trajectory-type-out",
) -> Folds:
    """When ``groups`` (one label per training log: its trajectory type, or its gain) has at
    least two values, one fold per group holds that group out (``scheme`` names it); else
    leave-one-trajectory-out. ``--validate`` logs (the last ``n_val``) stay out of every
    fold and are the test logs (``Folds.test``), scored on the fit on all training logs
    only, so the selection never sees them. With a single training log there are no folds
    to select on: one fold trains on it and holds the ``--validate`` logs out (scheme
    ``validate``: the selection is then made on those logs)."""
    n = n_train + n_val
    if n_val > 0:
        if n_train >= 2:
            inner = make_folds(n_train, 0, groups, scheme)
            pad = np.zeros((inner.train.shape[0], n_val), dtype=bool)
            return Folds(
                train=np.hstack([inner.train, pad]),
                held=np.hstack([inner.held, pad]),
                scheme=inner.scheme,
                groups=inner.groups,
                test=np.r_[np.zeros(n_train, dtype=bool), np.ones(n_val, dtype=bool)],
            )
        tr = np.zeros((1, n), dtype=bool)
        tr[0, :n_train] = True
        return Folds(train=tr, held=~tr, scheme="validate")
    if n_train < 2:
        raise InputError(
            field="logs",
            expected="at least two trajectories for leave-one-trajectory-out",
            got=f"{n_train}",
            fix="record another trajectory, or pass held-out logs with --validate",
        )
    full = np.ones((1, n), dtype=bool)
    if groups is not None and len(set(groups)) >= 2:
        labels = sorted(set(groups))
        g = np.asarray(list(groups))
        held = np.array([g == lab for lab in labels])
        return Folds(
            train=np.vstack([full, ~held]),
            held=np.vstack([np.zeros((1, n), dtype=bool), held]),
            scheme=scheme,
            groups=tuple(str(x) for x in labels),
        )
    loto = ~np.eye(n, dtype=bool)
    return Folds(
        train=np.vstack([full, loto]),
        held=np.vstack([np.zeros((1, n), dtype=bool), ~loto]),
        scheme="leave-one-trajectory-out",
    )


def fold_scores(
    pred: np.ndarray, batch: ServoBatch, folds: Folds
) -> tuple[float, float, np.ndarray]:
    """(mean training MAE over folds, held-out MAE averaged over logs, held-out per log).

    ``pred`` has shape (F, L, T): fold f's prediction of every log.
    """
    err = np.abs(pred - batch.q[None]) * batch.mask[None]
    per_log = err.sum(axis=2) / batch.mask.sum(axis=1)[None]  # (F, L)
    folds_rows = slice(1, None) if folds.train.shape[0] > 1 else slice(0, 1)
    tr = folds.train[folds_rows]
    w = tr[:, :, None] * batch.mask[None]
    train = float(np.mean((err[folds_rows] * w).sum(axis=(1, 2)) / w.sum(axis=(1, 2))))
    held = folds.held[folds_rows]
    val_per_log = np.array(
        [
            per_log[folds_rows][held[:, i], i].mean()
            for i in range(held.shape[1])
            if held[:, i].any()
        ]
    )
    return train, float(val_per_log.mean()), val_per_log


def test_scores(pred: np.ndarray, batch: ServoBatch, folds: Folds) -> dict[str, Any]:
    """The fit on all training logs (``pred[0]``, shape (L, T)) scored on the test logs:
    ``test_mae_rad`` (mean over them) and ``test_per_log_rad``; {} without test logs."""
    from simgap.actuator.family_fit import per_log_mae

    if folds.test is None or not folds.test.any():
        return {}
    per = per_log_mae(pred[0], batch)[folds.test]
    return {"test_mae_rad": float(per.mean()), "test_per_log_rad": [float(x) for x in per]}


def by_group(per_log: np.ndarray, folds: Folds) -> dict[str, float]:
    """Held-out MAE per held-out group [rad] (groups of a grouped scheme; {} otherwise).
    ``per_log`` is the held-out MAE of each held-out log, in log order."""
    if not folds.groups:
        return {}
    held = folds.held[1:]
    ix = np.flatnonzero(held.any(axis=0))
    pos = {int(i): k for k, i in enumerate(ix)}
    return {
        g: float(np.mean([per_log[pos[int(i)]] for i in np.flatnonzero(held[r])]))
        for r, g in enumerate(folds.groups)
    }
