"""Initial states from a protocol manifest (format item 3), for the visibility check.

Read with the evaluation area's manifest reader. A manifest that lists a generator instead
of states yields None (the check is skipped).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simgap.evidence.manifest import read_manifest
from simgap.rig import Rig


def read_initial_states(path: str | Path) -> np.ndarray | None:
    """The manifest's listed initial states, shape (N, 2 or 3) [m, m, rad], or None."""
    states = read_manifest(path).states
    if states is None:
        return None
    return np.array(states, dtype=float, ndmin=2)


def load_initial_states(rig: Rig) -> np.ndarray | None:
    """Loader: the real manifest's states, else the simulated one's, else None."""
    for p in (rig.evidence.real_manifest, rig.evidence.sim_manifest):
        if p is not None:
            states = read_initial_states(p)
            if states is not None:
                return states
    return None
