"""The rig: a frozen description of one setup, its ``rig.toml`` schema, checks and loading.

``model`` holds the value types, ``schema`` and ``checks`` what a rig file may say, ``load``
reads one (a reader per table: ``joints``, ``camera``, ``training``, ``deploy``,
``evidence``, over the value checks in ``fields``). ``simgap.rig.init`` (``simgap init``: a
first rig.toml from a dataset) sits a layer higher, since it reads evidence and ManiSkill; it
is not imported here.
"""

from simgap.rig.load import load_rig, rig_from_dict
from simgap.rig.model import (
    ActionSpace,
    Camera,
    CommandInterp,
    Deploy,
    Evidence,
    JointMap,
    Rig,
    Training,
)

__all__ = [
    "ActionSpace",
    "Camera",
    "CommandInterp",
    "Deploy",
    "Evidence",
    "JointMap",
    "Rig",
    "Training",
    "load_rig",
    "rig_from_dict",
]
