"""Randomisation from a fleet: pin the fleet's centre, range over the measured spread.

One arm's diagnosis can pin what it identified, but the variation from one arm to the next
is exactly what one arm cannot show, so ``simgap randomize`` on a single diagnosis falls
back to Peng et al.'s default spans for it. A fleet measures it: every parameter the arms
identified gets

- an entry ``<param>.<joint>`` (e.g. ``kp.elbow_flex``): a range that holds 95 % of units
  with about 95 % confidence (``ParamSpread.cover``: the fleet's centre +- 1.96 times the
  upper end of the unit-to-unit spread's interval plus the centre's own uncertainty, from the
  random-effects fit of ``simgap.fleet.aggregate``; flagged arms left out and named);
- the global entries the exporters read: ``kp``, ``kv`` pinned to the median over joints of
  the fleet's centres, ``servo_delay_s`` a range over the joints' delay ranges, and
  ``unit_gain_scale`` / ``joint_damping_scale`` the widest joint's range of kp / kv about its
  centre, as a scale.

Every such entry is ``measured`` and its note says across how many units. Entries the
fleet does not inform (latency, contact, link masses) come from the first arm's diagnosis,
as ``simgap randomize`` would write them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from simgap.branches.ladder_list import entry_builders
from simgap.errors import InputError
from simgap.finding import Diagnosis
from simgap.fleet.aggregate import FleetSummary, ParamSpread
from simgap.randomize import build_spec
from simgap.values.randomization import Entry, RandomizationSpec

REPLACED = ("kp", "kv", "kp_scale", "servo_delay_s", "unit_gain_scale", "joint_damping_scale")
"""Entries of a one-arm spec that a fleet's measurement replaces."""


def _measured(p: ParamSpread) -> bool:
    return p.cover is not None and p.centre is not None and p.tau is not None


def _note(p: ParamSpread) -> str:
    assert p.centre is not None and p.tau is not None and p.tau_interval is not None
    scale = "relative, log scale" if p.scale == "log" else p.unit
    flagged = ", ".join(o.arm for o in p.outliers)
    left = f"; left out as outliers: {flagged}" if flagged else ""
    return (
        f"measured across {p.n} units: fleet centre {p.centre:.4g} {p.unit}, unit-to-unit "
        f"spread tau {p.tau:.3g} ({scale}; 95% {p.tau_interval[0]:.3g} to "
        f"{p.tau_interval[1]:.3g}); range = 95% of units with 95% confidence "
        f"(tau's upper end){left}"
    )


def _per_joint(p: ParamSpread) -> Entry:
    assert p.cover is not None
    lo = max(p.cover[0], 0.0) if p.scale == "log" else p.cover[0]
    return Entry(
        f"{p.param}.{p.joint}",
        "range",
        "measured",
        low=float(lo),
        high=float(p.cover[1]),
        distribution="log_uniform" if p.scale == "log" and lo > 0 else "uniform",
        target=p.joint,
        note=_note(p),
    )


def _scale(name: str, ps: Sequence[ParamSpread], what: str) -> Entry | None:
    """A scale range about the pinned centre covering every joint's range of ``ps``."""
    rel = [
        (p.joint, p.n, p.cover[0] / p.centre, p.cover[1] / p.centre)
        for p in ps
        if p.cover is not None and p.centre is not None and p.centre > 0
    ]
    if not rel:
        return None
    lo = min(r[2] for r in rel)
    hi = max(r[3] for r in rel)
    n = min(r[1] for r in rel)
    per = ", ".join(f"{j} x{a:.3g}..x{b:.3g}" for j, _, a, b in rel)
    return Entry(
        name,
        "range",
        "measured",
        low=float(max(lo, 1e-9)),
        high=float(hi),
        distribution="log_uniform",
        target=".*",
        note=f"unit-to-unit variation of {what}, measured across {n} units: the "
        f"widest joint's 95% prediction interval about its fleet centre "
        f"({per})",
    )


def fleet_entries(summary: FleetSummary) -> list[Entry]:
    """The measured entries of a fleet (see the module docstring)."""
    act = [p for p in summary.params if p.branch == "actuator" and _measured(p)]
    ctl = [p for p in summary.params if p.branch == "controller" and _measured(p)]
    out = [_per_joint(p) for p in act + ctl]
    by: dict[str, list[ParamSpread]] = {}
    for p in act + ctl:  # actuator first: it wins a name both identify
        by.setdefault(p.param, [])
        if all(q.joint != p.joint for q in by[p.param]):
            by[p.param].append(p)
    for name in ("kp", "kv"):
        ps = by.get(name, [])
        if ps:
            centres = [float(p.centre) for p in ps if p.centre is not None]
            n = min(p.n for p in ps)
            out.append(
                Entry(
                    name,
                    "pinned",
                    "measured",
                    value=float(np.median(centres)),
                    target=".*",
                    note=f"median over joints of the fleet centre, measured across "
                    f"{n} units (" + ", ".join(f"{p.joint} {p.centre:.4g}" for p in ps) + ")",
                )
            )
    delays = by.get("delay_s", [])
    if delays:
        lo = min(max(p.cover[0], 0.0) for p in delays if p.cover)
        hi = max(p.cover[1] for p in delays if p.cover)
        out.append(
            Entry(
                "servo_delay_s",
                "range",
                "measured",
                low=float(lo),
                high=float(hi),
                target=".*",
                note=f"command transport delay, measured across "
                f"{min(p.n for p in delays)} units: the union of every joint's "
                f"range of 95% of units (95% confidence)",
            )
        )
    for name, param in (("unit_gain_scale", "kp"), ("joint_damping_scale", "kv")):
        e = _scale(
            name,
            by.get(param, []) or (by.get("damping", []) if param == "kv" else []),
            param if by.get(param) else "damping",
        )
        if e is not None:
            out.append(e)
    return out


def fleet_spec(summary: FleetSummary, base: Diagnosis, name: str = "fleet") -> RandomizationSpec:
    """The randomisation spec of a fleet: the base arm's spec (its branches' entries) with
    every entry the fleet measured replaced by the fleet's (``REPLACED`` and the per-joint
    entries)."""
    spec = build_spec(base, entry_builders())
    measured = fleet_entries(summary)
    names = {e.name for e in measured}
    kept = [e for e in spec.entries if e.name not in names]
    return replace(spec, rig=name, entries=tuple(kept + measured))


def load_fleet_spec(fleet_dir: str | Path) -> tuple[RandomizationSpec, Path | None]:
    """The spec of a fleet folder written by ``simgap fleet`` (re-aggregated from each
    arm's ``findings.json``) and the first arm's model (the base of MuJoCo variants).

    Raises:
        InputError: the folder has no ``fleet.json``, or no arm has findings.
    """
    from simgap.fleet.jobs import FLEET_FILE
    from simgap.fleet.summary import summarise_folder

    d = Path(fleet_dir)
    if not (d / FLEET_FILE).is_file():
        one = d / "findings.json"  # one arm's 'simgap diagnose' folder
        raise InputError(
            file=d,
            field=FLEET_FILE,
            expected="a fleet folder written by 'simgap fleet'",
            got=f"no {FLEET_FILE}" + (", a diagnosis folder" if one.is_file() else ""),
            fix=f"pass the diagnosis's findings file, {one}"
            if one.is_file()
            else "run 'simgap fleet RIG... --out DIR' and pass DIR",
        )
    summary, first, rig = summarise_folder(d)
    model = None
    if rig:
        from simgap.rig import load_rig

        try:
            model = load_rig(rig).model_path
        except InputError:
            model = None
    return fleet_spec(summary, first, name=d.name), model
