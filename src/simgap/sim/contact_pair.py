"""Explicit ``<contact><pair>`` elements built with MjSpec, and batched push replays on them.

MuJoCo mixes two colliding geoms' contact parameters (``mj_contactParam``): when their
``priority`` differs the higher-priority geom's values are used alone; when it is equal,
``condim`` is the larger, ``friction`` the element-wise **maximum**, and ``solref`` /
``solimp`` a weighted mean by ``solmix``. A geom-level sweep can therefore be inert (a pad
lowered below its partner's friction changes nothing). An explicit pair replaces the mixed
values for its two geoms entirely, and MuJoCo then skips the dynamic contact between them,
so a coefficient written on the pair always acts.

``PairReplay.build`` adds one explicit pair per (geom1, geom2) at the values the model
already gives that contact (mixed as MuJoCo would, or an existing pair's), so the nominal
replay is the model's own. Coefficients are then written on compiled copies
(microseconds) and every candidate of a batch is rolled out in one ``mujoco.rollout`` call.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import mujoco
import numpy as np

from simgap.errors import NameNotFoundError
from simgap.sim.model import compile_spec, finish_params, names, object_id, set_param
from simgap.sim.replay import Replayer, ReplayLog

FIELDS: tuple[str, ...] = ("sliding", "torsional", "rolling", "solref", "solimp")
"""Pair coefficients: sliding friction (both tangent axes), torsional [m] (needs condim 4),
rolling [m] (both axes, needs condim 6), solref time constant [s], solimp dmax (dmin kept at
or below it)."""
CONDIM_NEEDED = {"torsional": 4, "rolling": 6}


@dataclass(frozen=True)
class ContactValues:
    """The contact parameters one geom pair uses.

    Attributes:
        condim: contact dimensionality (1, 3, 4 or 6).
        friction: sliding, sliding, torsional [m], rolling [m], rolling [m].
        solref: time constant [s] and damping ratio (or direct stiffness, damping).
        solimp: dmin, dmax, width [m], midpoint, power.
        rule: how MuJoCo arrived at them (for the finding).
    """

    condim: int
    friction: tuple[float, float, float, float, float]
    solref: tuple[float, float]
    solimp: tuple[float, float, float, float, float]
    rule: str

    def get(self, name: str) -> float:
        """One coefficient by ``FIELDS`` name."""
        return {
            "sliding": self.friction[0],
            "torsional": self.friction[2],
            "rolling": self.friction[3],
            "solref": self.solref[0],
            "solimp": self.solimp[1],
        }[name]

    def to_dict(self) -> dict[str, object]:
        """JSON-able form."""
        return {
            "condim": self.condim,
            "friction": list(self.friction),
            "solref": list(self.solref),
            "solimp": list(self.solimp),
            "rule": self.rule,
        }


def _gname(model: mujoco.MjModel, g: int) -> str:
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) or f"geom #{g}"


def existing_pair(model: mujoco.MjModel, g1: int, g2: int) -> int:
    """Index of an explicit pair between two geoms, or -1."""
    for p in range(model.npair):
        if {int(model.pair_geom1[p]), int(model.pair_geom2[p])} == {g1, g2}:
            return p
    return -1


def mixed_values(model: mujoco.MjModel, geom1: str, geom2: str) -> ContactValues:
    """The values MuJoCo uses for contacts between two geoms (see the module docstring)."""
    a, b = object_id(model, "geom", geom1), object_id(model, "geom", geom2)
    p = existing_pair(model, a, b)
    if p >= 0:
        f = tuple(float(v) for v in model.pair_friction[p])
        return ContactValues(
            int(model.pair_dim[p]),
            f,  # type: ignore[arg-type]
            tuple(float(v) for v in model.pair_solref[p]),  # type: ignore
            tuple(float(v) for v in model.pair_solimp[p]),  # type: ignore
            f"the model's own <pair> between '{geom1}' and '{geom2}'",
        )
    pa, pb = int(model.geom_priority[a]), int(model.geom_priority[b])
    if pa != pb:
        w = a if pa > pb else b
        fr = model.geom_friction[w]
        return ContactValues(
            int(model.geom_condim[w]),
            (float(fr[0]), float(fr[0]), float(fr[1]), float(fr[2]), float(fr[2])),
            tuple(float(v) for v in model.geom_solref[w]),  # type: ignore
            tuple(float(v) for v in model.geom_solimp[w]),  # type: ignore
            f"priority: '{_gname(model, w)}' (priority {max(pa, pb)} > "
            f"{min(pa, pb)}) decides alone; the other geom's values are "
            "ignored",
        )
    s1, s2 = float(model.geom_solmix[a]), float(model.geom_solmix[b])
    tiny = mujoco.mjMINVAL
    if s1 >= tiny and s2 >= tiny:
        mix = s1 / (s1 + s2)
    elif s1 < tiny and s2 < tiny:
        mix = 0.5
    else:
        mix = 0.0 if s1 < tiny else 1.0
    r1, r2 = model.geom_solref[a], model.geom_solref[b]
    sr = mix * r1 + (1 - mix) * r2 if r1[0] > 0 and r2[0] > 0 else np.minimum(r1, r2)
    si = mix * model.geom_solimp[a] + (1 - mix) * model.geom_solimp[b]
    fr = np.maximum(model.geom_friction[a], model.geom_friction[b])
    return ContactValues(
        max(int(model.geom_condim[a]), int(model.geom_condim[b])),
        (float(fr[0]), float(fr[0]), float(fr[1]), float(fr[2]), float(fr[2])),
        (float(sr[0]), float(sr[1])),
        tuple(float(v) for v in si),  # type: ignore[arg-type]
        f"equal priority ({pa}): MuJoCo takes the larger of the two geoms' "
        f"frictions ('{geom1}' {model.geom_friction[a][0]:.3g}, "
        f"'{geom2}' {model.geom_friction[b][0]:.3g} -> {fr[0]:.3g}), "
        "so a geom value below its partner's is inert",
    )


def touching(
    model: mujoco.MjModel, state: np.ndarray, geom: str, exclude: Sequence[str] = ()
) -> list[str]:
    """Geoms in contact with ``geom`` in a full-physics state (e.g. the table under a box)."""
    d = mujoco.MjData(model)
    mujoco.mj_setState(model, d, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
    mujoco.mj_forward(model, d)
    g = object_id(model, "geom", geom)
    out: list[str] = []
    for i in range(d.ncon):
        c = d.contact[i]
        other = int(c.geom2) if int(c.geom1) == g else int(c.geom1) if int(c.geom2) == g else -1
        if other >= 0:
            nm = _gname(model, other)
            if nm not in exclude and nm not in out:
                out.append(nm)
    return out


Writes = Mapping[tuple[str, str], float]
"""Coefficient writes ``{(group, field): value}``; a group names a set of pairs
(``(body, "mass")`` writes a body's mass instead)."""


@dataclass
class PairReplay:
    """A model with explicit pairs per group, and batched replays of logged pushes.

    Attributes:
        replayer: the batched replayer (its model carries the explicit pairs).
        groups: group name -> pair indices in the compiled model.
        nominal: pair index -> the values the original model gave that contact.
        pair_geoms: pair index -> (geom1, geom2).
    """

    replayer: Replayer
    groups: dict[str, tuple[int, ...]]
    nominal: dict[int, ContactValues]
    pair_geoms: dict[int, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        spec: mujoco.MjSpec,
        groups: Mapping[str, Sequence[tuple[str, str]]],
        joints: Sequence[str],
        object_body: str,
        *,
        interp: str = "hold",
        delay_s: float = 0.0,
        physics_dt: float | None = None,
        source: str | None = None,
    ) -> PairReplay:
        """Add the groups' pairs to a copy of ``spec`` at the model's own values.

        Raises:
            InputError: a geom is unknown (valid names listed) or the model does not
                compile.
        """
        spec = spec.copy()
        base = compile_spec(spec.copy(), source)
        valid = names(base, "geom")
        nominal_by_geoms: dict[tuple[str, str], ContactValues] = {}
        for pairs in groups.values():
            for g1, g2 in pairs:
                for g in (g1, g2):
                    if g not in valid:
                        raise NameNotFoundError("geom", g, valid, file=source)
                v = mixed_values(base, g1, g2)
                nominal_by_geoms[(g1, g2)] = v
                a, b = object_id(base, "geom", g1), object_id(base, "geom", g2)
                if existing_pair(base, a, b) < 0:
                    spec.add_pair(
                        geomname1=g1,
                        geomname2=g2,
                        condim=v.condim,
                        friction=list(v.friction),
                        solref=list(v.solref),
                        solimp=list(v.solimp),
                    )
        rep = Replayer.build(
            spec,
            joints,
            object_body=object_body,
            interp=interp,
            delay_s=delay_s,
            physics_dt=physics_dt,
            source=source,
        )
        m = rep.model
        out_groups: dict[str, tuple[int, ...]] = {}
        nominal: dict[int, ContactValues] = {}
        pg: dict[int, tuple[str, str]] = {}
        for gname, pairs in groups.items():
            idx = []
            for g1, g2 in pairs:
                p = existing_pair(m, object_id(m, "geom", g1), object_id(m, "geom", g2))
                idx.append(p)
                nominal[p] = nominal_by_geoms[(g1, g2)]
                pg[p] = (g1, g2)
            out_groups[gname] = tuple(idx)
        return cls(replayer=rep, groups=out_groups, nominal=nominal, pair_geoms=pg)

    def model_with(self, writes: Writes) -> mujoco.MjModel:
        """A copy of the pair model with coefficients written (condim raised as needed)."""
        m = copy.copy(self.replayer.model)
        massive = False
        for (group, name), value in writes.items():
            if name == "mass":  # the object's mass, for the confounding check
                set_param(m, "mass", group, float(value))
                massive = True
                continue
            if group not in self.groups:
                raise NameNotFoundError("contact pair group", group, list(self.groups))
            for p in self.groups[group]:
                set_pair_value(m, p, name, float(value))
        if massive:
            finish_params(m)
        return m

    def replay(
        self, candidates: Sequence[Writes], logs: Sequence[ReplayLog]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Object (position (B, T, 3) [m], quaternion (B, T, 4)) per log, one batched
        rollout per log across all candidates."""
        models = [self.model_with(c) for c in candidates]
        out = []
        for log in logs:
            res = self.replayer.replay(models, log)
            assert res.obj_pos is not None and res.obj_quat is not None
            out.append((res.obj_pos, res.obj_quat))
        return out

    def close(self) -> None:
        """End the rollout thread pool."""
        self.replayer.close()


def set_pair_value(model: mujoco.MjModel, p: int, name: str, value: float) -> None:
    """Write one coefficient of pair ``p`` in place; torsional raises condim to 4, rolling
    to 6 (at condim 3 neither acts)."""
    if name == "sliding":
        model.pair_friction[p, 0:2] = value
    elif name == "torsional":
        model.pair_friction[p, 2] = value
    elif name == "rolling":
        model.pair_friction[p, 3:5] = value
    elif name == "solref":
        model.pair_solref[p, 0] = value
    elif name == "solimp":
        model.pair_solimp[p, 1] = value
        model.pair_solimp[p, 0] = min(float(model.pair_solimp[p, 0]), value)
    else:
        raise NameNotFoundError("pair coefficient", name, FIELDS)
    need = CONDIM_NEEDED.get(name, 0)
    if need and int(model.pair_dim[p]) < need:
        model.pair_dim[p] = need


def replay_file(
    path: str,
    joints: Sequence[str],
    object_body: str,
    logs: Sequence[ReplayLog],
    *,
    interp: str = "hold",
    delay_s: float = 0.0,
    physics_dt: float | None = None,
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Replay logs on an MJCF file as written (e.g. a pair patch, to prove it before it is
    offered): per log, object positions (1, T, 3) and quaternions (1, T, 4)."""
    from simgap.sim.model import load_spec, strip_visuals

    rep = Replayer.build(
        strip_visuals(load_spec(path)),
        joints,
        object_body=object_body,
        interp=interp,
        delay_s=delay_s,
        physics_dt=physics_dt,
        source=path,
    )
    try:
        out = []
        for log in logs:
            res = rep.replay(None, log)
            assert res.obj_pos is not None and res.obj_quat is not None
            out.append((res.obj_pos, res.obj_quat))
        return out
    finally:
        rep.close()
