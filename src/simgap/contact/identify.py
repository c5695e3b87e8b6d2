"""Identify contact through explicit pairs, one coefficient per run, every push replayed.

The seed's method: "change the pair, not the world". The gripper's geoms and the object
(group ``grip``), and the object and what it rests on (group ``support``, found from the
contacts at each push's start unless named), get explicit ``<pair>`` elements at the values
the model already gives them, so the nominal replay is the model's own and any coefficient
written on a pair acts, whatever the geoms' priorities and frictions say.

The ladder, one 1-D profile at a time over all pushes (``contact.profile``), each coefficient
held at its fitted value once accepted: sliding (grip, then support), then torsional
(condim 4) and rolling (condim 6) where the logs carry orientation and the rig states the
tracker's orientation noise, then solref and solimp
only while the residual still exceeds the tracker noise. A coefficient is accepted when its
profile is identifiable, excludes the current model (likelihood ratio), and improves the RMS
error by more than ``NOISE_MULTIPLE`` tracker noises. The object's mass is profiled from
the nominal model beside the ladder, to say when mass and friction are confounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.contact.profile import (
    CHI2_95_1DOF,
    Interval,
    Noise,
    PushScore,
    interval,
    refine,
    score,
)
from simgap.contact.sweep import replay_logs
from simgap.values.push import PushLog

NOISE_MULTIPLE = 3.0
"""A fit must beat the model by this many tracker noises (RMS) to be accepted."""
RANGES: dict[str, tuple[float, float, str]] = {
    "sliding": (0.05, 3.0, ""),
    "torsional": (1e-5, 0.05, " m"),
    "rolling": (1e-6, 0.01, " m"),
    "solref": (0.004, 0.2, " s"),
    "solimp": (0.5, 0.9999, ""),
}
"""Swept range and unit of each pair coefficient (solref's lower end is raised to two
physics steps)."""


@dataclass(frozen=True)
class Stage:
    """One coefficient's profile.

    Attributes:
        group: ``grip``, ``support``, or the object body (mass).
        field: ``sliding``, ``torsional``, ``rolling``, ``solref``, ``solimp`` or ``mass``.
        values: swept values, shape (K,), ascending.
        chi2: per value and push, shape (K, L).
        rms_m, rms_rad: RMS position [m] / rotation [rad] error per value, shape (K,).
        nominal: the model's value; base_chi2/base_rms_*: the model before this stage
            (earlier accepted coefficients applied).
        interval: what the profile says (``contact.profile.Interval``).
        accepted: True when the coefficient is fitted (and goes into the patch).
        excluded: True when the data exclude the model's value (likelihood ratio, and
            better by more than ``NOISE_MULTIPLE`` noises), even if only a range fits.
        skipped: why the stage was not run ("" when it ran).
    """

    group: str
    field: str
    values: np.ndarray
    chi2: np.ndarray
    rms_m: np.ndarray
    rms_rad: np.ndarray
    nominal: float
    base_chi2: np.ndarray
    base_rms_m: float
    base_rms_rad: float
    interval: Interval
    accepted: bool = False
    skipped: str = ""
    excluded: bool = False

    @property
    def best_index(self) -> int:
        """Index of the minimising value."""
        return int(np.argmin(self.chi2.sum(1)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-able, with the keys the report's sweep plot reads."""
        from simgap.contact.profile import summary

        k = self.best_index
        return {
            "name": f"{self.group}.{self.field}",
            "group": self.group,
            "field": self.field,
            "values": self.values.tolist(),
            "loss": self.rms_m.tolist(),
            "loss_rad": self.rms_rad.tolist(),
            "chi2": self.chi2.sum(1).tolist(),
            "nominal": self.nominal,
            "nominal_loss": self.base_rms_m,
            "nominal_loss_rad": self.base_rms_rad,
            "best_loss": float(self.rms_m[k]),
            "best_loss_rad": float(self.rms_rad[k]),
            "accepted": self.accepted,
            "skipped": self.skipped,
            "excluded": self.excluded,
            "flat": not self.interval.identifiable,
            **summary(self.interval, ""),
        }


@dataclass(frozen=True)
class ContactFit:
    """The whole identification.

    Attributes:
        stages: the ladder's profiles in order (skipped ones included).
        mass: the mass profile from the nominal model (None without a body).
        nominal: the model's score; fitted: with every accepted coefficient.
        writes: the accepted coefficients ``{(group, field): value}``.
        pairs: group -> (geom1, geom2) pairs; values: per pair, the model's values.
        holdout: leave-one-push-out check (None with one push or nothing accepted).
        sliding_over_mass: the first sliding stage refitted with the object's mass at each
            end of the mass box (``MASS_BOX`` times the model's), when the pushes cannot pin
            the mass: ``{"group", "masses_kg", "intervals", "bests", "interval"}``, the last the
            union of the 95 % sets over the box (a quasi-static push sees friction x mass, so
            a friction interval at the model's mass alone would be conditional on it).
    """

    stages: tuple[Stage, ...]
    mass: Stage | None
    nominal: PushScore
    fitted: PushScore
    writes: dict[tuple[str, str], float]
    pairs: dict[str, tuple[tuple[str, str], ...]]
    values: dict[tuple[str, str], Any]
    holdout: dict[str, Any] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    sliding_over_mass: dict[str, Any] | None = None

    def stage(self, group: str, name: str) -> Stage | None:
        """The stage of one coefficient, if it was in the ladder."""
        return next((s for s in self.stages if s.group == group and s.field == name), None)


def _within_noise(s: PushScore, noise: Noise, i: int = 0) -> bool:
    ok = float(s.rms_m()[i]) <= NOISE_MULTIPLE * noise.m
    if s.n_rot.sum() > 0 and noise.rad is not None:
        ok = ok and float(s.rms_rad()[i]) <= NOISE_MULTIPLE * noise.rad
    return ok


def _gain(base: PushScore, s: PushScore, i: int, noise: Noise) -> bool:
    g_m = float(base.rms_m()[0] - s.rms_m()[i]) > NOISE_MULTIPLE * noise.m
    g_r = (
        s.n_rot.sum() > 0
        and noise.rad is not None
        and float(base.rms_rad()[0] - s.rms_rad()[i]) > NOISE_MULTIPLE * noise.rad
    )
    return bool(g_m or g_r)


def identify(
    model: str,
    joints: Sequence[str],
    logs: Sequence[PushLog],
    object_body: str,
    object_geom: str,
    gripper_geoms: Sequence[str],
    noise: Noise,
    *,
    support_geoms: Sequence[str] | None = None,
    interp: str = "hold",
    physics_dt: float | None = None,
) -> ContactFit:
    """Run the ladder (module docstring) on every push."""
    from simgap.sim.contact_pair import PairReplay, touching
    from simgap.sim.model import load_spec, strip_visuals

    spec = strip_visuals(load_spec(model))
    rlogs = replay_logs(logs, joints)
    grip = tuple((g, object_geom) for g in gripper_geoms)
    kw: dict[str, Any] = {"interp": interp, "physics_dt": physics_dt, "source": model}
    if support_geoms is None:
        probe = PairReplay.build(spec, {"grip": grip} if grip else {}, joints, object_body, **kw)
        found: list[str] = []
        for lg in rlogs:
            st = probe.replayer.initial_state(lg)
            for g in touching(probe.replayer.model, st, object_geom, gripper_geoms):
                found.append(g) if g not in found else None
        probe.close()
        support_geoms = found
    groups = {
        k: v
        for k, v in (("grip", grip), ("support", tuple((object_geom, s) for s in support_geoms)))
        if v
    }
    pr = PairReplay.build(spec, groups, joints, object_body, **kw)
    logged = [(lg.obj_pos, lg.obj_quat) for lg in logs]
    has_rot = noise.rad is not None and all(lg.obj_quat is not None for lg in logs)
    dt = float(pr.replayer.physics_dt)

    def run(cands: list[dict[tuple[str, str], float]]) -> PushScore:
        return score(pr.replay(cands, rlogs), logged, noise)

    try:
        nominal = run([{}])
        current: dict[tuple[str, str], float] = {}
        cur = nominal
        ladder = [("grip", "sliding"), ("support", "sliding")]
        if has_rot:
            ladder += [("grip", "torsional"), ("grip", "rolling")]
        ladder += [("grip", "solref"), ("grip", "solimp")]
        stages: list[Stage] = []
        n_tot = int(nominal.n.sum())
        for group, name in ladder:
            if group not in groups:
                continue
            p0 = pr.groups[group][0]
            nom_val = pr.nominal[p0].get(name)
            if name != "sliding" and _within_noise(cur, noise):
                stages.append(
                    _skipped(
                        group,
                        name,
                        nom_val,
                        cur,
                        "the residual is already within the tracker noise",
                    )
                )
                continue
            lo, hi, unit = RANGES[name]
            if name == "solref":
                lo = max(lo, 2 * dt)
            stage, _ = _profile(run, current, group, name, lo, hi, unit, nom_val, cur, n_tot, noise)
            stages.append(stage)
            if stage.accepted and stage.interval.best is not None:
                # the smooth fit's minimum, or the best swept value where that replays
                # better (contact replays are rough): the value reported is one replayed
                raw = float(stage.values[stage.best_index])
                trial = run(
                    [
                        {**current, (group, name): stage.interval.best},
                        {**current, (group, name): raw},
                    ]
                )
                k = int(np.argmin(trial.chi2.sum(1)))
                current[(group, name)] = (stage.interval.best, raw)[k]
                cur = PushScore(
                    *(
                        a[k : k + 1] if a.ndim == 2 else a
                        for a in (
                            trial.chi2,
                            trial.n,
                            trial.sse_m,
                            trial.n_pos,
                            trial.sse_rad,
                            trial.n_rot,
                        )
                    )
                )
        from simgap.sim.model import get_param

        m0 = get_param(pr.replayer.model, "mass", object_body)
        mass_stage, _ = _profile(
            run, {}, object_body, "mass", 0.1 * m0, 10 * m0, " kg", m0, nominal, n_tot, noise
        )
        over_mass = None
        first = next((st for st in stages if st.field == "sliding" and not st.skipped), None)
        if first is not None and not mass_stage.interval.identifiable:
            over_mass = _sliding_over_mass(run, current, first, object_body, m0, n_tot, noise)
        holdout = _holdout(run, stages, nominal, len(logs)) if current else None
        values = {
            (g, f"{a}|{b}"): pr.nominal[p]
            for g, idx in pr.groups.items()
            for p in idx
            for a, b in [pr.pair_geoms[p]]
        }
        return ContactFit(
            stages=tuple(stages),
            mass=mass_stage,
            nominal=nominal,
            fitted=cur,
            writes=current,
            pairs=groups,
            values=values,
            holdout=holdout,
            sliding_over_mass=over_mass,
        )
    finally:
        pr.close()


MASS_BOX = (0.1, 10.0)
"""The object's mass, as multiples of the model's, that a push log must rule out before a
friction interval is read at the model's mass alone (the mass profile's own box)."""


def _sliding_over_mass(
    run: Any,
    current: dict[tuple[str, str], float],
    first: Stage,
    object_body: str,
    m0: float,
    n_tot: int,
    noise: Noise,
) -> dict[str, Any]:
    """Refit the first sliding stage at each end of ``MASS_BOX`` and take the union of the
    95 % sets with the model-mass one (see ``ContactFit.sliding_over_mass``)."""
    lo, hi, unit = RANGES["sliding"]
    others = {k: v for k, v in current.items() if k != (first.group, first.field)}
    masses, ivs = [m0], [first.interval]
    for mult in MASS_BOX:
        m = mult * m0
        nz = {**others, (object_body, "mass"): m}
        base = run([nz])
        st, _ = _profile(
            run, nz, first.group, "sliding", lo, hi, unit, first.nominal, base, n_tot, noise
        )
        masses.append(m)
        ivs.append(st.interval)
    los = [iv.lo for iv in ivs]
    his = [iv.hi for iv in ivs]
    union_lo = None if any(v is None for v in los) else min(v for v in los if v is not None)
    union_hi = None if any(v is None for v in his) else max(v for v in his if v is not None)
    return {
        "group": first.group,
        "masses_kg": masses,
        "intervals": [[iv.lo, iv.hi] for iv in ivs],
        "bests": [iv.best for iv in ivs],
        "interval": [union_lo, union_hi],
    }


def _skipped(group: str, name: str, nom: float, cur: PushScore, why: str) -> Stage:
    e = np.zeros(0)
    return Stage(
        group,
        name,
        e,
        np.zeros((0, cur.chi2.shape[1])),
        e,
        e,
        nom,
        cur.chi2[0],
        float(cur.rms_m()[0]),
        float(cur.rms_rad()[0]),
        Interval(False, None, None, None, 1.0, f"not run: {why}"),
        skipped=why,
    )


def _profile(
    run: Any,
    current: dict[tuple[str, str], float],
    group: str,
    name: str,
    lo: float,
    hi: float,
    unit: str,
    nom: float,
    base: PushScore,
    n_tot: int,
    noise: Noise,
) -> tuple[Stage, PushScore]:
    seen: dict[float, tuple[np.ndarray, ...]] = {}

    def ev(vals: np.ndarray) -> np.ndarray:
        s = run([{**current, (group, name): float(v)} for v in vals])
        for i, v in enumerate(vals):
            seen[float(v)] = (s.chi2[i], s.sse_m[i], s.sse_rad[i])
        out: np.ndarray = s.chi2
        return out

    values, chi2 = refine(ev, lo, hi)
    rows = [seen[float(v)] for v in values]
    s_sorted = PushScore(
        np.stack([r[0] for r in rows]),
        base.n,
        np.stack([r[1] for r in rows]),
        base.n_pos,
        np.stack([r[2] for r in rows]),
        base.n_rot,
    )
    iv = interval(values, chi2.sum(1), n_tot, unit)
    k = int(np.argmin(chi2.sum(1)))
    d_model = (float(base.chi2[0].sum()) - float(chi2[k].sum())) / iv.scale
    excluded = bool(d_model > CHI2_95_1DOF and _gain(base, s_sorted, k, noise))
    stage = Stage(
        group,
        name,
        values,
        chi2,
        s_sorted.rms_m(),
        s_sorted.rms_rad(),
        nom,
        base.chi2[0],
        float(base.rms_m()[0]),
        float(base.rms_rad()[0]),
        iv,
        accepted=excluded and iv.identifiable,
        excluded=excluded,
    )
    return stage, s_sorted


def _holdout(
    run: Any, stages: Sequence[Stage], nominal: PushScore, n_logs: int
) -> dict[str, Any] | None:
    """Leave one push out: refit each accepted coefficient on the other pushes (its
    profile read over them alone), replay the held-out push, compare with the model."""
    if n_logs < 2:
        return None
    acc = [s for s in stages if s.accepted]
    cands = []
    for i in range(n_logs):
        others = [j for j in range(n_logs) if j != i]
        fit = {}
        for s in acc:
            iv = interval(s.values, s.chi2[:, others].sum(1), int(nominal.n[others].sum()))
            fit[(s.group, s.field)] = (
                iv.best
                if iv.best is not None
                else float(s.values[int(np.argmin(s.chi2[:, others].sum(1)))])
            )
        cands.append(fit)
    sc = run(cands)
    held = np.array([sc.chi2[i, i] for i in range(n_logs)])
    model = nominal.chi2[0]
    rms_fit = [float(np.sqrt(sc.sse_m[i, i] / sc.n_pos[i])) for i in range(n_logs)]
    rms_nom = [float(np.sqrt(nominal.sse_m[0, i] / nominal.n_pos[i])) for i in range(n_logs)]
    return {
        "chi2_fitted": held.tolist(),
        "chi2_model": model.tolist(),
        "rms_fitted_m": rms_fit,
        "rms_model_m": rms_nom,
        "values": [{f"{g}.{f}": v for (g, f), v in c.items()} for c in cands],
        "better": bool(held.sum() < model.sum()),
        "better_each": [bool(a < b) for a, b in zip(held, model, strict=True)],
    }
