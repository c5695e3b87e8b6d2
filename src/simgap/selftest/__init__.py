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

from simgap.selftest.plan import DEFAULT_TRIALS as DEFAULT_TRIALS
from simgap.selftest.plan import FAMILIES as FAMILIES
from simgap.selftest.plan import THOROUGH_TRIALS as THOROUGH_TRIALS
from simgap.selftest.plan import Plan as Plan
from simgap.selftest.plan import Trial as Trial
from simgap.selftest.plan import plan_trials as plan_trials
from simgap.selftest.run import SelftestResult as SelftestResult
from simgap.selftest.run import TrialResult as TrialResult
from simgap.selftest.run import run_selftest as run_selftest
from simgap.selftest.score import Cell as Cell
from simgap.selftest.score import GapScore as GapScore
from simgap.selftest.score import gap_closed as gap_closed
from simgap.selftest.score import planted_parameters as planted_parameters
from simgap.selftest.score import replay_gap as replay_gap
from simgap.selftest.score import score_cells as score_cells
from simgap.selftest.synthesise import synthesise_trial as synthesise_trial
from simgap.selftest.table import FamilyRow as FamilyRow
from simgap.selftest.table import recovery_table as recovery_table
from simgap.selftest.table import sentence as sentence

__all__ = ["DEFAULT_TRIALS", "FAMILIES", "THOROUGH_TRIALS", "Cell", "FamilyRow", "GapScore",
           "Plan", "SelftestResult", "Trial", "TrialResult", "gap_closed", "plan_trials",
           "planted_parameters", "recovery_table", "replay_gap", "run_selftest",
           "score_cells", "sentence", "synthesise_trial"]
