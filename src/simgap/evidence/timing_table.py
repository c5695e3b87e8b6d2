"""A timing log as an Arrow table (a Parquet file, or JSON Lines read whole by Arrow): its
columns (a ``stages`` struct, or flat ``stages.<name>`` columns) checked and read; and the
Parquet reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from simgap.evidence.timing_check import bad_field


def table_columns(
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
            raise bad_field(
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
            raise bad_field(path, key, "integers" if key != "t" else "numbers", str(typ))
        if col.null_count:
            raise bad_field(path, key, "a value in every row", f"{col.null_count} empty rows")
        base[key] = np.asarray(col.to_numpy(), dtype=float if key == "t" else np.int64)
    if not np.all(np.isfinite(base["t"])):
        bad = int(np.argmax(~np.isfinite(base["t"])))
        raise bad_field(path, f"row {bad}: t", "a finite tick start [s]", base["t"][bad])
    cols: dict[str, np.ndarray] = {}
    if "stages" in names:
        struct = table.column("stages").combine_chunks()
        if not pa.types.is_struct(struct.type):
            raise bad_field(path, "stages", "a struct column of stage durations", str(struct.type))
        parts = [
            (struct.type.field(i).name, struct.field(i)) for i in range(struct.type.num_fields)
        ]
        outer_null = np.asarray(struct.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if from_json and outer_null.any():
            raise bad_field(path, "stages", "an object of stage durations in every line", "null")
    else:
        parts = [
            (c[len("stages.") :], table.column(c).combine_chunks())
            for c in names
            if c.startswith("stages.")
        ]
        outer_null = np.zeros(table.num_rows, dtype=bool)
    if not parts and not from_json:
        raise bad_field(
            path,
            "stages",
            "a 'stages' struct column or 'stages.<name>' columns",
            f"columns {', '.join(names)}",
        )
    for name, arr in parts:
        typ = arr.type
        if not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_null(typ)):
            raise bad_field(path, f"stages.{name}", "durations in seconds (numbers)", str(typ))
        null = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool) | outer_null
        vals = np.array(
            arr.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=float
        )  # a writable copy
        nan = np.isnan(vals) & ~null
        if nan.any():
            raise bad_field(
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


def parse_parquet(path: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise bad_field(path, "file", "a Parquet file", str(e)[:300]) from e
    return table_columns(table, path)
