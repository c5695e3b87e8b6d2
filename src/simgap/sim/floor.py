"""Whether a model has something the arm could hit below it: a floor or a table.

A design checked on a model without one was never checked against the real arm's
surroundings, so what plays it on hardware must say so (``simgap excite --for``).
"""

from __future__ import annotations

from pathlib import Path

import mujoco

from simgap.sim.model import load_model

SURFACE_WORDS = ("floor", "ground", "table", "desk", "bench")
"""Geom or body names that stand for a surface the arm stands on (lower case, substrings)."""


def has_floor(model: str | Path) -> bool:
    """True where the MJCF has a plane geom, or a geom (or its body) named like a surface
    (``SURFACE_WORDS``): a box modelling a table counts."""
    m = load_model(Path(model))
    plane = int(mujoco.mjtGeom.mjGEOM_PLANE)
    for g in range(m.ngeom):
        if int(m.geom_type[g]) == plane:
            return True
        names = (
            mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or "",
            mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(m.geom_bodyid[g])) or "",
        )
        if any(w in n.lower() for n in names for w in SURFACE_WORDS):
            return True
    return False
