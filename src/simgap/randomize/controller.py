"""The controller branch's randomisation entries: the gains an implicated controller fit
identified."""

from __future__ import annotations

import numpy as np

from simgap.figures.controller import GainsFigures, SimplerDetails, SimplerFigures
from simgap.finding import Verdict
from simgap.randomize.draft import Draft
from simgap.values.randomization import Entry


def controller_entries(draft: Draft) -> list[Entry]:
    """kp and kv from the controller fit, pinned only when that fit is implicated (it
    explained the logged motion) and only over the joints where it identified them: an
    inconclusive fit or an unidentifiable gain leaves the model's value alone (SIMPLER's
    fit names what it identified; the joint dynamics' gains are identified ones only). A
    gain an earlier builder pinned (the actuator's) is left to it."""
    taken = {e.name for e in draft.earlier}
    found = [
        f
        for f in draft.diagnosis.by_branch("controller")
        if f.verdict is Verdict.IMPLICATED and f.kind in (SimplerFigures.kind, GainsFigures.kind)
    ]
    if not found:
        return []
    f = found[0]
    if f.kind == SimplerFigures.kind:
        params = f.typed(SimplerFigures).params
        ident = f.typed_details(SimplerDetails).identified
    else:
        params = f.typed(GainsFigures).params
        ident = {j: {k: True for k in p} for j, p in params.items()}
    out: list[Entry] = []
    for kind in ("kp", "kv"):
        vals = {
            j: float(p[kind])
            for j, p in params.items()
            if kind in p and ident.get(j, {}).get(kind, False)
        }
        if vals and kind not in taken:
            per = ", ".join(f"{j} {v:.4g}" for j, v in vals.items())
            out.append(
                Entry(
                    kind,
                    "pinned",
                    "fitted",
                    value=float(np.median(list(vals.values()))),
                    target=".*",
                    note=f"median of the controller fit over the joints "
                    f"where it was identified ({per})",
                )
            )
    return out
