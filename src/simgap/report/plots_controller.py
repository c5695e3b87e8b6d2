"""Report plots of the controller branch: the end-effector translation error over the first
episode before and after the fit, and fitted against nominal gains per joint (identified
gains only: a gain the data cannot pin is not drawn as a number)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.figures.controller import SimplerDetails, SimplerFigures
from simgap.finding import details_of
from simgap.report.svg.bars import bars
from simgap.report.svg.lines import lines


def plots(finding: Mapping[str, Any]) -> list[str]:
    """The error trace; bars of kp and kv (fitted / nominal) per identified joint (SIMPLER's
    fit; the gains of the joint dynamics have no plot of their own)."""
    if str(finding.get("kind") or "") != SimplerFigures.kind:
        return []
    d = details_of(finding, SimplerDetails)
    out = []
    tr = d.traces
    if tr is not None and tr.t:
        out.append(
            lines(
                tr.t,
                {"nominal gains": tr.before_m, "fitted gains": tr.after_m},
                xlabel="time [s]",
                ylabel="EE translation error [m]",
                title="End-effector translation error, episode 1",
            )
        )
    best = d.methods.get(d.best)
    table = best.table if best is not None else {}
    for kind in ("kp", "kv"):
        rows = {
            n.rsplit(".", 1)[0]: r
            for n, r in table.items()
            if n.endswith("." + kind) and d.identified.get(n.rsplit(".", 1)[0], {}).get(kind, True)
        }
        if rows:
            out.append(
                bars(
                    list(rows),
                    {
                        "nominal": [r.nominal for r in rows.values()],
                        "fitted": [r.value for r in rows.values()],
                    },
                    xlabel="joint (identified gains only)",
                    ylabel=f"{kind} [model units]",
                    title=f"Position-actuator {kind} per joint",
                )
            )
    return out
