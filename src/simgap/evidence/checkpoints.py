"""Checkpoint table reader for ``simgap rank``.

CSV with a header: ``checkpoint,sim_success,real_success[,sim_trials,real_trials,
offline_metric]``. Success columns are rates in [0, 1]; trial columns are integer counts
(the rate must be within 0.005 of a whole number of successes over the count, so
rates rounded to two places are accepted); ``offline_metric`` is any
number where lower is better (e.g. validation loss).
"""

from __future__ import annotations

import math
from pathlib import Path

from simgap.errors import InputError
from simgap.evidence.csv_table import read_csv_table
from simgap.values.checkpoints import CheckpointTable

REQUIRED = ("checkpoint", "sim_success", "real_success")
OPTIONAL = ("sim_trials", "real_trials", "offline_metric")


def _number(text: str, path: Path, field: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(file=path, field=field, expected="a number", got=text) from None
    if not math.isfinite(v):
        raise InputError(file=path, field=field, expected="a finite number", got=text)
    return v


def read_checkpoint_table(path: str | Path) -> CheckpointTable:
    """Read and validate the checkpoint CSV.

    Raises:
        InputError: a missing or unknown column, a rate outside [0, 1], a non-integer or
            non-positive trial count, a rate that is not a whole number of successes out of
            its trials (or more successes than trials), a checkpoint listed twice, or an
            empty cell. Each names the row and column.
    """
    path = Path(path)
    cols, rows = read_csv_table(path, what="a checkpoint CSV", fix="pass the rank table")
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise InputError(
            file=path,
            field=missing[0],
            expected="a CSV with columns " + ",".join(REQUIRED) + "[," + ",".join(OPTIONAL) + "]",
            got="columns: " + ",".join(cols) if cols else "an empty file",
        )
    unknown = [c for c in cols if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError(
            file=path,
            field=unknown[0],
            expected="a known column",
            got=unknown[0],
            fix="use: " + ", ".join(REQUIRED + OPTIONAL),
        )
    names: list[str] = []
    data: dict[str, list[float]] = {c: [] for c in REQUIRED[1:] + OPTIONAL}
    for i, r in enumerate(rows):
        row = i + 2  # 1-based, after the header
        name = r["checkpoint"]
        if not name:
            raise InputError(
                file=path,
                field=f"checkpoint (row {row})",
                expected="a checkpoint name",
                got="an empty cell",
            )
        if name in names:
            raise InputError(
                file=path,
                field=f"checkpoint (row {row})",
                expected="each checkpoint listed once",
                got=f"{name!r} listed twice (rows {names.index(name) + 2} and {row})",
                fix="remove or merge the duplicate row",
            )
        names.append(name)
        for c in REQUIRED[1:] + OPTIONAL:
            if c not in cols:
                continue
            cell = r.get(c, "")
            f = f"{c} (row {row}, checkpoint {name})"
            if cell == "":
                raise InputError(file=path, field=f, expected="a value", got="an empty cell")
            v = _number(cell, path, f)
            if c.endswith("_success") and not 0.0 <= v <= 1.0:
                raise InputError(
                    file=path,
                    field=f,
                    expected="a success rate in [0, 1]",
                    got=cell,
                    fix="give a fraction (e.g. 0.8), not a percentage "
                    "or a count; counts go in sim_trials/real_trials",
                )
            if c.endswith("_trials") and (v != int(v) or v < 1):
                raise InputError(
                    file=path, field=f, expected="a positive whole number of trials", got=cell
                )
            data[c].append(v)
    for side in ("sim", "real"):
        if f"{side}_trials" not in cols:
            continue
        for i, (rate, n) in enumerate(
            zip(data[f"{side}_success"], data[f"{side}_trials"], strict=True)
        ):
            k = rate * n
            if abs(rate - round(k) / n) > 0.005 + 1e-9:  # rates may be rounded to 2 places
                f = f"{side}_success (row {i + 2}, checkpoint {names[i]})"
                raise InputError(
                    file=path,
                    field=f,
                    expected=f"a whole number of successes out of {side}_trials = {int(n)}",
                    got=f"{rate} x {int(n)} = {k:g}",
                    fix="give the rate as successes / trials to full precision",
                )
    return CheckpointTable(
        checkpoints=tuple(names),
        sim=tuple(data["sim_success"]),
        real=tuple(data["real_success"]),
        sim_trials=tuple(int(v) for v in data["sim_trials"]) if "sim_trials" in cols else None,
        real_trials=tuple(int(v) for v in data["real_trials"]) if "real_trials" in cols else None,
        offline_metric=tuple(data["offline_metric"]) if "offline_metric" in cols else None,
        source=path,
    )
