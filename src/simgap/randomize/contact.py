"""The contact branch's randomisation entries: the pad friction and the object's mass."""

from __future__ import annotations

from simgap.figures.base import finite
from simgap.figures.contact import ContactFigures, interval_text
from simgap.randomize.draft import PENG_TABLE, Draft, measured_finding
from simgap.values.randomization import Entry


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


def _mass_from_interval(fig: ContactFigures | None, target: str) -> Entry | None:
    """The object's mass range the pushes allow, where they bound it on one side or both
    though they leave its best fit open: the interval itself when closed; from its lower end
    to twice that end when only the upper end is open (the factor a default, said in the
    note); from half its upper end to it when only the lower end is open. None when the
    finding bounds neither end: a range about the model's mass must then not contradict
    evidence that is absent."""
    iv = fig.mass_interval if fig is not None else None
    lo, hi = (finite(iv[0]), finite(iv[1])) if iv is not None else (None, None)
    lo = lo if lo is not None and lo > 0 else None
    hi = hi if hi is not None and hi > 0 else None
    if lo is None and hi is None:
        return None
    if lo is not None and hi is not None:
        low, high, how = lo, hi, "the pushes' 95 % interval"
    elif lo is not None:
        low, high, how = (
            lo,
            2.0 * lo,
            "from the pushes' 95 % lower bound to twice it (the upper end is open: "
            "the factor 2 is a default)",
        )
    else:
        assert hi is not None
        low, high, how = (
            0.5 * hi,
            hi,
            "from half the pushes' 95 % upper bound (the lower end is open: the "
            "factor is a default) to it",
        )
    return Entry(
        "object_mass_kg",
        "range",
        "fitted",
        low=low,
        high=high,
        distribution="log_uniform",
        target=target,
        note=f"the pushes did not pin the mass but bound it: {how}; weigh the parts to replace it.",
    )


def contact_entries(draft: Draft) -> list[Entry]:
    """The contact branch's entries: the pad friction (identified, or defaulted) and the
    object's mass range (about the fitted or the model's mass, or Peng et al.'s default)."""
    rig_object = draft.object_body
    found = measured_finding(draft.diagnosis, "contact")
    fig = found.typed(ContactFigures) if found is not None else None
    out: list[Entry] = [_pad_friction(fig, "|".join(draft.gripper_geoms))]
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
    elif (bounded := _mass_from_interval(fig, rig_object)) is not None:
        out.append(bounded)
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
