"""The designed episode (``NextMotion``) and, per open (joint, parameter), the motion
chosen for it with its predicted intervals (``Design``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.actuator.excite_design import DELAY, Prediction, Segment

UNBOUNDED_SPAN = 1e6
"""A predicted interval of a kind spanning more than this factor (hi / lo, x1000 either side
of the estimate) states no value and is written "unbounded": its bounds read as 1e+-40 or
overflow (the identification declares a parameter at a span of 2, ``joint_id.MAX_SPAN``)."""


UNBOUNDED_DELAY_S = 1.0
"""A predicted delay half-width over this [s] states no delay (a servo's is tens of ms)."""


@dataclass(frozen=True)
class Design:
    """The motion chosen for one open (joint, parameter) and what it is predicted to give.

    Attributes:
        joint, kind: the parameter (``delay`` for a delay on a ridge).
        reason: why the diagnosis declared it not identifiable.
        value: the current estimate [SI; s for the delay].
        segment: the motion chosen.
        before: the prediction on the recording alone.
        after: the prediction on the recording plus the whole designed episode.
        scores: candidate name -> predicted half-width on the recording plus it.
        checked: the identification of the recording plus the episode simulated at the
            estimate: ``{"interval": [lo, hi]}`` or ``{"reason": ...}`` (empty: not run).
    """

    joint: str
    kind: str
    reason: str
    value: float
    segment: Segment
    before: Prediction
    after: Prediction
    scores: Mapping[str, float]
    checked: Mapping[str, Any] = field(default_factory=dict)

    def halfwidth(self, which: str = "after") -> float:
        """The predicted 95 % half-width: in the log-multiplier for a kind, [s] for the delay
        (inf along a null direction)."""
        p = self.after if which == "after" else self.before
        return float(p.halfwidth[p.columns.index(self.kind)])

    def interval(self, which: str = "after") -> tuple[float, float] | None:
        """The predicted 95 % interval [SI; s for the delay]: a kind's is multiplicative,
        the delay's not; None where it is unbounded (``unbounded``)."""
        hw = self.halfwidth(which)
        if self.unbounded(which):
            return None
        if self.kind == DELAY:
            return max(0.0, self.value - hw), self.value + hw
        return self.value * float(np.exp(-hw)), self.value * float(np.exp(hw))

    def unbounded(self, which: str = "after") -> str:
        """Why the predicted interval states no value ('' where it does): a half-width that
        is infinite (a null direction) or past ``UNBOUNDED_SPAN`` (``UNBOUNDED_DELAY_S``
        for the delay), whose bounds would overflow or read as 1e+-40."""
        hw = self.halfwidth(which)
        if not np.isfinite(hw) or not np.isfinite(self.value):
            return (
                "unbounded: the motions leave this parameter's sensitivity on a null "
                "direction (an infinite predicted half-width)"
            )
        if self.kind == DELAY:
            return (
                f"unbounded: the predicted 95 % half-width is {hw * 1e3:.3g} ms (over "
                f"{UNBOUNDED_DELAY_S * 1e3:.0f} ms)"
                if hw > UNBOUNDED_DELAY_S
                else ""
            )
        if 2.0 * hw > np.log(UNBOUNDED_SPAN):
            return (
                f"unbounded: the predicted 95 % half-width is {hw:.3g} in the log, a "
                f"factor e^{hw:.3g} either side of the estimate (a stated interval spans "
                f"at most x{UNBOUNDED_SPAN:.0e})"
            )
        return ""


@dataclass(frozen=True)
class NextMotion:
    """The designed episode.

    Attributes:
        joints: model joints, the commands' column order.
        fps: frame rate [Hz] (the recording's).
        commands: joint targets [rad], shape (T, J), whole encoder counts.
        predicted_q: the replay of the commands at the current estimate [rad], (T, J).
        start: the pose it starts and ends at [rad], shape (J,).
        designs: one per open (joint, parameter).
    """

    joints: tuple[str, ...]
    fps: float
    commands: np.ndarray
    predicted_q: np.ndarray
    start: np.ndarray
    designs: tuple[Design, ...]
