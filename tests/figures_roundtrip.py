"""Checks every typed figures record takes: the branch's Finding carries the record, its JSON
form reads back into an equal record, and an unknown figure name is refused naming it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from simgap.errors import InputError
from simgap.figures.base import Record
from simgap.finding import Finding


def same(a: Any, b: Any) -> bool:
    """Equal, NaN equal to NaN (records compared field by field)."""
    if isinstance(a, Record) and isinstance(b, Record):
        return type(a) is type(b) and all(same(getattr(a, k), getattr(b, k)) for k in a.to_dict())
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_round_trip(
    f: Finding, figures: type[Record], details: type[Record] | None = None
) -> None:
    """``f`` carries ``figures`` (and ``details``), reads back equal through JSON, and a
    finding JSON with an unknown figure name is refused naming it."""
    assert isinstance(f.figures, figures), type(f.figures)
    assert f.kind == figures.kind
    if details is not None:
        assert isinstance(f.details, details), type(f.details)
    d = json.loads(json.dumps(f.to_dict(), allow_nan=False))
    back = Finding.from_dict(d)
    assert same(back.figures, f.figures)
    assert same(back.details, f.details)
    d["figures"]["no_such_figure"] = 1.0
    with pytest.raises(InputError, match="no_such_figure"):
        Finding.from_dict(d)
