"""What the report says first: each finding's key number against its threshold, in words.

The report opens with the answer to "what do I fix first?": the cheapest implicated finding
(the ladder's order is its cost order), its key number against the threshold that implicated
it, and its next step; then the other implicated findings in the same order. Everything here
reads a finding's JSON form (``Finding.to_dict``) and tolerates missing keys: a finding written
by an older or newer simgap still gets a line, the plain key figure when nothing better is known.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from simgap.figures.base import Headline, sig
from simgap.figures.phases import PhasesFigures
from simgap.figures.registry import figures_type
from simgap.finding import figures_of

RANK = {"implicated": 0, "inconclusive": 1, "eliminated": 2, "not_measured": 3}

_SUFFIX_UNITS = (
    ("_fraction", "%"),
    ("_ratio", "x"),
    ("_rad_s", "rad/s"),
    ("_deg_s", "deg/s"),
    ("_rad", "rad"),
    ("_deg", "deg"),
    ("_px", "px"),
    ("_hz", "Hz"),
    ("_kg", "kg"),
    ("_ms", "ms"),
    ("_m", "m"),
    ("_s", "s"),
    ("_c", "C"),
)
_UNIT_SUFFIX = {
    "s": "_s",
    "rad": "_rad",
    "deg": "_deg",
    "m": "_m",
    "px": "_px",
    "Hz": "_hz",
    "kg": "_kg",
    "rad/s": "_rad_s",
    "deg/s": "_deg_s",
    "ms": "_ms",
}
"""A declared unit, as the name suffix whose formatting it takes."""


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a truth value (Python's or numpy's), never a number here."""
    return isinstance(value, (bool, np.bool_))


def yes_no(value: Any) -> str:
    """A truth value as the report prints it: "yes" or "no", never Python's True/False."""
    return "yes" if value else "no"


def with_unit(name: str, value: Any, unit: str | None = None) -> str:
    """A figure's value with its unit: the declared ``unit`` where the figure is typed, else
    the one its name carries (``total_p95_s`` -> "91.7 ms"); a truth value in words
    (``loopback`` True -> "yes")."""
    if is_bool(value):
        return yes_no(value)
    if not isinstance(value, (int, float)):
        return str(value)
    v = float(value)
    plain = str(value) if isinstance(value, int) else sig(v)
    if unit is not None and not name.endswith(("_fraction", "_ratio")):
        if unit not in _UNIT_SUFFIX:
            return plain if unit in ("1", "") else f"{plain} {unit}"
        name = f"value{_UNIT_SUFFIX[unit]}"
    for suffix, suffix_unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            if suffix_unit == "%":
                return f"{sig(100 * v)}%"
            if suffix_unit == "s" and abs(v) < 1:
                return f"{sig(v * 1e3)} ms"
            if suffix_unit == "x":
                return f"{sig(v)}x"
            return f"{sig(v)} {suffix_unit}"
    return plain


def shown_unit(unit: Any) -> str:
    """A residual's unit as printed after a number: none for a plain number (the schema's
    unitless ``"1"``, e.g. SIMPLER's pose loss) or a missing unit, else the unit."""
    return "" if unit is None or str(unit) in ("", "1") else str(unit)


def _bare(name: str) -> str:
    """A figure's name without its unit suffix (``max_distance_deg`` -> ``max_distance``)."""
    for suffix, _ in _SUFFIX_UNITS:
        if name.endswith(suffix) and suffix not in ("_fraction", "_ratio"):
            return name[: -len(suffix)]
    return name


KeyLine = Headline
"""One finding's key number in words (the figures' own :class:`Headline`)."""


def _num(d: Mapping[str, Any], key: str) -> float | None:
    v = d.get(key)
    return (
        float(v)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        else None
    )


def key_line(f: Mapping[str, Any]) -> KeyLine:
    """The finding's headline figure, the one the report's headline and cards and the
    terminal's summary print: by branch, its own headline (latency's p95 against the
    control period, contact's friction change, the camera's shift, the jaws' brightness, the
    largest joint zero offset, the actuator ladder's ideal -> fitted error, SIMPLER's pose
    loss: each record's ``headline()``), else residual against noise floor, else the plain
    key figure."""
    fig: Mapping[str, Any] = f.get("figures") or {}
    branch = str(f.get("branch", ""))
    ftype = figures_type(branch, str(f.get("kind") or ""))
    if ftype is not None and fig:
        own = ftype.from_mapping(fig, strict=False).headline()
        if own is not None:
            return own
    res, nf = f.get("residual"), f.get("noise_floor")
    unit = f" {shown_unit(f.get('residual_unit'))}".rstrip()
    if isinstance(res, (int, float)) and isinstance(nf, (int, float)):
        return KeyLine(
            f"residual {sig(float(res))}{unit} against the noise floor {sig(float(nf))}{unit}",
            float(res),
            float(nf),
        )
    key = f.get("key_figure")
    if isinstance(key, Mapping):  # schema 1: the name, its value and its unit
        name, value = str(key.get("name") or ""), key.get("value")
        declared = key.get("unit")
        if name and value is not None and not isinstance(value, (Mapping, list)):
            text = with_unit(name, value, None if declared is None else str(declared))
            return KeyLine(f"{_bare(name).replace('_', ' ')} {text}", _num(key, "value"), None)
        return KeyLine("")
    if key and key in fig and not isinstance(fig[key], (Mapping, list)):
        return KeyLine(
            f"{_bare(str(key)).replace('_', ' ')} {with_unit(str(key), fig[key])}",
            _num(fig, str(key)),
            None,
        )
    return KeyLine("")


def headline(
    findings: Sequence[Mapping[str, Any]], stop: Mapping[str, Any]
) -> tuple[Mapping[str, Any] | None, list[Mapping[str, Any]]]:
    """(the finding to fix first, the other implicated findings in ladder order)."""
    implicated = [f for f in findings if f.get("verdict") == "implicated"]
    if not implicated:
        return None, []
    first_branch = stop.get("branch")
    first = next((f for f in implicated if f.get("branch") == first_branch), implicated[0])
    return first, [f for f in implicated if f is not first]


def contradictions(findings: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Branches another finding calls eliminated while their own measurement implicates
    them: {branch: the note the report shows}."""
    implicated = {str(f.get("branch")) for f in findings if f.get("verdict") == "implicated"}
    notes: dict[str, str] = {}
    for f in findings:
        if f.get("branch") != PhasesFigures.branch or not f.get("figures"):
            continue
        for b in figures_of(f, PhasesFigures).eliminates:
            if str(b) in implicated:
                notes[str(b)] = (
                    f"The {f.get('branch')} finding points away from {b}, but "
                    f"{b}'s own measurement implicates it: the measurement wins, "
                    "the failure phase only says it is not what broke the "
                    "episodes."
                )
    return notes
