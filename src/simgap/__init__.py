"""simgap: find out why a robot policy that works in simulation fails on hardware.

simgap reads what a rig recorded, holds it against a MuJoCo model of the rig, and works the
causes in cost order (latency, contact, actuator dynamics, appearance; the controller, the
body and the plumbing beside them). Each branch ends in a Finding with a verdict, the
numbers behind it and the change to make.
"""

from __future__ import annotations

__version__ = "0.1.0"

from simgap.errors import InputError, NameNotFoundError, SimgapError
from simgap.finding import Diagnosis, Finding, Verdict, load_diagnosis
from simgap.instrument import LoopTimer
from simgap.rig import Rig, load_rig
from simgap.series import Frames, StageTimes, Trajectory
from simgap.units import JointUnit

__all__ = [
    "Diagnosis",
    "Finding",
    "Frames",
    "InputError",
    "JointUnit",
    "LoopTimer",
    "NameNotFoundError",
    "Rig",
    "SimgapError",
    "StageTimes",
    "Trajectory",
    "Verdict",
    "__version__",
    "load_diagnosis",
    "load_rig",
]
