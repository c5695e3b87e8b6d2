"""An evaluation manifest as a value: how a success rate was measured, and its trials (read by
``evidence.manifest``, checked by ``evaluation.protocol``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PHASES = ("approach", "contact", "grasp", "lift_and_carry", "place", "after_success")


@dataclass(frozen=True)
class Trial:
    """One rollout's outcome.

    Attributes:
        success: whether the success predicate held.
        initial_state: which initial state it started from: an index into the manifest's
            state list, or the environment seed for lerobot-eval runs (None if unknown).
        phase: failure phase (issue 9 names) or None.
        note: free text or None.
    """

    success: bool
    initial_state: int | None = None
    phase: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Manifest:
    """One evaluation run, as the protocol manifest describes it.

    Attributes:
        source: the manifest file.
        name: a label (defaults to the file stem).
        checkpoint: policy checkpoint path (as written).
        sha256: the checkpoint's content hash.
        kind: "sim" or "real".
        model: simulated model path or env id (sim).
        commit: pinned commit or content hash of the simulation (sim).
        rig: rig id (real).
        states: explicit initial states (x, y, yaw) or placements, or None.
        generator: name of a seeded state generator, or None.
        generator_seed: its seed, or None.
        states_hash: the declared hash of the generated (or listed) states, or None.
        predicate: reference to the success predicate.
        threshold: the predicate's threshold (units of the predicate), or None.
        judge: "automatic", "human:<name>" or "model:<id>".
        trials: per-trial outcomes (empty when only a summary is given).
        successes: number of successes.
        n_trials: number of trials.
        conditions: other declared conditions (lighting, control rate...), compared key by key.
        pairing_note: why the trials cannot be paired by initial state (e.g. an
            eval_info.json without seeds); None when nothing is known against pairing.
    """

    source: Path | None
    name: str
    checkpoint: str
    sha256: str
    kind: str
    model: str | None
    commit: str | None
    rig: str | None
    states: tuple[tuple[float, ...], ...] | None
    generator: str | None
    generator_seed: int | None
    states_hash: str | None
    predicate: str
    threshold: float | None
    judge: str
    trials: tuple[Trial, ...]
    successes: int
    n_trials: int
    conditions: Mapping[str, Any] = field(default_factory=dict)
    pairing_note: str | None = None
