"""The randomisation spec: identify what you can instrument, randomise what you cannot.

From a diagnosis (``findings.json``) every identified parameter is pinned to its fitted
value; what cannot be instrumented gets a range: end-to-end latency (the control period
plus an exponential delay whose rate is fixed per episode and whose delay is redrawn every
step, Peng et al. 2018), unit-to-unit variation across arms and the object's mass between
batches. Where nothing was measured, Peng et al.'s Table I supplies the range, marked as a
default. Every entry states whether it was measured, fitted or defaulted, and a range is
never widened past the evidence without a note that says so.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from simgap.errors import InputError
from simgap.figures.base import finite
from simgap.figures.contact import ContactFigures, interval_text
from simgap.figures.controller import GainsFigures, SimplerDetails, SimplerFigures
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.figures.ladder import LadderFigures
from simgap.figures.latency import LatencyFigures
from simgap.finding import Diagnosis, Finding, Verdict, load_diagnosis
from simgap.values.randomization import Entry, RandomizationSpec

PENG_TABLE: dict[str, tuple[float, float]] = {
    "link_mass_scale": (0.25, 4.0),
    "joint_damping_scale": (0.2, 20.0),
    "object_mass_kg": (0.1, 0.4),
    "object_friction": (0.1, 5.0),
    "object_damping_ns_per_m": (0.01, 0.2),
    "table_height_m": (0.73, 0.77),
    "controller_gain_scale": (0.5, 2.0),
    "action_delay_rate_per_s": (125.0, 1000.0),
}
"""Peng, Andrychowicz, Zaremba, Abbeel 2018, Table I (arXiv:1710.06537)."""


def _finding(diag: Diagnosis, branch: str, kind: str = "") -> Finding | None:
    """The branch's first measured finding of ``kind``."""
    for f in diag.by_branch(branch):
        if f.kind == kind and f.verdict in (
            Verdict.IMPLICATED,
            Verdict.ELIMINATED,
            Verdict.INCONCLUSIVE,
        ):
            return f
    return None


def _latency(diag: Diagnosis) -> tuple[list[Entry], float | None]:
    found = _finding(diag, "latency")
    fig = found.typed(LatencyFigures) if found is not None else None
    dt = finite(fig.control_dt_s) if fig else None
    out: list[Entry] = []
    delay = fig.added_delay if fig else None
    lo = finite(delay.rate_per_s_min) if delay else None
    hi = finite(delay.rate_per_s_max) if delay else None
    if lo is not None and hi is not None and 0 < lo <= hi:
        out.append(
            Entry(
                "action_delay_rate_per_s",
                "range",
                "measured",
                low=lo,
                high=hi,
                resample="episode",
                note="rate of the exponential added delay, fixed per episode; the "
                "delay itself is redrawn every step. Range = the fitted range "
                "of the latency finding (figures.added_delay).",
            )
        )
    else:
        lo, hi = PENG_TABLE["action_delay_rate_per_s"]
        out.append(
            Entry(
                "action_delay_rate_per_s",
                "range",
                "defaulted",
                low=lo,
                high=hi,
                note="no latency fit: Peng et al. 2018 Table I default (mean added "
                "delay 1 to 8 ms); measure the loop and replace it.",
            )
        )
    if dt is not None:
        out.append(
            Entry(
                "control_dt_s",
                "pinned",
                "measured",
                value=dt,
                note="the control period the delay is added to",
            )
        )
    return out, dt


def _closed(
    iv: tuple[float | None, float | None] | None, value: float
) -> tuple[float, float] | None:
    """The 95 % interval ``iv`` when closed, positive and holding ``value``; else None."""
    lo, hi = (finite(iv[0]), finite(iv[1])) if iv is not None else (None, None)
    return (lo, hi) if lo is not None and hi is not None and 0 < lo <= value <= hi else None


def _pad_friction(fig: ContactFigures | None, pads: str) -> Entry:
    """The identified pad friction (randomised over its 95 % interval when the finding gives
    a closed one, else pinned), or Peng et al.'s default when the pushes identified none.

    ``friction_best`` first; where the pushes cannot pin the object's mass the contact branch
    leaves it empty and identifies ``friction_best_at_model_mass`` (its interval
    ``friction_interval_at_model_mass``), the friction at the model's mass."""
    found = fig.pad_friction() if fig is not None else None
    if fig is None or found is None:
        lo, hi = PENG_TABLE["object_friction"]
        return Entry(
            "pad_friction",
            "range",
            "defaulted",
            low=lo,
            high=hi,
            distribution="log_uniform",
            target=pads,
            note="no push logs fitted: Peng et al. 2018 default (puck friction)",
        )
    fr, interval, at_mass = found
    key, iv_key = (
        ("friction_best_at_model_mass", "friction_interval_at_model_mass")
        if at_mass
        else ("friction_best", "friction_interval")
    )
    iv = _closed(interval, fr)
    mass = finite(fig.mass_nominal)
    where = (
        "" if not at_mass else (f" at the model's object mass{f' ({mass:g} kg)' if mass else ''}")
    )
    caveat = (
        ""
        if not at_mass
        else (
            "; the pushes see friction x mass, so over the mass range they allow the friction "
            f"fits {interval_text(fig.friction_interval)}: weigh the object to pin it"
        )
    )
    if iv is None:
        return Entry(
            "pad_friction",
            "pinned",
            "fitted",
            value=fr,
            target=pads,
            note=f"identified from logged pushes ({key}){where}: pinned, not randomised{caveat}",
        )
    return Entry(
        "pad_friction",
        "range",
        "fitted",
        value=fr,
        low=iv[0],
        high=iv[1],
        target=pads,
        note=f"identified from logged pushes{where}: {fr:.3g}, 95 % interval "
        f"[{iv[0]:.3g}, {iv[1]:.3g}] ({key}, {iv_key}), randomised over "
        f"that interval{caveat}",
    )


def _contact(diag: Diagnosis, rig_object: str, pads: str) -> list[Entry]:
    found = _finding(diag, "contact")
    fig = found.typed(ContactFigures) if found is not None else None
    out: list[Entry] = [_pad_friction(fig, pads)]
    mass = finite(fig.mass_best) if fig else None
    nominal = finite(fig.mass_nominal) if fig else None
    if mass is not None:
        out.append(
            Entry(
                "object_mass_kg",
                "range",
                "defaulted",
                low=0.5 * mass,
                high=2.0 * mass,
                distribution="log_uniform",
                target=rig_object,
                note=f"centred on the fitted {mass:g} kg; the spread between batches "
                "was not measured, so a [0.5, 2] x span (narrower than Peng et "
                "al.'s 4x puck range) is a default: weigh a few parts to "
                "replace it.",
            )
        )
    elif nominal is not None:
        out.append(
            Entry(
                "object_mass_kg",
                "range",
                "defaulted",
                low=0.5 * nominal,
                high=2.0 * nominal,
                distribution="log_uniform",
                target=rig_object,
                note=f"the pushes did not identify the mass (friction x mass are "
                f"confounded in a quasi-static push): a [0.5, 2] x span about the "
                f"model's {nominal:g} kg is a default; weigh the parts.",
            )
        )
    else:
        lo, hi = PENG_TABLE["object_mass_kg"]
        out.append(
            Entry(
                "object_mass_kg",
                "range",
                "defaulted",
                low=lo,
                high=hi,
                distribution="log_uniform",
                target=rig_object,
                note="no mass fitted: Peng et al. 2018 default (puck mass)",
            )
        )
    return out


def _median(vals: list[float]) -> float | None:
    """The median the ladder's docstring promises (the upper one of an even count)."""
    return sorted(vals)[len(vals) // 2] if vals else None


def _actuator_values(diag: Diagnosis) -> dict[str, float]:
    """Median over joints of each actuator figure a randomisation pins, by the names the
    fits use (``delay_s``, the rung's ``lag_s``, ``kp``...): the ladder's selected rung per
    joint (its delay and parameters), or the joint dynamics' identified parameters and the
    servo's share of each joint's delay (the whole delay where the loop was not measured)."""
    vals: dict[str, list[float]] = {}

    def add(name: str, v: float | None) -> None:
        if v is not None and math.isfinite(v):
            vals.setdefault(name, []).append(float(v))

    ladder = _finding(diag, "actuator", LadderFigures.kind)
    if ladder is not None:
        for j in ladder.typed(LadderFigures).joints.values():
            add("delay_s", j.delay.total_s if j.delay is not None else None)
            for k, v in j.params.items():
                add(k, v)
    dyn = _finding(diag, "actuator", JointDynamicsFigures.kind)
    if dyn is not None:
        fig = dyn.typed(JointDynamicsFigures)
        account = fig.delay_account
        for name, d in fig.delay_s.items():
            dl = account.delays.get(name) if account is not None else None
            add("delay_s", dl.servo_s if dl is not None and math.isfinite(dl.servo_s) else d)
        for per in fig.params.values():
            for k, v in per.items():
                add(k, v)
    return {k: v for k, v in ((k, _median(v)) for k, v in vals.items()) if v is not None}


def _controller_gains(diag: Diagnosis, taken: set[str]) -> list[Entry]:
    """kp and kv from the controller fit, pinned only when that fit is implicated (it
    explained the logged motion) and only over the joints where it identified them: an
    inconclusive fit or an unidentifiable gain leaves the model's value alone (SIMPLER's
    fit names what it identified; the joint dynamics' gains are identified ones only)."""
    found = [
        f
        for f in diag.by_branch("controller")
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


def _actuator(diag: Diagnosis) -> list[Entry]:
    out: list[Entry] = []
    fig = _actuator_values(diag)
    for name, keys in (
        ("servo_delay_s", ("delay_s",)),
        ("servo_lag_time_constant_s", ("lag_time_constant_s", "time_constant_s", "lag_s", "tau_s")),
        ("kp_scale", ("kp_scale", "gain_scale")),
        ("kp", ("kp", "stiffness")),
        ("kv", ("kv", "damping")),
    ):
        v = next((fig[k] for k in keys if k in fig), None)
        if v is not None:
            out.append(
                Entry(
                    name,
                    "pinned",
                    "fitted",
                    value=v,
                    target=".*",
                    note="identified from logged joint data: pinned",
                )
            )
    out.extend(_controller_gains(diag, {e.name for e in out}))
    lo, hi = PENG_TABLE["controller_gain_scale"]
    out.append(
        Entry(
            "unit_gain_scale",
            "range",
            "defaulted",
            low=lo,
            high=hi,
            distribution="log_uniform",
            target=".*",
            note="unit-to-unit variation across arms, about the pinned gains; one arm "
            "was measured, so Peng et al.'s default span stands in.",
        )
    )
    lo, hi = PENG_TABLE["joint_damping_scale"]
    out.append(
        Entry(
            "joint_damping_scale",
            "range",
            "defaulted",
            low=lo,
            high=hi,
            distribution="log_uniform",
            target=".*",
            note="unit-to-unit variation across arms: Peng et al. 2018 default",
        )
    )
    lo, hi = PENG_TABLE["link_mass_scale"]
    out.append(
        Entry(
            "link_mass_scale",
            "range",
            "defaulted",
            low=lo,
            high=hi,
            distribution="log_uniform",
            target="arm links",
            note="unit-to-unit variation across arms: Peng et al. 2018 default",
        )
    )
    return out


def build_spec(
    diag: Diagnosis,
    *,
    object_body: str = "cube",
    gripper_geoms: tuple[str, ...] = ("fixed_jaw_pad", "moving_jaw_pad"),
) -> RandomizationSpec:
    """The spec for a diagnosis (pure: no files)."""
    lat, dt = _latency(diag)
    entries = lat + _contact(diag, object_body, "|".join(gripper_geoms)) + _actuator(diag)
    return RandomizationSpec(rig=diag.rig, seed=diag.seed, control_dt_s=dt, entries=tuple(entries))


def load_spec_from_findings(path: str | Path, rig_name: str | None = None) -> RandomizationSpec:
    """Read ``findings.json`` and build the spec.

    Raises:
        InputError: the file is not a diagnosis, or it comes from another rig than
            ``rig_name``.
    """
    diag = load_diagnosis(path)
    if rig_name is not None and diag.rig != rig_name:
        raise InputError(
            file=path,
            field="rig",
            expected=f"findings of rig '{rig_name}'",
            got=f"findings of rig '{diag.rig}'",
            fix="diagnose this rig first ('simgap diagnose RIG --out DIR') and "
            "pass its findings.json",
        )
    return build_spec(diag)
