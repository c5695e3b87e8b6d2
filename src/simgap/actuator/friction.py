"""BAM's friction families M1-M6 as sub-rungs of the servo rung, each parameter in a box.

Friction is a *budget* ``tau_fm`` (Duclusaud et al., ICRA 2025; ``bam/model.py``): the
simulator computes the torque that would stop the joint within the step and applies
``-clip(tau_stop, -tau_fm, tau_fm)``, so friction can stop the joint but never push it.
With ``tau_m`` the motor torque (back-EMF included, zero while torque is off), ``tau_e``
the external (gravity) torque, ``s = exp(-|qd / dtheta_stribeck| ** alpha)``::

    M1  tau_fm = friction_base + friction_viscous |qd|                    Coulomb-viscous
    M2  M1 + s friction_stribeck                                           Stribeck
    M3  M1 + load_friction_base |tau_e - tau_m|                            load-dependent
    M4  M2 + |tau_e - tau_m| (load_friction_base + s load_friction_stribeck)
    M5  M2 + |K_e tau_e - K_m tau_m| + s |K_es tau_e - K_ms tau_m|        directional
    M6  M5 + s [ K_eq tau_e^2 if |tau_e| < |tau_m| else K_mq tau_m^2 ]     quadratic
            (the quadratic term only while tau_e and tau_m have opposite signs)

All six are one superset vector (``PHYS_NAMES``): M3 is M5 with K_e = K_m, so one
simulation runs candidates of every family at once. The boxes are BAM 1.0.2's
(``bam/model.py``) except ``friction_viscous``, whose box is per servo family (BAM allows
1 N m s/rad, 150x its own XL330 fits): a fit may not buy training error with a gearbox
that could not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from simgap.errors import NameNotFoundError

PHYS_NAMES = (
    "kt",
    "R",
    "armature",
    "q_offset",
    "delay_s",
    "friction_base",
    "friction_viscous",
    "friction_stribeck",
    "dtheta_stribeck",
    "alpha",
    "load_friction_motor",
    "load_friction_external",
    "load_friction_motor_stribeck",
    "load_friction_external_stribeck",
    "load_friction_motor_quad",
    "load_friction_external_quad",
    "max_velocity",
)
"""Order of the superset parameter vector every physical servo candidate is written in."""

FRICTION_BOXES = {
    "friction_base": (0.0, 0.2),  # N m      BAM max_friction_base
    "friction_stribeck": (0.0, 0.2),  # N m      BAM max_friction_base
    "load_friction_base": (0.0, 0.5),  # -        BAM max_load_friction
    "load_friction_motor": (0.0, 0.5),
    "load_friction_external": (0.0, 0.5),
    "load_friction_stribeck": (0.0, 1.0),  # -        BAM's stribeck load terms
    "load_friction_motor_stribeck": (0.0, 1.0),
    "load_friction_external_stribeck": (0.0, 1.0),
    "load_friction_motor_quad": (0.0, 0.01),  # 1/(N m)  BAM's quadratic terms
    "load_friction_external_quad": (0.0, 0.01),
    "dtheta_stribeck": (0.01, 5.0),  # rad/s    BAM 1.0.2
    "alpha": (0.5, 10.0),  # -        BAM 1.0.2
    "q_offset": (-0.1, 0.1),  # rad      BAM: test-bench zero error
    "delay_s": (0.0, 0.05),  # s        (BAM has no delay)
}
"""Physical box of every friction and bench parameter (units in the comments)."""

VISCOUS_BOXES = {"xl330": (0.0, 0.05), "sts3215": (0.0, 0.3)}
"""friction_viscous box [N m s/rad] per servo family: 8x (XL330, fits 0.004-0.006) and 5x
(STS3215, fit 0.059) BAM's own fits."""

LOG_SCALED = ("armature", "dtheta_stribeck")
"""Parameters searched on a log scale (their boxes span decades)."""

_COMMON = ("kt", "R", "armature", "q_offset", "delay_s")
_STRIBECK = ("friction_stribeck", "dtheta_stribeck", "alpha")
_DIRECTIONAL = (
    "friction_base",
    "friction_viscous",
    *_STRIBECK,
    "load_friction_motor",
    "load_friction_external",
    "load_friction_motor_stribeck",
    "load_friction_external_stribeck",
)
"""M5's parameters, which M6 extends with the quadratic load terms."""


@dataclass(frozen=True)
class FrictionFamily:
    """One of BAM's friction models.

    Attributes:
        name: ``m1`` ... ``m6``.
        title: what it adds.
        friction: its friction parameters, BAM's JSON names.
    """

    name: str
    title: str
    friction: tuple[str, ...]

    @property
    def free(self) -> tuple[str, ...]:
        """Every fitted parameter: the motor and bench ones, then the friction ones."""
        return _COMMON + self.friction

    def superset(self, values: dict[str, float]) -> dict[str, float]:
        """BAM-named values -> the superset names (``PHYS_NAMES``); missing terms are 0."""
        out = {k: 0.0 for k in PHYS_NAMES}
        out.update({"dtheta_stribeck": 1.0, "alpha": 1.0, "max_velocity": float("inf")})
        for k, v in values.items():
            if k == "load_friction_base":
                out["load_friction_motor"] = out["load_friction_external"] = v
            elif k == "load_friction_stribeck":
                out["load_friction_motor_stribeck"] = out["load_friction_external_stribeck"] = v
            elif k in out:
                out[k] = v
        return out


FAMILIES = (
    FrictionFamily("m1", "Coulomb-viscous", ("friction_base", "friction_viscous")),
    FrictionFamily("m2", "Stribeck", ("friction_base", "friction_viscous", *_STRIBECK)),
    FrictionFamily(
        "m3", "load-dependent", ("friction_base", "friction_viscous", "load_friction_base")
    ),
    FrictionFamily(
        "m4",
        "Stribeck load-dependent",
        (
            "friction_base",
            "friction_viscous",
            *_STRIBECK,
            "load_friction_base",
            "load_friction_stribeck",
        ),
    ),
    FrictionFamily("m5", "Stribeck load-dependent directional", _DIRECTIONAL),
    FrictionFamily(
        "m6",
        "directional with quadratic load terms",
        (*_DIRECTIONAL, "load_friction_motor_quad", "load_friction_external_quad"),
    ),
)
"""M1-M6 in order of complexity (the order the stop rule walks)."""

FAMILY_NAMES = tuple(f.name for f in FAMILIES)


def friction_family(name: str) -> FrictionFamily:
    """A family by name; a miss lists ``m1`` ... ``m6``."""
    for f in FAMILIES:
        if f.name == name.lower():
            return f
    raise NameNotFoundError("friction family", name, FAMILY_NAMES)
