"""Timing-log readers: JSON Lines or Parquet, one record per control tick -> StageTimes.

The format (a public contract, see ``docs/latency.md``)::

    {"episode": 0, "step": 0, "t": 12.3401, "stages": {"camera": 0.018, "inference": 0.031}}

``episode`` and ``step`` are integers, ``t`` is the tick start on a monotonic clock [s],
``stages`` maps free stage names to durations [s]; a Parquet file has the same fields (a
``stages`` struct column, or flat ``stages.<name>`` columns). Bad input is refused with an
error that names the line (or row); ticks out of order and stages missing in some ticks are
accepted with a warning that counts them. The parsers are ``timing_jsonl`` and
``timing_table`` (Parquet), over the checks they share (``timing_check``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, found_instead
from simgap.evidence.timing_check import bad_field, check_ticks
from simgap.evidence.timing_jsonl import parse_jsonl, read_jsonl_fast
from simgap.evidence.timing_table import parse_parquet
from simgap.rig import Rig
from simgap.series import StageTimes
from simgap.validate import check_input_file, read_text

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


PARQUET_SUFFIXES = (".parquet", ".pq")


class TimingLogWarning(UserWarning):
    """A timing log was read, but some ticks were out of order or lacked stages."""


@dataclass(frozen=True)
class TimingLog:
    """A timing log as read: the per-tick stage times and what was odd about them.

    Attributes:
        times: per-tick stage durations [s], sorted by (episode, step).
        warnings: one sentence per oddity, with counts (ticks reordered, stages missing).
        files: the files read.
    """

    times: StageTimes
    warnings: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def read_timing_log(path: str | Path, *, skip_bad_lines: bool = False) -> TimingLog:
    """Read one timing log (``.jsonl``/``.ndjson``/``.json`` or ``.parquet``).

    A truncated last line (not JSON, no newline after it) is dropped with a warning;
    ``skip_bad_lines`` drops every line that is not a JSON object, with a warning that
    counts them.

    Raises:
        InputError: the file is missing or empty, a line before the last is not JSON (the
            line is named; not with ``skip_bad_lines``), a
            field is missing or of the wrong type, a duration is negative or NaN, or a tick
            appears twice.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(
            file=path,
            expected="a timing log",
            got="no such file",
            fix="pass the JSON Lines or Parquet file your loop wrote",
        )
    check_input_file(path, "a timing log")
    suffix = path.suffix.lower()
    dropped: list[str] = []
    if suffix in PARQUET_SUFFIXES:
        base, cols, rows = parse_parquet(path)
        unit = "row"
    elif suffix in JSONL_SUFFIXES:
        read_text(path, "a timing log (UTF-8 JSON Lines)")  # Latin-1 or UTF-16: refused
        fast = read_jsonl_fast(path)
        if fast is not None:
            times, notes = fast
            for note in notes:
                warnings.warn(note, TimingLogWarning, stacklevel=2)
            return TimingLog(times=times, warnings=tuple(notes), files=(str(path),))
        base, cols, rows = parse_jsonl(path, dropped, skip_bad_lines)
        unit = "line"
    else:
        raise bad_field(
            path,
            "suffix",
            f"one of {', '.join(JSONL_SUFFIXES + PARQUET_SUFFIXES)}",
            suffix or "no suffix",
            fix="name the log .jsonl (JSON Lines) or .parquet",
        )
    times, notes = check_ticks(path, base, cols, rows, unit)
    notes = [*dropped, *notes]
    for note in notes:
        warnings.warn(note, TimingLogWarning, stacklevel=2)
    return TimingLog(times=times, warnings=tuple(notes), files=(str(path),))


def concat_stage_times(parts: Sequence[StageTimes], source: str = "") -> StageTimes:
    """Join StageTimes of several files; a file whose episodes overlap earlier ones is
    renumbered after them so episodes stay distinct."""
    names: list[str] = []
    for p in parts:
        names.extend(n for n in p.stage_names if n not in names)
    eps, offset_next = [], 0
    for p in parts:
        ep = np.asarray(p.episode)
        shift = offset_next - int(ep.min()) if ep.size and int(ep.min()) < offset_next else 0
        eps.append(ep + shift)
        offset_next = int(eps[-1].max()) + 1 if ep.size else offset_next
    stages: dict[str, Any] = {
        n: np.concatenate(
            [
                np.asarray(p.stages[n]) if n in p.stages else np.full(p.n_ticks, np.nan)
                for p in parts
            ]
        )
        for n in names
    }
    return StageTimes(
        t=np.concatenate([p.t for p in parts]),
        episode=np.concatenate(eps),
        step=np.concatenate([p.step for p in parts]),
        stages=stages,
        source=source or ", ".join(p.source for p in parts),
    )


def read_timing_logs(
    paths: Sequence[str | Path],
    *,
    skip_bad_lines: bool = False,
) -> TimingLog:
    """Read several timing logs as one (episodes of later files renumbered when they clash)."""
    if not paths:
        raise InputError(field="timing_logs", expected="at least one timing log", got="none")
    logs = [read_timing_log(p, skip_bad_lines=skip_bad_lines) for p in paths]
    if len(logs) == 1:
        return logs[0]
    times = concat_stage_times([lg.times for lg in logs])
    return TimingLog(
        times=times,
        warnings=tuple(w for lg in logs for w in lg.warnings),
        files=tuple(f for lg in logs for f in lg.files),
    )


def load_timing_logs(rig: Rig) -> TimingLog | None:
    """Loader for ``ctx.evidence.get``: the rig's ``evidence.timing_logs`` (None if none)."""
    if not rig.evidence.timing_logs:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TimingLogWarning)  # carried in TimingLog.warnings
        return read_timing_logs(rig.evidence.timing_logs)


LOG_SUFFIXES = (".log", ".txt")


def read_latency_files(
    paths: Sequence[str | Path],
    *,
    skip_bad_lines: bool = False,
) -> tuple[TimingLog | None, tuple[Any, ...]]:
    """Read timing logs (``.jsonl``/``.parquet``) and LeRobot async logs (``.log``) together.

    Returns:
        (the timing logs joined, or None; the LeRobot logs as ``LeRobotLog`` values).
    """
    from simgap.evidence.lerobot_logs import read_lerobot_log

    if not paths:
        raise InputError(
            field="LOG",
            expected="at least one log file",
            got="none",
            fix="pass timing logs (.jsonl, .parquet) or LeRobot logs (.log)",
        )
    timing_paths, lerobot = [], []
    for p in map(Path, paths):
        suffix = p.suffix.lower()
        if p.is_dir():
            logs = sorted(
                q.name
                for q in p.iterdir()
                if q.suffix.lower() in LOG_SUFFIXES + JSONL_SUFFIXES + PARQUET_SUFFIXES
            )
            raise InputError(
                file=p,
                expected="a timing log (.jsonl, .parquet) or a LeRobot log (.log)",
                got=found_instead(p),
                fix="name the log files inside it"
                + (f": {', '.join(logs[:10])}" if logs else " (it holds none)"),
            )
        if suffix in LOG_SUFFIXES:
            lerobot.append(read_lerobot_log(p))
        elif suffix in JSONL_SUFFIXES + PARQUET_SUFFIXES:
            timing_paths.append(p)
        else:
            raise bad_field(
                p,
                "suffix",
                "a timing log (.jsonl, .parquet) or a LeRobot log (.log)",
                suffix or "no suffix",
                fix="rename the file with the suffix of its format",
            )
    timing = read_timing_logs(timing_paths, skip_bad_lines=skip_bad_lines) if timing_paths else None
    return timing, tuple(lerobot)
