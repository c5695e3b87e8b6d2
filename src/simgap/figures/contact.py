"""The contact branch's figures: pair coefficients identified from logged pushes.

Each coefficient the ladder profiles is a group of flat figures named by its prefix
(``friction`` is the primary pair's sliding friction, ``support_friction`` the support's,
then ``torsional``, ``rolling``, ``solref``, ``solimp`` and the object's ``mass``): the model's
value, the best fit, its 95 % interval (an open end is null), the RMS object error at each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Headline, Record, figure, finite, sig

_Interval = tuple[float | None, float | None]
"""A 95 % interval; an end the pushes leave open is None (null)."""
_Series = tuple[float | tuple[float, ...], ...]
"""A sweep's values or losses: one number per value (a forced 2-D grid: one row each)."""


@dataclass(frozen=True)
class OverMass(Record):
    """The primary sliding friction refitted with the object's mass at each of three values
    (the model's, then the low and high ends of the mass box)."""

    group: str = figure(TEXT, "the pair group refitted ('grip' or 'support')")
    masses_kg: tuple[float, ...] = figure("kg", "the model's mass, the low and high ends")
    intervals: tuple[_Interval, ...] = figure(UNITLESS, "the friction's 95 % interval at each")
    bests: tuple[float | None, ...] = figure(UNITLESS, "the friction's best fit at each")
    interval: _Interval = figure(UNITLESS, "the friction's interval over the whole mass range")


@dataclass(frozen=True)
class ContactFigures(Record):
    """The contact lint, the tracker noise, and per coefficient the model's value, the fit and
    its interval (figure names ``<coefficient>_<figure>``; see the module docstring)."""

    branch = "contact"

    lint_problems: int | None = figure(
        UNITLESS, "contact problems the model lint found", default=None
    )
    object_noise_m: float = figure("m", "the tracker's position noise", default=math.nan)
    pushes: int | None = figure(UNITLESS, "logged pushes replayed", default=None)
    rms_nominal_m: float = figure(
        "m", "RMS object position error with the model's values", default=math.nan
    )
    rms_fitted_m: float = figure(
        "m", "RMS object position error with the fitted values", default=math.nan
    )
    object_noise_rad: float | None = figure(
        "rad", "the tracker's orientation noise (null: orientation not scored)", default=None
    )
    # the grip pair's sliding friction
    friction_nominal: float | None = figure(UNITLESS, "friction: the model's value", default=None)
    friction_best: float | None = figure(
        UNITLESS, "friction: the best fit (null: not identified)", default=None
    )
    friction_interval: _Interval | None = figure(
        UNITLESS, "friction: the 95 % interval (null end: open)", default=None
    )
    friction_identifiable: bool | None = figure(
        TEXT, "friction: the pushes pin it (a closed interval)", default=None
    )
    friction_rms_nominal_m: float | None = figure(
        "m", "friction: RMS object error at the model's value", default=None
    )
    friction_rms_best_m: float | None = figure(
        "m", "friction: RMS object error at the best fit", default=None
    )
    friction_rms_nominal_rad: float | None = figure(
        "rad", "friction: RMS orientation error, model's value", default=None
    )
    friction_rms_best_rad: float | None = figure(
        "rad", "friction: RMS orientation error, best fit", default=None
    )
    friction_status: str | None = figure(
        TEXT, "friction: 'fitted', 'not run: ...' or why not", default=None
    )
    friction_interval_at_model_mass: _Interval | None = figure(
        UNITLESS, "friction: the 95 % interval at the model's mass", default=None
    )
    friction_best_at_model_mass: float | None = figure(
        UNITLESS, "friction: the best fit at the model's mass", default=None
    )
    friction_over_mass: OverMass | None = figure(
        TEXT, "friction: refitted at each object mass", default=None
    )
    # the support pair's sliding friction
    support_friction_nominal: float | None = figure(
        UNITLESS, "support friction: the model's value", default=None
    )
    support_friction_best: float | None = figure(
        UNITLESS, "support friction: the best fit (null: not identified)", default=None
    )
    support_friction_interval: _Interval | None = figure(
        UNITLESS, "support friction: the 95 % interval (null end: open)", default=None
    )
    support_friction_identifiable: bool | None = figure(
        TEXT, "support friction: the pushes pin it (a closed interval)", default=None
    )
    support_friction_rms_nominal_m: float | None = figure(
        "m", "support friction: RMS object error at the model's value", default=None
    )
    support_friction_rms_best_m: float | None = figure(
        "m", "support friction: RMS object error at the best fit", default=None
    )
    support_friction_rms_nominal_rad: float | None = figure(
        "rad", "support friction: RMS orientation error, model's value", default=None
    )
    support_friction_rms_best_rad: float | None = figure(
        "rad", "support friction: RMS orientation error, best fit", default=None
    )
    support_friction_status: str | None = figure(
        TEXT, "support friction: 'fitted', 'not run: ...' or why not", default=None
    )
    support_friction_interval_at_model_mass: _Interval | None = figure(
        UNITLESS, "support friction: the 95 % interval at the model's mass", default=None
    )
    support_friction_best_at_model_mass: float | None = figure(
        UNITLESS, "support friction: the best fit at the model's mass", default=None
    )
    support_friction_over_mass: OverMass | None = figure(
        TEXT, "support friction: refitted at each object mass", default=None
    )
    # the grip pair's torsional friction
    torsional_nominal: float | None = figure("m", "torsional: the model's value", default=None)
    torsional_best: float | None = figure(
        "m", "torsional: the best fit (null: not identified)", default=None
    )
    torsional_interval: _Interval | None = figure(
        "m", "torsional: the 95 % interval (null end: open)", default=None
    )
    torsional_identifiable: bool | None = figure(
        TEXT, "torsional: the pushes pin it (a closed interval)", default=None
    )
    torsional_rms_nominal_m: float | None = figure(
        "m", "torsional: RMS object error at the model's value", default=None
    )
    torsional_rms_best_m: float | None = figure(
        "m", "torsional: RMS object error at the best fit", default=None
    )
    torsional_rms_nominal_rad: float | None = figure(
        "rad", "torsional: RMS orientation error, model's value", default=None
    )
    torsional_rms_best_rad: float | None = figure(
        "rad", "torsional: RMS orientation error, best fit", default=None
    )
    torsional_status: str | None = figure(
        TEXT, "torsional: 'fitted', 'not run: ...' or why not", default=None
    )
    # the grip pair's rolling friction
    rolling_nominal: float | None = figure("m", "rolling: the model's value", default=None)
    rolling_best: float | None = figure(
        "m", "rolling: the best fit (null: not identified)", default=None
    )
    rolling_interval: _Interval | None = figure(
        "m", "rolling: the 95 % interval (null end: open)", default=None
    )
    rolling_identifiable: bool | None = figure(
        TEXT, "rolling: the pushes pin it (a closed interval)", default=None
    )
    rolling_rms_nominal_m: float | None = figure(
        "m", "rolling: RMS object error at the model's value", default=None
    )
    rolling_rms_best_m: float | None = figure(
        "m", "rolling: RMS object error at the best fit", default=None
    )
    rolling_rms_nominal_rad: float | None = figure(
        "rad", "rolling: RMS orientation error, model's value", default=None
    )
    rolling_rms_best_rad: float | None = figure(
        "rad", "rolling: RMS orientation error, best fit", default=None
    )
    rolling_status: str | None = figure(
        TEXT, "rolling: 'fitted', 'not run: ...' or why not", default=None
    )
    # the grip pair's solref time constant
    solref_nominal: float | None = figure("s", "solref: the model's value", default=None)
    solref_best: float | None = figure(
        "s", "solref: the best fit (null: not identified)", default=None
    )
    solref_interval: _Interval | None = figure(
        "s", "solref: the 95 % interval (null end: open)", default=None
    )
    solref_identifiable: bool | None = figure(
        TEXT, "solref: the pushes pin it (a closed interval)", default=None
    )
    solref_rms_nominal_m: float | None = figure(
        "m", "solref: RMS object error at the model's value", default=None
    )
    solref_rms_best_m: float | None = figure(
        "m", "solref: RMS object error at the best fit", default=None
    )
    solref_rms_nominal_rad: float | None = figure(
        "rad", "solref: RMS orientation error, model's value", default=None
    )
    solref_rms_best_rad: float | None = figure(
        "rad", "solref: RMS orientation error, best fit", default=None
    )
    solref_status: str | None = figure(
        TEXT, "solref: 'fitted', 'not run: ...' or why not", default=None
    )
    # the grip pair's solimp dmax
    solimp_nominal: float | None = figure(UNITLESS, "solimp: the model's value", default=None)
    solimp_best: float | None = figure(
        UNITLESS, "solimp: the best fit (null: not identified)", default=None
    )
    solimp_interval: _Interval | None = figure(
        UNITLESS, "solimp: the 95 % interval (null end: open)", default=None
    )
    solimp_identifiable: bool | None = figure(
        TEXT, "solimp: the pushes pin it (a closed interval)", default=None
    )
    solimp_rms_nominal_m: float | None = figure(
        "m", "solimp: RMS object error at the model's value", default=None
    )
    solimp_rms_best_m: float | None = figure(
        "m", "solimp: RMS object error at the best fit", default=None
    )
    solimp_rms_nominal_rad: float | None = figure(
        "rad", "solimp: RMS orientation error, model's value", default=None
    )
    solimp_rms_best_rad: float | None = figure(
        "rad", "solimp: RMS orientation error, best fit", default=None
    )
    solimp_status: str | None = figure(
        TEXT, "solimp: 'fitted', 'not run: ...' or why not", default=None
    )
    # the object's mass
    mass_nominal: float | None = figure("kg", "mass: the model's value", default=None)
    mass_best: float | None = figure(
        "kg", "mass: the best fit (null: not identified)", default=None
    )
    mass_interval: _Interval | None = figure(
        "kg", "mass: the 95 % interval (null end: open)", default=None
    )
    mass_identifiable: bool | None = figure(
        TEXT, "mass: the pushes pin it (a closed interval)", default=None
    )
    mass_rms_nominal_m: float | None = figure(
        "m", "mass: RMS object error at the model's value", default=None
    )
    mass_rms_best_m: float | None = figure(
        "m", "mass: RMS object error at the best fit", default=None
    )
    mass_rms_nominal_rad: float | None = figure(
        "rad", "mass: RMS orientation error, model's value", default=None
    )
    mass_rms_best_rad: float | None = figure(
        "rad", "mass: RMS orientation error, best fit", default=None
    )
    mass_status: str | None = figure(
        TEXT, "mass: 'fitted', 'not run: ...' or why not", default=None
    )

    def headline(self) -> Headline | None:
        """The identified friction change ("friction 2 -> 0.371 ..."): the summary leads with
        it and ``key_figure`` names it. Where the pushes do not pin the object's mass,
        ``friction_best`` is null and the value at the model's mass is the one identified,
        said so."""
        nominal = finite(self.friction_nominal)
        best, iv, where = finite(self.friction_best), self.friction_interval, ""
        if best is None:
            best = finite(self.friction_best_at_model_mass)
            iv = self.friction_interval_at_model_mass
            mass = finite(self.mass_nominal)
            where = " at the model's mass" + (f" {sig(mass)} kg" if mass is not None else "")
        if (self.friction_status or "fitted") != "fitted" or nominal is None or best is None:
            return None
        return Headline(
            f"friction {sig(nominal)} -> {sig(best)}{where} (95 % {interval_text(iv)})",
            best,
            nominal,
        )

    def pad_friction(self) -> tuple[float, _Interval | None, bool] | None:
        """The identified primary sliding friction: (value, its 95 % interval, whether it is
        the value at the model's mass because the pushes cannot pin the mass), or None."""
        best = finite(self.friction_best)
        if best is not None:
            return best, self.friction_interval, False
        at_mass = finite(self.friction_best_at_model_mass)
        if at_mass is not None:
            return at_mass, self.friction_interval_at_model_mass, True
        return None


def interval_text(iv: _Interval | None) -> str:
    """A 95 % interval as the summaries write it ("0.139..0.593"; an open end "open")."""
    ends = iv if iv is not None else (None, None)
    return "..".join("open" if (v := finite(end)) is None else sig(v) for end in ends)


@dataclass(frozen=True)
class Sweep(Record):
    """One coefficient's 1-D profile: the RMS object error at each swept value."""

    name: str = figure(TEXT, "'<group>.<field>'")
    group: str = figure(TEXT, "the pair group ('grip', 'support', 'object')")
    field: str = figure(TEXT, "the coefficient ('sliding', 'solref', 'mass', ...)")
    values: _Series = figure(TEXT, "the swept values, in the coefficient's unit (1, m, s, kg)")
    loss: _Series = figure("m", "RMS object position error at each value")
    loss_rad: _Series = figure("rad", "RMS object orientation error at each value")
    chi2: _Series = figure(UNITLESS, "chi-square over every push at each value")
    nominal: float = figure(TEXT, "the model's value, in the coefficient's unit")
    nominal_loss: float = figure("m", "RMS position error at the model's value")
    nominal_loss_rad: float = figure("rad", "RMS orientation error at the model's value")
    best_loss: float = figure("m", "RMS position error at the best value")
    best_loss_rad: float = figure("rad", "RMS orientation error at the best value")
    accepted: bool = figure(TEXT, "the fit was accepted into the patch")
    skipped: str = figure(TEXT, "why the stage was not run ('' when it ran)")
    excluded: bool = figure(TEXT, "the pushes exclude the model's value")
    flat: bool = figure(TEXT, "the profile does not pin the value")
    identifiable: bool = figure(TEXT, "the 95 % interval is closed")
    best: float | None = figure(TEXT, "the best value (null: not identified)", default=None)
    interval: _Interval | None = figure(TEXT, "the 95 % interval (null end: open)", default=None)
    noise_scale: float | None = figure(UNITLESS, "the chi-square's noise scale", default=None)
    reason: str = figure(TEXT, "why the value is not identifiable ('' when it is)", default="")
    unit: str = figure(TEXT, "the coefficient's unit as the interval states it", default="")


@dataclass(frozen=True)
class PairValues(Record):
    """One contact pair's values as MuJoCo mixes them from the two geoms."""

    condim: int = figure(UNITLESS, "contact dimensionality (1, 3, 4 or 6)")
    friction: tuple[float, ...] = figure(
        TEXT, "sliding, sliding (1), torsional (m), rolling, rolling (m)"
    )
    solref: tuple[float, ...] = figure(TEXT, "time constant (s) and damping ratio (1)")
    solimp: tuple[float, ...] = figure(TEXT, "dmin, dmax (1), width (m), midpoint, power (1)")
    rule: str = figure(TEXT, "how MuJoCo arrived at them")


@dataclass(frozen=True)
class PairEntry(Record):
    """One pair of the offered patch: the model's values with the fitted ones in."""

    geom1: str = figure(TEXT, "the first geom")
    geom2: str = figure(TEXT, "the second geom")
    condim: int = figure(UNITLESS, "contact dimensionality")
    friction: tuple[float, ...] = figure(TEXT, "as PairValues.friction")
    solref: tuple[float, ...] = figure(TEXT, "as PairValues.solref")
    solimp: tuple[float, ...] = figure(TEXT, "as PairValues.solimp")
    fitted: tuple[str, ...] = figure(TEXT, "the coefficients fitted")
    rule: str = figure(TEXT, "how MuJoCo mixed the model's values")


@dataclass(frozen=True)
class Holdout(Record):
    """Leave one push out: each push replayed with the coefficients refitted on the others."""

    chi2_fitted: tuple[float, ...] = figure(UNITLESS, "each held-out push's chi-square, refitted")
    chi2_model: tuple[float, ...] = figure(UNITLESS, "each push's chi-square with the model")
    rms_fitted_m: tuple[float, ...] = figure("m", "each held-out push's RMS error, refitted")
    rms_model_m: tuple[float, ...] = figure("m", "each push's RMS error with the model")
    values: tuple[Mapping[str, float], ...] = figure(TEXT, "each refit: '<group>.<field>' -> value")
    better: bool = figure(TEXT, "the refits beat the model over all pushes")
    better_each: tuple[bool, ...] = figure(TEXT, "the refit beats the model on each push")


@dataclass(frozen=True)
class PatchInfo(Record):
    """The pair patch: its pairs, the held-out check, and whether it was offered."""

    pairs: tuple[PairEntry, ...] = figure(TEXT, "the fitted pairs", default=())
    holdout: Holdout | None = figure(TEXT, "the leave-one-push-out check", default=None)
    offered: bool | None = figure(TEXT, "the patch was written and offered", default=None)
    why: str | None = figure(TEXT, "why it was not offered", default=None)
    replayed_rms_m: float | None = figure(
        "m", "RMS position error replaying the patch", default=None
    )
    replayed_rms_rad: float | None = figure(
        "rad", "RMS orientation error replaying the patch", default=None
    )
    model_rms_m: float | None = figure("m", "RMS position error with the model", default=None)


@dataclass(frozen=True)
class LintProblem(Record):
    """One contact problem in the model's MJCF."""

    file: str = figure(TEXT, "the MJCF file")
    line: int = figure(UNITLESS, "its line")
    element: str = figure(TEXT, "the element")
    problem: str = figure(TEXT, "what is wrong")
    fix: str = figure(TEXT, "what to do")


@dataclass(frozen=True)
class ContactDetails(Record):
    """What the contact report plots, and the pair patch's record."""

    branch = "contact"

    sweeps: Mapping[str, Sweep] = figure(
        TEXT, "each run profile by '<group>.<field>'", default_factory=dict
    )
    mass: Sweep | None = figure(TEXT, "the object mass's profile", default=None)
    mixing: Mapping[str, PairValues] = figure(
        TEXT, "each pair's model values by '<group>:<geom1>|<geom2>'", default_factory=dict
    )
    patch: PatchInfo = figure(TEXT, "the pair patch", default_factory=PatchInfo)
    lint: tuple[LintProblem, ...] = figure(TEXT, "the first 50 lint problems", default=())
