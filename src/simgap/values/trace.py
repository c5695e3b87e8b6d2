"""A deployment trace and a checkpoint probe as values (read by ``evidence.trace``, audited by
``plumbing/``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MOTORS: tuple[str, ...] = (
    "shoulder_pan",
    "shoulder_lift",
    "elbow_flex",
    "wrist_flex",
    "wrist_roll",
    "gripper",
)
"""The SO-101 follower's motors, in bus id order (ids 1..6)."""

JOINT_FEATURES: tuple[str, ...] = tuple(f"{m}.pos" for m in MOTORS)
"""LeRobot's SO-101 joint features (observation and action)."""


TEMPERATURE_FEATURES: tuple[str, ...] = tuple(f"{m}.temperature" for m in MOTORS)
"""Optional observation features: motor temperatures [deg C]."""


@dataclass(frozen=True)
class RegisterEntry:
    """One register write or read, in the order the record lists it.

    Attributes:
        row: index of the record (0-based row, not the tick number).
        motor: motor name.
        register: register name (``Torque_Enable``, ``Goal_Position``, ...).
        value: the value (ticks, 0/1, deg C).
    """

    row: int
    motor: str
    register: str
    value: float


@dataclass(frozen=True)
class TraceEvent:
    """An event (``reset``, ``connect``, ...) at time ``t`` [s] (NaN when the trace gave only
    the name), listed in record ``row``."""

    row: int
    name: str
    t: float


@dataclass(frozen=True)
class Trace:
    """A deployment trace, column-wise. Missing numbers are NaN.

    Attributes:
        source: the file read.
        meta: the first record's ``meta``.
        tick: tick numbers, shape (N,).
        episode: episode index per tick, shape (N,).
        t: time the action was sent [s], shape (N,).
        observation: feature -> values, shape (N,) each (joints and temperatures).
        action: feature -> values as the script asked, shape (N,).
        sent: feature -> values actually sent (after clipping), shape (N,).
        units: feature -> unit (``deg``, ``m100``, ``pct``, ``rad``, ``ticks``).
        image_t: capture time of the observation's image [s], shape (N,).
        image_age_s: age of the image when read [s], shape (N,).
        image_sha1: hash of the image per tick (None where absent).
        writes: register writes in order.
        reads: register reads in order.
        events: events in order.
    """

    source: Path | None
    meta: Mapping[str, Any]
    tick: np.ndarray
    episode: np.ndarray
    t: np.ndarray
    observation: Mapping[str, np.ndarray]
    action: Mapping[str, np.ndarray]
    sent: Mapping[str, np.ndarray]
    units: Mapping[str, str]
    image_t: np.ndarray
    image_age_s: np.ndarray
    image_sha1: tuple[str | None, ...]
    writes: tuple[RegisterEntry, ...] = ()
    reads: tuple[RegisterEntry, ...] = ()
    events: tuple[TraceEvent, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.tick.size)


@dataclass(frozen=True)
class CheckpointProbe:
    """What loading a checkpoint on this machine's CPU showed.

    Attributes:
        path: the checkpoint.
        locations: storage locations recorded in the file (``cpu``, ``cuda:0``, ...).
        loads_plain: ``torch.load(path)`` (no map_location) succeeded here.
        plain_error: its error message, if it failed.
        loads_cpu: ``torch.load(path, map_location="cpu", weights_only=True)`` succeeded.
        cpu_error: its error message, if it failed.
        cuda_available: whether this machine has CUDA.
        kind: ``ok``; ``cuda`` (tensors tagged for a GPU); ``not_a_checkpoint`` (neither a
            torch zip archive nor a pickle); ``unsafe_pickle`` (a pickle holding Python
            objects that the safe loader, ``weights_only=True``, refuses); ``unreadable``.
    """

    path: Path
    locations: tuple[str, ...]
    loads_plain: bool
    plain_error: str | None
    loads_cpu: bool
    cpu_error: str | None
    cuda_available: bool
    kind: str = "ok"
