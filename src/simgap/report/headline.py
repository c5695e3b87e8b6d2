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
from dataclasses import dataclass
from typing import Any

import numpy as np

RANK = {"implicated": 0, "inconclusive": 1, "eliminated": 2, "not_measured": 3}

_SUFFIX_UNITS = (("_fraction", "%"), ("_ratio", "x"), ("_rad_s", "rad/s"), ("_deg_s", "deg/s"),
                 ("_rad", "rad"), ("_deg", "deg"), ("_px", "px"), ("_hz", "Hz"), ("_kg", "kg"),
                 ("_ms", "ms"), ("_m", "m"), ("_s", "s"), ("_c", "C"))


def sig(v: float, digits: int = 3) -> str:
    """``v`` with ``digits`` significant digits and no exponent for everyday magnitudes."""
    if not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-4:
        return f"{v:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    return f"{v:.{decimals}f}"


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a truth value (Python's or numpy's), never a number here."""
    return isinstance(value, (bool, np.bool_))


def yes_no(value: Any) -> str:
    """A truth value as the report prints it: "yes" or "no", never Python's True/False."""
    return "yes" if value else "no"


def with_unit(name: str, value: Any) -> str:
    """A figure's value with the unit its name carries (``total_p95_s`` -> "91.7 ms"); a
    truth value in words (``loopback`` True -> "yes")."""
    if is_bool(value):
        return yes_no(value)
    if not isinstance(value, (int, float)):
        return str(value)
    v = float(value)
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            if unit == "%":
                return f"{sig(100 * v)}%"
            if unit == "s" and abs(v) < 1:
                return f"{sig(v * 1e3)} ms"
            if unit == "x":
                return f"{sig(v)}x"
            return f"{sig(v)} {unit}"
    return str(value) if isinstance(value, int) else sig(v)


def _bare(name: str) -> str:
    """A figure's name without its unit suffix (``max_distance_deg`` -> ``max_distance``)."""
    for suffix, _ in _SUFFIX_UNITS:
        if name.endswith(suffix) and suffix not in ("_fraction", "_ratio"):
            return name[: -len(suffix)]
    return name


@dataclass(frozen=True)
class KeyLine:
    """One finding's key number in words.

    Attributes:
        text: e.g. "loop p95 91.7 ms against the control period 66.7 ms".
        value: the key number (its unit in ``text``), or None.
        threshold: what it was held against (same unit), or None when nothing was.
    """

    text: str
    value: float | None = None
    threshold: float | None = None


def _num(d: Mapping[str, Any], key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) \
        and math.isfinite(v) else None


def key_line(f: Mapping[str, Any]) -> KeyLine:
    """The finding's key number against its threshold, by branch (else residual against
    noise floor, else the plain key figure)."""
    fig: Mapping[str, Any] = f.get("figures") or {}
    branch = str(f.get("branch", ""))
    p95, dt = _num(fig, "total_p95_s"), _num(fig, "control_dt_s")
    if branch == "latency" and p95 is not None and dt is not None:
        over = _num(fig, "overrun_fraction")
        tail = f"; {sig(100 * over)}% of ticks overrun" if over is not None else ""
        return KeyLine(f"loop p95 {sig(p95 * 1e3)} ms against the control period "
                       f"{sig(dt * 1e3)} ms{tail}", p95 * 1e3, dt * 1e3)
    worst, floor = _num(fig, "worst_ideal_mae_rad"), _num(fig, "noise_floor_rad")
    if branch == "actuator" and worst is not None and floor is not None:
        return KeyLine(f"an ideal actuator misses by {sig(worst)} rad (worst joint, held out) "
                       f"against the encoder noise floor {sig(floor)} rad", worst, floor)
    off, jitter = _num(fig, "camera_offset_px"), _num(fig, "training_jitter_px")
    if off is not None:
        thr = f" against training's jitter {sig(jitter)} px" if jitter is not None else ""
        return KeyLine(f"camera view shifted {sig(off)} px{thr}", off, jitter)
    by_rec = fig.get("jaw_gain_by_recording")
    if isinstance(by_rec, Mapping) and by_rec:
        gains = ", ".join(f"{k} {sig(float(v))}" for k, v in by_rec.items()
                          if isinstance(v, (int, float)))
        return KeyLine(f"real jaws / rendered jaws brightness per recording: {gains} "
                       "(1 = match)", _num(fig, "jaw_gain"), 1.0)
    largest, joint = _num(fig, "largest_offset_deg"), fig.get("largest_offset_joint")
    if largest is not None:
        ci = (fig.get("joint_offsets_ci95_deg") or {}).get(joint) if joint else None
        half = f" +- {sig(float(ci))}" if isinstance(ci, (int, float)) else ""
        return KeyLine(f"largest joint zero offset {sig(largest)}{half} deg"
                       f"{f' ({joint})' if joint else ''}", largest, None)
    stale, checked = _num(fig, "stale_episodes"), _num(fig, "episodes_checked")
    if stale is not None and checked is not None:
        return KeyLine(f"{stale:.0f} of {checked:.0f} episodes start from a stale camera frame "
                       "(0 expected)", stale, 0.0)
    res, nf = f.get("residual"), f.get("noise_floor")
    unit = str(f.get("residual_unit") or "")
    if isinstance(res, (int, float)) and isinstance(nf, (int, float)):
        return KeyLine(f"residual {sig(float(res))} {unit} against the noise floor "
                       f"{sig(float(nf))} {unit}".replace("  ", " "), float(res), float(nf))
    key = f.get("key_figure")
    if key and key in fig and not isinstance(fig[key], (Mapping, list)):
        return KeyLine(f"{_bare(str(key)).replace('_', ' ')} {with_unit(str(key), fig[key])}",
                       _num(fig, str(key)), None)
    return KeyLine("")


def headline(findings: Sequence[Mapping[str, Any]], stop: Mapping[str, Any]
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
        elim = (f.get("figures") or {}).get("eliminates")
        if not isinstance(elim, (list, tuple)):
            continue
        for b in elim:
            if str(b) in implicated:
                notes[str(b)] = (f"The {f.get('branch')} finding points away from {b}, but "
                                 f"{b}'s own measurement implicates it: the measurement wins, "
                                 "the failure phase only says it is not what broke the "
                                 "episodes.")
    return notes
