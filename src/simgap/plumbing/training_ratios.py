"""The training audit's checks of a physical value against the measured one: finger
friction and object mass."""

from __future__ import annotations

import math

from simgap.finding import Finding
from simgap.plumbing.training_findings import (
    missing_keys,
    not_measured,
    provenance_of,
    training_finding,
)
from simgap.rig import Rig

FRICTION_BAND = (1 / 1.5, 1.5)


MASS_BAND = (0.5, 2.0)


def ratio_check(
    rig: Rig,
    title: str,
    check: str,
    tkey: str,
    tval: float | None,
    dkey: str,
    dval: float | None,
    band: tuple[float, float],
    unit: str,
    fix: str,
) -> Finding:
    miss = missing_keys(rig, [(tkey, tval), (dkey, dval)])
    if miss:
        return not_measured(title, check, miss, f"holding {tkey} against the measured value")
    assert tval is not None and dval is not None
    ratio = tval / dval if dval > 0 else math.inf
    bad = not band[0] <= ratio <= band[1]
    return training_finding(
        title,
        check,
        bad,
        f"Training used {tval:g}{unit}, the rig measures {dval:g}{unit} ({ratio:.3g}x).",
        fix,
        {"training": tval, "measured": dval, "ratio": ratio},
        "ratio",
        provenance_of(rig, tkey, dkey),
    )
