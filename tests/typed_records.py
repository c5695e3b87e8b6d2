"""The check every typed record passes on a Finding its branch wrote: the figures (and
details) are the record, they survive findings.json's round trip, and a figure name the
record does not declare is refused, named."""

from __future__ import annotations

import copy
import json

import pytest

from simgap.errors import InputError
from simgap.figures.base import Record
from simgap.finding import Finding


def check_typed(f: Finding, figures: type[Record], details: type[Record] | None = None) -> None:
    """``f`` carries ``figures`` (and ``details``) and reads back equal from its JSON form
    (NaN-aware: both sides' JSON forms compared, NaN written as null)."""
    assert type(f.figures) is figures, (f.title, type(f.figures).__name__)
    assert f.kind == figures.kind
    d = json.loads(json.dumps(f.to_dict(), allow_nan=False))
    back = Finding.from_dict(d)
    assert type(back.figures) is figures
    assert back.figures.to_dict() == f.figures.to_dict()  # type: ignore[union-attr]
    assert back.to_dict() == d
    if details is not None:
        assert figures.kind in details.serves()
        assert type(f.details) is details and type(back.details) is details
        assert back.details.to_dict() == f.details.to_dict()  # type: ignore[union-attr]
    wrong = copy.deepcopy(d)
    wrong["figures"]["not_a_figure"] = 1.0
    with pytest.raises(InputError, match="not_a_figure"):
        Finding.from_dict(wrong)
