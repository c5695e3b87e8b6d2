"""The spec of a diagnosis: the branches' entries in the order given, then the unit-to-unit
variation no single arm measures."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from simgap.errors import InputError
from simgap.finding import Diagnosis, load_diagnosis
from simgap.randomize.draft import PENG_TABLE, Draft, EntryBuilder
from simgap.values.randomization import Entry, RandomizationSpec


def unit_variation_entries() -> list[Entry]:
    """The unit-to-unit variation across arms that one arm's diagnosis cannot measure: the
    gains' and the joint damping's scale about their pinned values and the links' masses, at
    Peng et al.'s default spans (``simgap fleet`` measures them)."""
    out: list[Entry] = []
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
    builders: Sequence[EntryBuilder],
    *,
    object_body: str = "cube",
    gripper_geoms: tuple[str, ...] = ("fixed_jaw_pad", "moving_jaw_pad"),
) -> RandomizationSpec:
    """The spec for a diagnosis (pure: no files).

    Args:
        diag: the diagnosis.
        builders: the branches' entry builders, run in this order (the ladder's, from
            ``simgap.branches.ladder_list.entry_builders``), each seeing the entries before.
        object_body: the manipulated object's body in the model.
        gripper_geoms: the gripper's pad geoms.

    Returns:
        The branches' entries, then the unit-to-unit variation; the spec's control period
        is the pinned ``control_dt_s`` entry where a builder wrote one.
    """
    entries: list[Entry] = []
    for build in builders:
        entries += build(Draft(diag, object_body, gripper_geoms, tuple(entries)))
    entries += unit_variation_entries()
    dt = next((e.value for e in entries if e.name == "control_dt_s" and e.kind == "pinned"), None)
    return RandomizationSpec(rig=diag.rig, seed=diag.seed, control_dt_s=dt, entries=tuple(entries))


def load_spec_from_findings(
    path: str | Path, builders: Sequence[EntryBuilder], rig_name: str | None = None
) -> RandomizationSpec:
    """Read ``findings.json`` and build the spec with the branches' ``builders``.

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
    return build_spec(diag, builders)
