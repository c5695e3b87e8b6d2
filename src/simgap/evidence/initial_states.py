"""Initial states from a protocol manifest (format item 3), for the visibility check.

A small reader owned by the appearance branch until the evaluation area's manifest reader is
shared: it reads only ``[initial_states] states = [[x, y, yaw], ...]`` from TOML or JSON. A
manifest that lists a generator instead of states yields None (the check is skipped).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.rig import Rig


def read_initial_states(path: str | Path) -> np.ndarray | None:
    """The manifest's listed initial states, shape (N, 2 or 3) [m, m, rad], or None."""
    path = Path(path)
    if not path.is_file():
        raise InputError(file=path, expected="a protocol manifest", got="no such file")
    text = path.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(file=path, expected="TOML or JSON", got=str(e)) from e
    block = raw.get("initial_states") if isinstance(raw, dict) else None
    if not isinstance(block, dict) or "states" not in block:
        return None
    states = block["states"]
    try:
        arr = np.array(states, dtype=float, ndmin=2)
    except (TypeError, ValueError):
        raise InputError(file=path, field="initial_states.states",
                         expected="a list of [x, y, yaw]", got=states) from None
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise InputError(file=path, field="initial_states.states",
                         expected="a list of [x, y] or [x, y, yaw]", got=f"shape {arr.shape}")
    return arr


def load_initial_states(rig: Rig) -> np.ndarray | None:
    """Loader: the real manifest's states, else the simulated one's, else None."""
    for p in (rig.evidence.real_manifest, rig.evidence.sim_manifest):
        if p is not None:
            states = read_initial_states(p)
            if states is not None:
                return states
    return None
