"""Initial states against the training area: inside or outside, distance to the nearest edge,
and success split by inside and outside (Fisher's exact test)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy.stats import fisher_exact

from simgap.episodes.envelope import EnvelopeCheck


def edge_distance(
    xy: np.ndarray, x_range: tuple[float, float], y_range: tuple[float, float]
) -> np.ndarray:
    """Signed distance [m] of each (x, y) to the nearest edge of the rectangle: positive
    inside, negative outside (the Euclidean distance to the rectangle). Shape (N,)."""
    p = np.asarray(xy, dtype=float).reshape(-1, 2)
    (x0, x1), (y0, y1) = x_range, y_range
    inside_d = np.minimum.reduce([p[:, 0] - x0, x1 - p[:, 0], p[:, 1] - y0, y1 - p[:, 1]])
    dx = np.maximum.reduce([x0 - p[:, 0], np.zeros(len(p)), p[:, 0] - x1])
    dy = np.maximum.reduce([y0 - p[:, 1], np.zeros(len(p)), p[:, 1] - y1])
    out = np.hypot(dx, dy)
    return np.where(inside_d >= 0, inside_d, -out)


def split_success(inside: np.ndarray, trials: Sequence[tuple[int, bool]]) -> dict[str, Any]:
    """Success counts of trials (initial-state index, success) split by inside/outside."""
    si = ni = so = no = 0
    for idx, ok in trials:
        if not 0 <= idx < len(inside):
            continue
        if inside[idx]:
            ni, si = ni + 1, si + int(ok)
        else:
            no, so = no + 1, so + int(ok)
    out: dict[str, Any] = {
        "inside_successes": si,
        "inside_trials": ni,
        "outside_successes": so,
        "outside_trials": no,
        "fisher_p": None,
    }
    if ni and no:
        out["fisher_p"] = float(fisher_exact([[si, ni - si], [so, no - so]]).pvalue)
    return out


def placements_check(
    evaluations: Mapping[str, tuple[np.ndarray, Sequence[tuple[int, bool]]]],
    x_range: tuple[float, float] | None,
    y_range: tuple[float, float] | None,
) -> EnvelopeCheck:
    """Where each evaluation's object placements fall against the training area.

    Args:
        evaluations: name (``real``, ``sim``) -> (placements (x, y) [m], shape (N, 2);
            trials as (initial-state index, success)).
        x_range, y_range: the training area [m].
    """
    title = "Initial states"
    if x_range is None or y_range is None:
        return EnvelopeCheck(
            "initial_states",
            title,
            "not_measured",
            summary="The rig does not give the training area.",
            next_step="Set training.workspace_x_m and workspace_y_m.",
            needs=("[training] workspace_x_m and workspace_y_m (the training area)",),
        )
    if not evaluations:
        return EnvelopeCheck(
            "initial_states",
            title,
            "not_measured",
            summary="No evaluation placements (manifest initial_states or a "
            "recorded object position).",
            next_step="Name evidence.real_manifest with initial_states.",
            needs=("evidence.real_manifest with initial_states (or recorded object positions)",),
        )
    figs: dict[str, Any] = {"training_x_m": list(x_range), "training_y_m": list(y_range)}
    details: dict[str, Any] = {"training_x_m": list(x_range), "training_y_m": list(y_range)}
    any_out = False
    parts = []
    for name, (xy, trials) in evaluations.items():
        d = edge_distance(xy, x_range, y_range)
        inside = d >= 0
        split = split_success(inside, trials)
        n_out = int((~inside).sum())
        any_out = any_out or n_out > 0
        figs[name] = {
            "placements": int(len(d)),
            "outside": n_out,
            "outside_fraction": float(n_out / len(d)) if len(d) else 0.0,
            "min_edge_distance_m": float(d.min()) if len(d) else None,
            "farthest_outside_m": float(-d.min()) if n_out else 0.0,
            **split,
        }
        details[name] = {
            "xy_m": np.asarray(xy).reshape(-1, 2).tolist(),
            "edge_distance_m": d.tolist(),
            "success": _success_per_state(len(d), trials),
        }
        parts.append(
            f"{name}: {n_out}/{len(d)} placements outside the training area, success "
            f"{split['inside_successes']}/{split['inside_trials']} inside vs "
            f"{split['outside_successes']}/{split['outside_trials']} outside"
        )
    key = "real" if "real" in evaluations else next(iter(evaluations))
    figs["key_outside_fraction"] = figs[key]["outside_fraction"]
    summary = "; ".join(parts) + "."
    step = (
        "Evaluate inside the training area, or widen the training distribution to cover "
        "the placements you need."
        if any_out
        else "Nothing to change for the placements."
    )
    return EnvelopeCheck(
        "initial_states",
        title,
        "outside" if any_out else "inside",
        figs,
        "key_outside_fraction",
        summary,
        step,
        details,
    )


def _success_per_state(n: int, trials: Sequence[tuple[int, bool]]) -> list[float | None]:
    """Fraction of successful trials per initial state (None when never tried)."""
    num = np.zeros(n)
    den = np.zeros(n)
    for idx, ok in trials:
        if 0 <= idx < n:
            den[idx] += 1
            num[idx] += int(ok)
    return [float(a / b) if b else None for a, b in zip(num, den, strict=True)]
