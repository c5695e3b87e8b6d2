"""simgap: find out why a robot policy that works in simulation fails on hardware.

simgap reads what a rig recorded, holds it against a MuJoCo model of the rig, and works the
causes in cost order (latency, contact, actuator dynamics, appearance; the controller, the
body and the plumbing beside them). Each branch ends in a Finding with a verdict, the
numbers behind it and the change to make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from simgap._version import __version__

if TYPE_CHECKING:
    from simgap.errors import InputError, NameNotFoundError, SimgapError
    from simgap.finding import Diagnosis, Finding, Verdict, load_diagnosis
    from simgap.instrument import LoopTimer
    from simgap.rig import Rig, load_rig
    from simgap.series import Frames, StageTimes, Trajectory
    from simgap.units import JointUnit

# The public names are imported on first use (PEP 562), so that ``simgap --help`` does not
# pay for numpy and the readers it never touches.
_HOME = {
    "InputError": "errors",
    "NameNotFoundError": "errors",
    "SimgapError": "errors",
    "Diagnosis": "finding",
    "Finding": "finding",
    "Verdict": "finding",
    "load_diagnosis": "finding",
    "LoopTimer": "instrument",
    "Rig": "rig",
    "load_rig": "rig",
    "Frames": "series",
    "StageTimes": "series",
    "Trajectory": "series",
    "JointUnit": "units",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'simgap' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"simgap.{home}"), name)
    globals()[name] = value
    return value


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
