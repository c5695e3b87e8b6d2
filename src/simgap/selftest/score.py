"""Known-truth scoring: what a diagnosis stated against what was planted, per family and joint.

A diagnosis is scored where it states something, joint by joint: RMSE alone passes a
parameter mapped to the wrong joint, applied with the wrong scale or hidden by coupling,
so each (family, joint) cell is scored on its own. A cell is *planted* when its true value
differs from the rig's nominal one (a multiplier off 1 by more than ``PLANTED_FACTOR``, a
delay above ``PLANTED_DELAY_S``). Outcomes (``OUTCOMES``):

- planted: ``inside`` (the stated 95 % interval holds the truth), ``declared`` (stated not
  identifiable, with a reason), ``missed`` (the interval excludes the truth: the wrong scale
  or the wrong joint; or nothing is stated at all);
- not planted: ``clean`` (nothing claimed, or an interval holding the true value), ``false``
  (an interval that excludes the true value: a change that was never planted).

The delay family reads ``delay_interval_s``; a delay the diagnosis marks not identifiable
(``not_identifiable[joint]["delay"]``: only the effective delay is) is ``declared``.

The replay gap (``replay_gap``) is issue 40's measure: the held-out episode's mean absolute
joint error under the nominal model, the true one and the offered patch; the share of the
nominal-to-truth gap the patch closes (no patch offered: it closes none).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.demo.faults import JointTruth
from simgap.figures.joint_dynamics import JointDynamicsFigures

PLANTED_FACTOR = 0.05
"""A multiplier off 1 by more than this counts as planted (issue 40's)."""

PLANTED_DELAY_S = 1e-3
"""A true delay above this counts as planted [s]."""

OUTCOMES: tuple[str, ...] = ("inside", "declared", "missed", "clean", "false")


@dataclass(frozen=True)
class Cell:
    """One family on one joint of one trial.

    Attributes:
        trial: the trial's name.
        family: ``delay`` or a parameter kind.
        joint: the model joint.
        planted: whether the truth differs from the nominal value.
        truth: the true value (MJCF units; the delay [s]).
        nominal: the rig model's value.
        outcome: one of ``OUTCOMES``.
        interval: the stated 95 % interval, or None.
        note: what was stated, in words (the reason when declared).
    """

    trial: str
    family: str
    joint: str
    planted: bool
    truth: float
    nominal: float
    outcome: str
    interval: tuple[float, float] | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        d = asdict(self)
        d["interval"] = list(self.interval) if self.interval is not None else None
        return d


def _interval(v: Any) -> tuple[float, float] | None:
    if (
        isinstance(v, (list, tuple))
        and len(v) == 2
        and all(isinstance(x, (int, float)) and math.isfinite(x) for x in v)
    ):
        return float(v[0]), float(v[1])
    return None


def _outcome(
    planted: bool, truth: float, iv: tuple[float, float] | None, reason: str | None
) -> tuple[str, str]:
    held = iv is not None and iv[0] - 1e-12 <= truth <= iv[1] + 1e-12
    if planted:
        if reason:
            return "declared", reason
        if iv is None:
            return "missed", "nothing stated"
        if held:
            return "inside", f"[{iv[0]:.4g}, {iv[1]:.4g}] holds {truth:.4g}"
        return "missed", f"[{iv[0]:.4g}, {iv[1]:.4g}] excludes the truth {truth:.4g}"
    if iv is not None and not held and not reason:
        return "false", (
            f"[{iv[0]:.4g}, {iv[1]:.4g}] excludes the true (nominal) "
            f"{truth:.4g}: a change that was not planted"
        )
    return "clean", ""


def score_cells(
    trial: str,
    truth: Sequence[JointTruth],
    figures: JointDynamicsFigures | Mapping[str, Any] | None,
    families: Iterable[str],
) -> list[Cell]:
    """Every (family, joint) cell of one trial.

    Args:
        trial: the trial's name.
        truth: the planted truth per joint.
        figures: the actuator finding's joint identification (its ``delay_interval_s``,
            ``params_interval``, ``not_identifiable``; the record, or an identification's
            JSON), or None when the diagnosis stated none (every planted cell is then
            missed).
        families: the families to score.
    """
    fig = (
        figures
        if isinstance(figures, JointDynamicsFigures)
        else JointDynamicsFigures.from_mapping(figures or {}, where="identification", strict=False)
    )
    dly, piv, why = fig.delay_interval_s, fig.params_interval, fig.not_identifiable
    cells = []
    for fam in families:
        for t in truth:
            ni = why.get(t.name, {}).get(fam)
            if fam == "delay":
                tv, nv = float(t.delay_s), 0.0
                planted = tv > PLANTED_DELAY_S
                iv = _interval(dly.get(t.name))
            else:
                nv = dict(t.nominal)[fam]
                if not (math.isfinite(nv) and nv > 0):
                    continue  # nothing to plant here (an actuator without a force range)
                tv = t.value(fam)
                planted = abs(t.factor(fam) - 1.0) > PLANTED_FACTOR
                iv = _interval(piv.get(t.name, {}).get(fam))
            outcome, note = _outcome(planted, tv, iv, str(ni) if ni else None)
            cells.append(
                Cell(
                    trial=trial,
                    family=fam,
                    joint=t.name,
                    planted=planted,
                    truth=tv,
                    nominal=nv,
                    outcome=outcome,
                    interval=iv,
                    note=note,
                )
            )
    return cells


def planted_parameters(
    js: Mapping[str, Any], truth: Sequence[JointTruth], kinds: Iterable[str]
) -> dict[str, int]:
    """Of the planted parameters of ``kinds``, how many the identification (``js``: its
    JSON, or the actuator finding's figures) states with an interval holding the truth
    (``inside``), with one missing it (``outside``), and declares not identifiable
    (``declared``); a parameter with neither is not counted (benchmarks/replay_gap.py)."""
    out = {"inside": 0, "outside": 0, "declared": 0}
    fig = JointDynamicsFigures.from_mapping(
        {k: v for k, v in js.items() if k in ("delay_interval_s", "params_interval")},
        where="identification",
        strict=False,
    )
    for c in score_cells("", truth, fig, kinds):
        if not c.planted:
            continue
        if c.interval is None:
            out["declared"] += 1
        else:
            out["inside" if c.outcome == "inside" else "outside"] += 1
    return out


@dataclass(frozen=True)
class GapScore:
    """The replay gap on a held-out episode.

    Attributes:
        mae_nominal_rad: mean absolute joint error of the rig's model [rad].
        mae_truth_rad: of the true model [rad].
        mae_patch_rad: of the offered patch (the nominal model when none) [rad].
        closed: (nominal - patch) / (nominal - truth); NaN when there is no gap.
        patch_offered: whether the diagnosis offered a patch.
    """

    mae_nominal_rad: float
    mae_truth_rad: float
    mae_patch_rad: float
    closed: float
    patch_offered: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON form (NaN stays NaN: ``json_safe`` writes it as null)."""
        return asdict(self)


def gap_closed(nominal: float, truth: float, patch: float) -> float:
    """The share of the nominal-to-truth error gap the patch closes (1: all of it, 0: none,
    negative: worse than the nominal model); NaN when the truth is no better than nominal."""
    gap = nominal - truth
    return (nominal - patch) / gap if gap > 0 else float("nan")


def replay_mae(model_path: str | Path, episode: Any, clock: str = "exact") -> float:
    """Mean absolute joint error [rad] of the model at ``model_path`` (visual geoms
    stripped, as the fits compile it) replaying ``episode`` (a ``Trajectory``) open loop."""
    from simgap.sim.model import compile_spec, load_spec, strip_visuals
    from simgap.sim.patch_proof import replay

    m = compile_spec(strip_visuals(load_spec(model_path)), model_path)
    q, _ = replay(m, episode, clock)
    return float(np.nanmean(np.abs(q - episode.q)))


def replay_gap(
    nominal: str | Path,
    truth: str | Path | None,
    patch: str | Path | None,
    episode: Any,
    clock: str = "exact",
) -> GapScore:
    """``GapScore`` of one held-out episode (``truth`` None: the nominal model is true;
    ``patch`` None: none offered, the nominal model stays)."""
    mae_n = replay_mae(nominal, episode, clock)
    mae_t = replay_mae(truth, episode, clock) if truth is not None else mae_n
    mae_p = replay_mae(patch, episode, clock) if patch is not None else mae_n
    return GapScore(mae_n, mae_t, mae_p, gap_closed(mae_n, mae_t, mae_p), patch is not None)
