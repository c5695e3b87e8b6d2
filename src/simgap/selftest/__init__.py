"""Known-truth recovery on the user's own rig (``simgap selftest RIG --out DIR``).

The rig's own model, driven by the rig's own recorded commands, with faults planted at
random in the families its evidence can see, recorded like the rig records (rate, encoder
count, clock, float32 time stamps, units) and diagnosed like the real recording; each
diagnosis is scored per family and per joint against the planted truth, with a null trial
(the nominal model's own recording) for false implications and the replay gap the offered
patch closes on a held-out episode.

Modules, in pipeline order: ``plan`` (what is planted), ``synthesise`` and ``trial_rig``
(each trial's recording and rig), ``score`` (one diagnosis against its truth), ``table``
(the recovery table and its sentence), ``run`` (all of it over a fleet).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "DEFAULT_TRIALS": "sizes",
    "THOROUGH_TRIALS": "sizes",
    "FAMILIES": "plan",
    "Plan": "plan",
    "Trial": "plan",
    "plan_trials": "plan",
    "SelftestResult": "run",
    "TrialResult": "run",
    "run_selftest": "run",
    "Cell": "score",
    "GapScore": "score",
    "gap_closed": "score",
    "planted_parameters": "score",
    "replay_gap": "score",
    "score_cells": "score",
    "synthesise_trial": "synthesise",
    "FamilyRow": "table",
    "recovery_table": "table",
    "sentence": "table",
}
"""The public names and the module each lives in: imported on first use, so that the
command line's help (``simgap.cli`` imports ``sizes``) loads no numpy or MuJoCo."""

__all__ = [
    "Cell",
    "DEFAULT_TRIALS",
    "FAMILIES",
    "FamilyRow",
    "GapScore",
    "Plan",
    "SelftestResult",
    "THOROUGH_TRIALS",
    "Trial",
    "TrialResult",
    "gap_closed",
    "plan_trials",
    "planted_parameters",
    "recovery_table",
    "replay_gap",
    "run_selftest",
    "score_cells",
    "sentence",
    "synthesise_trial",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(
            f"module 'simgap.selftest' has no attribute {name!r}; valid names: {', '.join(__all__)}"
        )
    return getattr(importlib.import_module(f"simgap.selftest.{_WHERE[name]}"), name)
