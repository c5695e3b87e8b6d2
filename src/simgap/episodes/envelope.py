"""The training envelope: does the real deployment feed the policy and ask of the arm what
training did?

Five checks, each a result with figures and a status (``inside``, ``outside`` or
``not_measured``): observation noise, speed, control rate, grasp margin, initial states.
Inputs are values (trajectories in radians, times in seconds, positions in metres).
This module holds the result every check returns (``EnvelopeCheck``); the checks are
``envelope_noise``, ``envelope_speed``, ``envelope_rate``, ``envelope_grasp`` and
``placements`` (initial states).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class EnvelopeCheck:
    """One envelope check, ready to become a Finding.

    Attributes:
        check: ``observation_noise``, ``speed``, ``control_rate``, ``grasp_margin`` or
            ``initial_states``.
        title: a short label.
        status: ``inside``, ``outside`` or ``not_measured``.
        figures: named numbers (unit in the suffix).
        key_figure: the figure shown in summary tables.
        summary: what was found, with its key number.
        next_step: what to do next.
        details: data for the report's plots.
        needs: for ``not_measured``: what the rig must add (empty: the branch's own needs).
    """

    check: str
    title: str
    status: str
    figures: Mapping[str, Any] = field(default_factory=dict)
    key_figure: str | None = None
    summary: str = ""
    next_step: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
