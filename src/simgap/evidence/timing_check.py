"""The checks of a parsed timing log, shared by its readers: each tick's fields and
stages, ticks in order, and the error that names the line or row."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.evidence._checks import check_stage_values
from simgap.series import StageTimes

FIX_FORMAT = (
    'write one object per tick: {"episode": int, "step": int, "t": seconds, '
    '"stages": {name: seconds}} (see docs/latency.md)'
)


def bad_field(
    path: Path,
    where: str,
    expected: str,
    got: object,
    fix: str = FIX_FORMAT,
) -> InputError:
    return InputError(file=path, field=where, expected=expected, got=got, fix=fix)


def check_ticks(
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
            fix=FIX_FORMAT,
        )
    check_stage_values(path, base, cols, rows, unit)
    for name, arr in cols.items():
        neg = arr < 0
        if neg.any():
            i = int(np.argmax(neg))
            raise bad_field(
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
        raise bad_field(
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
