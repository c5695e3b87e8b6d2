"""A timing log in JSON Lines: parsed line by line (every error names its line), or read
whole by Arrow when it can."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.evidence._checks import MAX_INDEX
from simgap.evidence.timing_check import bad_field, check_ticks
from simgap.evidence.timing_table import table_columns
from simgap.series import StageTimes


def parse_jsonl(
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
            raise bad_field(
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
            raise bad_field(path, f"line {lineno}", "a JSON object", type(rec).__name__)
        row = len(ts)
        for key, dst in (("episode", eps), ("step", steps)):
            v = rec.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_INDEX:
                raise bad_field(
                    path, f"line {lineno}: {key}", "an integer", "nothing" if v is None else repr(v)
                )
            dst.append(v)
        t = rec.get("t")
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
            raise bad_field(
                path,
                f"line {lineno}: t",
                "the tick start in seconds (a finite number)",
                "nothing" if t is None else repr(t),
            )
        ts.append(float(t))
        lines.append(lineno)
        stages = rec.get("stages")
        if not isinstance(stages, dict):
            raise bad_field(
                path,
                f"line {lineno}: stages",
                "an object of stage durations",
                "nothing" if stages is None else repr(stages)[:60],
            )
        for name, v in stages.items():
            if v is None:
                continue  # an explicit null counts as a missing stage
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise bad_field(
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
            raise bad_field(
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


def read_jsonl_fast(path: Path) -> tuple[StageTimes, list[str]] | None:
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
        base, cols, rows = table_columns(table, path, from_json=True)
        return check_ticks(path, base, cols, rows, "line")
    except InputError:
        return None
