"""The trace recorder: one JSON Lines record per control tick (docs/plumbing.md).

A tick closes when an action is sent. Its record holds the last observation read since the
previous tick, the action as the script asked for it and as it was sent, every register
write and read in order, and the events (a scene reset, a torque change) with their times.

Record keys: ``tick``, ``episode``, ``t`` (when the action was sent [s]), ``observation``
(features + ``image_t``, ``image_age_s``, ``image_sha1`` when a camera is configured),
``action``, ``sent``, ``writes``, ``reads``, ``events``. The first record carries ``meta``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.fakearm.bus import RegisterAccess
from simgap.outputs import atomic_write_text


class TraceRecorder:
    """Collects trace records in memory; ``save`` writes them as JSON Lines, atomically.

    Args:
        meta: the first record's ``meta`` (robot type, units, calibration, ...).
    """

    def __init__(self, meta: Mapping[str, Any] | None = None) -> None:
        self.meta: dict[str, Any] = dict(meta or {})
        self.records: list[dict[str, Any]] = []
        self.episode = 0
        self._observation: dict[str, Any] | None = None
        self._writes: list[dict[str, Any]] = []
        self._reads: list[dict[str, Any]] = []
        self._events: list[dict[str, Any]] = []

    def annotate(self, **meta: Any) -> None:
        """Add keys to ``meta`` (e.g. ``policy_server="127.0.0.1:8080"``, ``checkpoint=``)."""
        self.meta.update(meta)

    def access(self, acc: RegisterAccess) -> None:
        """Record a register write or read (the bus's listener)."""
        entry = {"motor": acc.motor, "register": acc.register, "value": acc.value}
        (self._writes if acc.write else self._reads).append(entry)

    def event(self, name: str, t: float) -> None:
        """Record an event (``reset``, ``connect``, ...) at time ``t`` [s]."""
        self._events.append({"name": name, "t": float(t)})

    def new_episode(self) -> None:
        """Start the next episode, unless the current one has no tick yet."""
        if any(r["episode"] == self.episode for r in self.records[-1:]):
            self.episode += 1

    def observation(self, obs: Mapping[str, Any]) -> None:
        """Keep the latest observation read (numbers and image stamps only)."""
        self._observation = dict(obs)

    def tick(self, t: float, action: Mapping[str, float], sent: Mapping[str, float]) -> None:
        """Close the tick: one record with everything since the previous tick."""
        rec: dict[str, Any] = {
            "tick": len(self.records),
            "episode": self.episode,
            "t": float(t),
            "observation": self._observation or {},
            "action": dict(action),
            "sent": dict(sent),
            "writes": self._writes,
            "reads": self._reads,
            "events": self._events,
        }
        if not self.records:
            rec["meta"] = self.meta
        self.records.append(rec)
        self._observation = None
        self._writes, self._reads, self._events = [], [], []

    def pending(self) -> bool:
        """Whether anything happened since the last tick."""
        return bool(self._observation or self._writes or self._reads or self._events)

    def lines(self) -> str:
        """The trace as JSON Lines text (meta is refreshed on the first record)."""
        if self.records:
            self.records[0]["meta"] = self.meta
        return "".join(json.dumps(r, allow_nan=False) + "\n" for r in self.records)

    def save(self, path: str | Path) -> Path:
        """Write the trace atomically."""
        return atomic_write_text(path, self.lines())
