"""Mark each stage of a control loop and write the timing log simgap reads.

A tiny API meant to live inside any loop: a LeRobot record loop, a custom deploy script. A
mark costs one ``time.perf_counter_ns`` call and two list appends; formatting and writing
happen between episodes (or every ``flush_ticks`` ticks), never per mark.

Example::

    from simgap import LoopTimer

    with LoopTimer("timing.jsonl") as timer:
        for episode in range(20):
            timer.start_episode(episode)
            for step in range(300):
                timer.tick()                      # tick start: the clock for the first stage
                obs = robot.get_observation();   timer.mark("camera")
                batch = preprocess(obs);         timer.mark("preprocess")
                action = policy.select_action(batch); timer.mark("inference")
                robot.send_action(action);       timer.mark("command")
                busy_wait_until_next_tick()

Each tick becomes one JSON line ``{"episode", "step", "t", "stages": {name: seconds}}``
(see ``docs/latency.md``): ``t`` is the tick start on the monotonic ``perf_counter`` clock
[s]; a stage's duration is the time since the previous mark (or the tick start) [s].
"""

from __future__ import annotations

import json
from pathlib import Path
from time import perf_counter_ns
from types import TracebackType
from typing import IO

from simgap.errors import InputError

_NS = 1e-9


def _template(names: tuple[str, ...]) -> str:
    """The %-format of a tick's JSON line for this sequence of stage names; '' when a name
    repeats (the caller sums those first)."""
    if len(set(names)) < len(names):
        return ""
    parts = [json.dumps(str(n)).replace("%", "%%") + ": %r" for n in names]
    return '{"episode": %d, "step": %d, "t": %r, "stages": {' + ", ".join(parts) + "}}"


class LoopTimer:
    """Per-stage stopwatch of a control loop that writes a JSON Lines timing log.

    Args:
        path: the timing log to write (created or overwritten; ``append=True`` appends).
        episode: the first episode index.
        append: append to an existing log instead of replacing it.
        flush_ticks: write buffered ticks after this many (they are also written at every
            ``start_episode`` and at ``close``).
    """

    def __init__(
        self, path: str | Path, *, episode: int = 0, append: bool = False, flush_ticks: int = 10_000
    ) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise InputError(
                file=self.path,
                expected="a file path for the timing log",
                got="a folder",
                fix="name a file such as timing.jsonl",
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = self.path.open("a" if append else "w", encoding="utf-8")
        self.episode = int(episode)
        self.step = -1
        self.flush_ticks = max(1, int(flush_ticks))
        self._open = False
        self._last = 0
        # Flat buffers: appending to long-lived lists allocates no container per tick, so
        # the garbage collector never walks the buffer (per-tick lists made marks 5x dearer).
        self._names: list[str] = []  # stage name of every mark
        self._durs: list[int] = []  # duration of every mark [ns]
        self._tick_ep: list[int] = []  # per completed tick: episode, step, start [ns], and
        self._tick_step: list[int] = []  # the index one past its last mark
        self._tick_start: list[int] = []
        self._tick_end: list[int] = []
        self._start = 0
        self._templates: dict[tuple[str, ...], str] = {}

    # --- the hot path -------------------------------------------------------------------
    def tick(self) -> None:
        """Start a control tick: close the previous one and start the stage clock."""
        now = perf_counter_ns()
        if self._open:
            self._end_tick()
            if len(self._tick_end) >= self.flush_ticks:
                self.flush()
        self._open = True
        self.step += 1
        self._start = self._last = now

    def mark(self, stage: str) -> None:
        """End the stage ``stage``: its duration is the time since the last mark or tick."""
        now = perf_counter_ns()
        self._durs.append(now - self._last)
        self._names.append(stage)
        self._last = now

    def _end_tick(self) -> None:
        self._tick_ep.append(self.episode)
        self._tick_step.append(self.step)
        self._tick_start.append(self._start)
        self._tick_end.append(len(self._durs))

    # --- episode boundaries and output ----------------------------------------------------
    def start_episode(self, episode: int | None = None) -> None:
        """Close the current tick, write what is buffered and start a new episode.

        Args:
            episode: its index; default the previous index + 1 (or the first index when no
                tick was recorded yet).
        """
        had_ticks = self.step >= 0
        self._close_tick()
        self.flush()
        if episode is not None:
            self.episode = int(episode)
        elif had_ticks:
            self.episode += 1
        self.step = -1

    def _close_tick(self) -> None:
        if self._open:
            self._end_tick()
            self._open = False

    def flush(self) -> None:
        """Write the completed ticks buffered so far."""
        n_done = len(self._tick_end)
        if self._fh is None or n_done == 0:
            return
        templates = self._templates
        names, durs = self._names, self._durs
        lines = []
        begin = 0
        for i in range(n_done):
            end = self._tick_end[i]
            key = tuple(names[begin:end])
            tpl = templates.get(key)
            if tpl is None:
                tpl = templates[key] = _template(key)
            if tpl:
                vals = [d * _NS for d in durs[begin:end]]
            else:  # a stage marked twice in a tick: its durations add up
                acc: dict[str, int] = {}
                for j in range(begin, end):
                    acc[names[j]] = acc.get(names[j], 0) + durs[j]
                tpl = templates.get(tuple(acc)) or _template(tuple(acc))
                vals = [d * _NS for d in acc.values()]
            begin = end
            lines.append(
                tpl % (self._tick_ep[i], self._tick_step[i], self._tick_start[i] * _NS, *vals)
            )
        self._fh.write("\n".join(lines) + "\n")
        self._fh.flush()
        # keep the marks of the tick still open
        del self._names[:begin], self._durs[:begin]
        for buf in (self._tick_ep, self._tick_step, self._tick_start, self._tick_end):
            buf.clear()

    def close(self) -> None:
        """Close the last tick, write everything and close the file."""
        if self._fh is None:
            return
        self._close_tick()
        self.flush()
        self._fh.close()
        self._fh = None

    def __enter__(self) -> LoopTimer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
