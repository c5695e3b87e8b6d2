"""Per-checkpoint simulated and real success rates (read by ``evidence.checkpoints``, ranked by
``evaluation.rank``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckpointTable:
    """Per-checkpoint success rates, in file order.

    Attributes:
        checkpoints: names, shape (N,).
        sim: simulated success rates in [0, 1], shape (N,).
        real: real success rates in [0, 1], shape (N,).
        sim_trials: simulated trial counts, shape (N,), or None when the column is absent.
        real_trials: real trial counts, shape (N,), or None.
        offline_metric: offline metric (lower is better), shape (N,), or None.
        source: the file.
    """

    checkpoints: tuple[str, ...]
    sim: tuple[float, ...]
    real: tuple[float, ...]
    sim_trials: tuple[int, ...] | None
    real_trials: tuple[int, ...] | None
    offline_metric: tuple[float, ...] | None
    source: Path | None = None
