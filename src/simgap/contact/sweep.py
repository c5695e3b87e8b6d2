"""The contact sweep: replay every logged push once per value of ONE coefficient.

Every value is one candidate model in ONE batched replay per push; each is scored by the
RMS distance [m] between the simulated and the logged object position over all pushes,
and the curve's 95 % interval is read from it as a likelihood-ratio set with the tracker
noise (``contact.profile.interval``); a flat curve is "not identifiable", never a point.
The result is a 1-D curve a person can read. (``contact.identify`` is the branch's
method: pair coefficients, orientation scored too.) A two-coefficient sweep is refused
unless forced:
MuJoCo's soft-contact solver couples the coefficients (friction cones, solref and solimp
enter the same constraint solve), so a 2-D error surface has ridges and valleys that do
not separate into per-coefficient answers, and it cannot be read like a curve.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.contact.profile import interval
from simgap.errors import InputError
from simgap.fit import search
from simgap.fit.local_backend import LocalBackend
from simgap.fit.params import Param, ParamSet
from simgap.fit.replay_problem import ReplayProblem
from simgap.values.push import PushLog

TWO_D_REFUSAL = (
    "a two-coefficient contact sweep is refused: MuJoCo's soft-contact solver couples the "
    "coefficients (they enter one constraint solve), so the 2-D error surface has ridges "
    "and valleys that do not separate into answers per coefficient and cannot be read. "
    "Sweep one coefficient with the others at measured values; pass force=True (--force) "
    "to compute the surface anyway."
)


@dataclass(frozen=True)
class Coefficient:
    """One coefficient to sweep.

    Attributes:
        kind: ``geom_friction``, ``pair_friction`` or ``mass`` (``simgap.sim.model``).
        target: geom(s) (``a+b``), pair or body.
        values: SI values to try, shape (K,).
    """

    kind: str
    target: str
    values: tuple[float, ...]


def rms_m(r: np.ndarray) -> float:
    """RMS object-position error [m] from stacked (x, y, z) residuals."""
    return float(np.sqrt(np.mean(np.sum(r.reshape(-1, 3) ** 2, axis=1))))


def replay_logs(logs: Sequence[PushLog], joints: Sequence[str]) -> list[Any]:
    """The logs as ``ReplayLog`` (the object starts at its rest pose)."""
    from simgap.sim.replay import ReplayLog

    return [
        ReplayLog(
            t=lg.t,
            commands=lg.cmd,
            joints=tuple(joints),
            q0=lg.q0,
            obj_pose0=lg.obj_pose0,
            source=lg.source,
        )
        for lg in logs
    ]


def push_problem(
    model: str,
    joints: Sequence[str],
    logs: Sequence[PushLog],
    object_body: str,
    params: ParamSet,
    *,
    interp: str = "hold",
    delay_s: float = 0.0,
    physics_dt: float | None = None,
    model_is_xml: bool = False,
) -> ReplayProblem:
    """The replay problem of a push: score the object position against the logged one."""
    return ReplayProblem(
        model=model,
        joints=tuple(joints),
        logs=tuple(replay_logs(logs, joints)),
        targets=tuple(lg.obj_pos for lg in logs),
        params=params,
        score="object",
        object_body=object_body,
        interp=interp,
        delay_s=delay_s,
        physics_dt=physics_dt,
        model_is_xml=model_is_xml,
    )


def nominal_of(model: str, kind: str, target: str, model_is_xml: bool = False) -> float:
    """The model's current value of a coefficient."""
    from simgap.sim.model import get_param, load_model, spec_from_xml

    if model_is_xml:
        return get_param(spec_from_xml(model).compile(), kind, target)
    return get_param(load_model(model), kind, target)


def sweep(
    model: str,
    joints: Sequence[str],
    logs: Sequence[PushLog],
    object_body: str,
    coefficients: Sequence[Coefficient],
    *,
    force: bool = False,
    interp: str = "hold",
    delay_s: float = 0.0,
    physics_dt: float | None = None,
    model_is_xml: bool = False,
    noise_m: float = 0.002,
) -> dict[str, Any]:
    """Sweep one coefficient (or, forced, a grid of two) against every logged push.

    Returns:
        For one coefficient: ``{"name", "kind", "target", "values", "loss" (RMS object
        error [m] per value), "best_value", "refined_value", "best_loss", "nominal",
        "nominal_loss", "flat", "interval", "identifiable", "reason", "pushes"}``;
        ``flat`` is True when the curve is not identifiable (``interval`` then holds the
        range that fits, None for an open end). Forced two: ``{"names",
        "values": [v1, v2], "loss": K1 x K2 grid}``.

    Raises:
        InputError: more than one coefficient without ``force``, or none.
    """
    if not coefficients:
        raise InputError(field="coefficients", expected="one coefficient to sweep", got=[])
    if len(coefficients) > 2 or (len(coefficients) == 2 and not force):
        raise InputError(
            field="coefficients",
            expected="ONE coefficient",
            got=[f"{c.target}.{c.kind}" for c in coefficients],
            fix=TWO_D_REFUSAL,
        )
    params = []
    for c in coefficients:
        nom = nominal_of(model, c.kind, c.target, model_is_xml)
        lo, hi = min(c.values), max(c.values)
        params.append(
            Param(
                c.kind,
                c.target,
                nom,
                min(lo, nom) * 0.999 - 1e-12,
                max(hi, nom) * 1.001 + 1e-12,
                "box",
            )
        )
    ps = ParamSet(tuple(params))
    prob = push_problem(
        model,
        joints,
        logs,
        object_body,
        ps,
        interp=interp,
        delay_s=delay_s,
        physics_dt=physics_dt,
        model_is_xml=model_is_xml,
    )
    be = LocalBackend(prob)
    try:
        if len(coefficients) == 1:
            c = coefficients[0]
            vals = np.sort(np.asarray(c.values, dtype=float))
            out = search.sweep(be, ps, 0, vals, loss=rms_m)
            curve = np.asarray(out["loss"])
            n_pos = sum(len(lg.t) for lg in logs)
            iv = interval(vals, curve**2 * n_pos / noise_m**2, 3 * n_pos)
            out.update(
                kind=c.kind,
                target=c.target,
                nominal=params[0].nominal,
                flat=not iv.identifiable,
                unit="m",
                interval=[iv.lo, iv.hi],
                identifiable=iv.identifiable,
                reason=iv.reason,
                pushes=len(logs),
                noise_m=noise_m,
            )
            if not iv.identifiable:  # never a point from a curve that cannot see it
                out["refined_value"] = out["best_value"] = None
            return out
        c1, c2 = coefficients
        xs = np.array(
            [[ps.params[0].to_x(a), ps.params[1].to_x(b)] for a in c1.values for b in c2.values]
        )
        rs = be.residuals(xs)
        grid = np.array([rms_m(r) for r in rs]).reshape(len(c1.values), len(c2.values))
        return {
            "names": ps.names,
            "values": [list(c1.values), list(c2.values)],
            "loss": grid.tolist(),
            "warning": TWO_D_REFUSAL,
        }
    finally:
        be.close()
