"""Timing-log readers: JSON Lines or Parquet, one record per control tick -> StageTimes.

The format (a public contract, see ``docs/latency.md``)::

    {"episode": 0, "step": 0, "t": 12.3401, "stages": {"camera": 0.018, "inference": 0.031}}

``episode`` and ``step`` are integers, ``t`` is the tick start on a monotonic clock [s],
``stages`` maps free stage names to durations [s]; a Parquet file has the same fields (a
``stages`` struct column, or flat ``stages.<name>`` columns). Bad input is refused with an
error that names the line (or row); ticks out of order and stages missing in some ticks are
accepted with a warning that counts them.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, found_instead
from simgap.evidence._checks import MAX_INDEX, check_stage_values
from simgap.rig import Rig
from simgap.series import StageTimes
from simgap.validate import check_input_file, read_text

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_SUFFIXES = (".parquet", ".pq")
_FIX_FORMAT = (
    'write one object per tick: {"episode": int, "step": int, "t": seconds, '
    '"stages": {name: seconds}} (see docs/latency.md)'
)


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


def _bad(
    path: Path,
    where: str,
    expected: str,
    got: object,
    fix: str = _FIX_FORMAT,
) -> InputError:
    return InputError(file=path, field=where, expected=expected, got=got, fix=fix)


def _parse_jsonl(
    path: Path,
    notes: list[str] | None = None,
    skip_bad_lines: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Columns of a JSON Lines log: (episode/step/t, stages with NaN where absent, line no).

    A last line that is not JSON and has no newline after it is what a logger killed
    mid-write leaves: it is dropped and ``notes`` says so. Any other broken line is an error
    unless ``skip_bad_lines``, which drops every line that is not a JSON object and counts
    them in ``notes``.
    """
    eps: list[int] = []
    steps: list[int] = []
    ts: list[float] = []
    lines: list[int] = []
    stage_rows: dict[str, list[int]] = {}
    stage_vals: dict[str, list[float]] = {}
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        raws = list(fh)
    numbered = [(i, raw.strip()) for i, raw in enumerate(raws, start=1) if raw.strip()]
    # Cut off: the file ends inside its last line (no newline after it).
    last = numbered[-1][0] if numbered and not raws[-1].endswith("\n") else -1
    skipped: list[int] = []
    for lineno, text in numbered:
        try:
            rec = json.loads(text)
        except (json.JSONDecodeError, RecursionError, ValueError) as e:
            if lineno == last or skip_bad_lines:
                skipped.append(lineno)
                continue
            shown = text if len(text) <= 60 else text[:57] + "..."
            raise _bad(
                path,
                f"line {lineno}",
                "one JSON object per line",
                f"text that is not JSON ({getattr(e, 'msg', type(e).__name__)}): {shown!r}",
                fix="repair or delete the line, or pass --skip-bad-lines to drop "
                "every line that is not JSON (they are counted)",
            ) from None
        if not isinstance(rec, dict):
            if skip_bad_lines:
                skipped.append(lineno)
                continue
            raise _bad(path, f"line {lineno}", "a JSON object", type(rec).__name__)
        row = len(ts)
        for key, dst in (("episode", eps), ("step", steps)):
            v = rec.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_INDEX:
                raise _bad(
                    path, f"line {lineno}: {key}", "an integer", "nothing" if v is None else repr(v)
                )
            dst.append(v)
        t = rec.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise _bad(
                path,
                f"line {lineno}: t",
                "the tick start in seconds (a finite number)",
                "nothing" if t is None else repr(t),
            )
        ts.append(float(t))
        lines.append(lineno)
        stages = rec.get("stages")
        if not isinstance(stages, dict):
            raise _bad(
                path,
                f"line {lineno}: stages",
                "an object of stage durations",
                "nothing" if stages is None else repr(stages)[:60],
            )
        for name, v in stages.items():
            if v is None:
                continue  # an explicit null counts as a missing stage
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise _bad(
                    path, f"line {lineno}: stages.{name}", "a duration in seconds", repr(v)[:60]
                )
            if name not in stage_rows:
                stage_rows[name], stage_vals[name] = [], []
            stage_rows[name].append(row)
            stage_vals[name].append(float(v))
    notes = notes if notes is not None else []
    if skipped == [last]:
        notes.append(
            f"{path.name}: the last line ({last}) is cut off, as a logger stopped "
            "mid-write leaves it; dropped 1 line"
        )
    elif skipped:
        shown = ", ".join(map(str, skipped[:5])) + (", ..." if len(skipped) > 5 else "")
        notes.append(
            f"{path.name}: dropped {len(skipped)} line(s) that are not JSON objects (lines {shown})"
        )
    n = len(ts)
    cols: dict[str, np.ndarray] = {}
    for name, rows in stage_rows.items():
        arr = np.full(n, np.nan)
        vals = np.asarray(stage_vals[name], dtype=float)
        nan = np.isnan(vals)
        if nan.any():
            first = lines[rows[int(np.argmax(nan))]]
            raise _bad(
                path,
                f"line {first}: stages.{name}",
                "a duration in seconds",
                f"NaN ({int(nan.sum())} NaN durations of '{name}' in all)",
                fix="log a number, or leave the stage out of ticks that lack it",
            )
        arr[np.asarray(rows, dtype=np.int64)] = vals
        cols[name] = arr
    base = {
        "episode": np.asarray(eps, dtype=np.int64),
        "step": np.asarray(steps, np.int64),
        "t": np.asarray(ts, dtype=float),
    }
    return base, cols, np.asarray(lines, dtype=np.int64)


def _table_columns(
    table: Any,
    path: Path,
    *,
    from_json: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Columns of an Arrow table with the timing-log fields (Parquet, or JSON read by Arrow).

    ``from_json`` also refuses a null ``stages`` object, as the line-by-line reader does.
    """
    import pyarrow as pa

    names = table.column_names
    base: dict[str, np.ndarray] = {}
    for key in ("episode", "step", "t"):
        if key not in names:
            raise _bad(
                path,
                key,
                "this column",
                "nothing",
                fix=f"add a '{key}' column; columns present: {', '.join(names)}",
            )
        col = table.column(key)
        typ = col.type
        ok = pa.types.is_integer(typ) or (key == "t" and pa.types.is_floating(typ))
        if not ok:
            raise _bad(path, key, "integers" if key != "t" else "numbers", str(typ))
        if col.null_count:
            raise _bad(path, key, "a value in every row", f"{col.null_count} empty rows")
        base[key] = np.asarray(col.to_numpy(), dtype=float if key == "t" else np.int64)
    if not np.all(np.isfinite(base["t"])):
        bad = int(np.argmax(~np.isfinite(base["t"])))
        raise _bad(path, f"row {bad}: t", "a finite tick start [s]", base["t"][bad])
    cols: dict[str, np.ndarray] = {}
    if "stages" in names:
        struct = table.column("stages").combine_chunks()
        if not pa.types.is_struct(struct.type):
            raise _bad(path, "stages", "a struct column of stage durations", str(struct.type))
        parts = [
            (struct.type.field(i).name, struct.field(i)) for i in range(struct.type.num_fields)
        ]
        outer_null = np.asarray(struct.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if from_json and outer_null.any():
            raise _bad(path, "stages", "an object of stage durations in every line", "null")
    else:
        parts = [
            (c[len("stages.") :], table.column(c).combine_chunks())
            for c in names
            if c.startswith("stages.")
        ]
        outer_null = np.zeros(table.num_rows, dtype=bool)
    if not parts and not from_json:
        raise _bad(
            path,
            "stages",
            "a 'stages' struct column or 'stages.<name>' columns",
            f"columns {', '.join(names)}",
        )
    for name, arr in parts:
        typ = arr.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_null(typ)):
            raise _bad(path, f"stages.{name}", "durations in seconds (numbers)", str(typ))
        null = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool) | outer_null
        vals = np.array(
            arr.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=float
        )  # a writable copy
        nan = np.isnan(vals) & ~null
        if nan.any():
            raise _bad(
                path,
                f"row {int(np.argmax(nan))}: stages.{name}",
                "a duration in seconds",
                f"NaN ({int(nan.sum())} NaN durations in all)",
                fix="log a number, or a null where the tick lacks the stage",
            )
        vals[null] = np.nan
        if np.isnan(vals).all():
            continue  # a stage that is null everywhere was never measured
        cols[name] = vals
    return base, cols, np.arange(table.num_rows, dtype=np.int64)


def _parse_parquet(path: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise _bad(path, "file", "a Parquet file", str(e)[:300]) from e
    return _table_columns(table, path)


def _read_jsonl_fast(path: Path) -> tuple[StageTimes, list[str]] | None:
    """Arrow's multithreaded JSON reader for well-formed logs; None sends the file to the
    line-by-line reader, which names the offending line of any problem."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        table = pj.read_json(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError):
        return None
    if table.num_rows == 0:
        return None
    try:
        base, cols, rows = _table_columns(table, path, from_json=True)
        return _check(path, base, cols, rows, "line")
    except InputError:
        return None


def _check(
    path: Path,
    base: dict[str, np.ndarray],
    cols: dict[str, np.ndarray],
    rows: np.ndarray,
    unit: str,
) -> tuple[StageTimes, list[str]]:
    """Refuse negative durations and repeated ticks; sort and count the oddities."""
    n = base["t"].shape[0]
    if n == 0:
        raise InputError(
            file=path,
            expected="at least one tick",
            got="an empty log",
            fix="run the instrumented loop (simgap.LoopTimer) and pass the log it wrote",
        )
    if not cols:
        raise InputError(
            file=path,
            field="stages",
            expected="at least one stage duration",
            got=f"{n} ticks without any",
            fix=_FIX_FORMAT,
        )
    check_stage_values(path, base, cols, rows, unit)
    for name, arr in cols.items():
        neg = arr < 0
        if neg.any():
            i = int(np.argmax(neg))
            raise _bad(
                path,
                f"{unit} {rows[i]}: stages.{name}",
                "a duration >= 0 s",
                f"{arr[i]!r} ({int(neg.sum())} negative durations of '{name}' in all)",
                fix="durations are end minus start on a monotonic clock "
                "(time.perf_counter), never a wall clock",
            )
    notes: list[str] = []
    key = base["episode"] * (int(base["step"].max()) + 1) + base["step"]
    order = np.lexsort((base["step"], base["episode"]))
    unsorted = int(np.count_nonzero(np.diff(key) < 0))
    if unsorted:
        notes.append(
            f"{path.name}: {unsorted} of {n} ticks out of order by (episode, step); "
            "sorted before analysis"
        )
    skey = key[order]
    dup = np.flatnonzero(np.diff(skey) == 0)
    if dup.size:
        a, b = rows[order[dup[0]]], rows[order[dup[0] + 1]]
        raise _bad(
            path,
            f"{unit}s {a} and {b}",
            "each (episode, step) once",
            f"{dup.size} repeated ticks, first episode {base['episode'][order[dup[0]]]} "
            f"step {base['step'][order[dup[0]]]}",
            fix="write each run to its own file (LoopTimer overwrites unless "
            "append=True) and pass the files together",
        )
    t_sorted = base["t"][order]
    ep_sorted = base["episode"][order]
    back = int(np.count_nonzero((np.diff(t_sorted) < 0) & (np.diff(ep_sorted) == 0)))
    if back:
        notes.append(
            f"{path.name}: t runs backwards at {back} ticks within an episode; "
            "tick intervals there are not used"
        )
    stages = {k: v[order] for k, v in cols.items()}
    for name, arr in stages.items():
        miss = int(np.count_nonzero(np.isnan(arr)))
        if miss:
            notes.append(
                f"{path.name}: stage '{name}' missing in {miss} of {n} ticks; their totals omit it"
            )
    times = StageTimes(
        t=t_sorted, episode=ep_sorted, step=base["step"][order], stages=stages, source=str(path)
    )
    return times, notes


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
        base, cols, rows = _parse_parquet(path)
        unit = "row"
    elif suffix in JSONL_SUFFIXES:
        read_text(path, "a timing log (UTF-8 JSON Lines)")  # Latin-1 or UTF-16: refused
        fast = _read_jsonl_fast(path)
        if fast is not None:
            times, notes = fast
            for note in notes:
                warnings.warn(note, TimingLogWarning, stacklevel=2)
            return TimingLog(times=times, warnings=tuple(notes), files=(str(path),))
        base, cols, rows = _parse_jsonl(path, dropped, skip_bad_lines)
        unit = "line"
    else:
        raise _bad(
            path,
            "suffix",
            f"one of {', '.join(JSONL_SUFFIXES + PARQUET_SUFFIXES)}",
            suffix or "no suffix",
            fix="name the log .jsonl (JSON Lines) or .parquet",
        )
    times, notes = _check(path, base, cols, rows, unit)
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
            raise _bad(
                p,
                "suffix",
                "a timing log (.jsonl, .parquet) or a LeRobot log (.log)",
                suffix or "no suffix",
                fix="rename the file with the suffix of its format",
            )
    timing = read_timing_logs(timing_paths, skip_bad_lines=skip_bad_lines) if timing_paths else None
    return timing, tuple(lerobot)
