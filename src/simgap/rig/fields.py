"""The checks of one rig-file table or value: its keys against the schema, a pair, a
positive number, a list of numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig.schema import NUM, SCHEMA, SECTIONS


def check_section(
    data: Mapping[str, Any],
    section: str,
    schema_key: str,
    source: Path | None,
) -> None:
    schema = SCHEMA[schema_key]
    label = f"{section}." if section else ""
    for key, value in data.items():
        if key not in schema:
            if schema_key == "" and key in SECTIONS:
                continue
            valid = list(schema) + (list(SECTIONS) if schema_key == "" else [])
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected="a known key",
                got=f"unknown key '{label}{key}'",
                fix=f"remove it or use one of: {', '.join(sorted(valid))}",
            )
        types, _ = schema[key]
        if isinstance(value, bool) and bool not in types:
            ok = False
        else:
            ok = isinstance(value, types)
        if not ok:
            want = " or ".join(t.__name__ for t in types)
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected=want,
                got=f"{type(value).__name__} {value!r}",
            )
    for key, (_, required) in schema.items():
        if required and key not in data:
            raise InputError(
                file=source,
                field=f"{label}{key}",
                expected="this required key",
                got="nothing",
                fix=f"add '{key} = ...' to [{section or 'top level'}]",
            )


def pair(v: Any, source: Path | None, key: str) -> tuple[float, float]:
    if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, NUM) for x in v)):
        raise InputError(file=source, field=key, expected="a list of two numbers", got=v)
    lo, hi = float(v[0]), float(v[1])
    if not lo < hi:
        raise InputError(file=source, field=key, expected="[low, high] with low < high", got=v)
    return lo, hi


def positive(v: float, source: Path | None, key: str) -> float:
    if not (math.isfinite(v) and v > 0):
        raise InputError(file=source, field=key, expected="a positive number", got=v)
    return float(v)


def numbers_of(
    v: Any,
    n: tuple[int, ...],
    source: Path | None,
    key: str,
    what: str,
) -> tuple[float, ...]:
    if not (
        isinstance(v, list)
        and len(v) in n
        and all(isinstance(x, NUM) and not isinstance(x, bool) and math.isfinite(x) for x in v)
    ):
        raise InputError(file=source, field=key, expected=what, got=v)
    return tuple(float(x) for x in v)
