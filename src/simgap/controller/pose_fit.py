"""SIMPLER's controller identification on the rig's own logs.

Replay the logged actions open loop from each episode's logged start pose and score the
simulated 6D end-effector pose trajectory of ``rig.ee_site`` against the logged one with
SIMPLER's loss: mean translation error [m] + mean rotation error, where the rotation error
is arcsin(||R_sim - R_log||_F / (2 sqrt 2)) = theta / 2, half the geodesic angle [rad],
weight 1 (reference evaluation.md 2). Per-joint kp and kv of the position actuators are
searched over a normalised [0, 1] box ([0.25, 4] x nominal) twice: by simulated annealing
(``scipy.optimize.dual_annealing``, as SIMPLER annealed) and by Levenberg-Marquardt
(``mujoco.minimize``, on the squared-error form of the same residuals: translation vector
and half-angle rotation vector per sample). Both are reported with 95 % intervals, the
parameters at a bound and cond(J^T J), the half-widths widened for the residuals'
autocorrelation (``simgap.controller.widen``). A fit whose loss stays above
``misfit.MISFIT_FLOORS`` noise floors identifies no gain (its local intervals belong to a
model that misses the data: the replay has no delay or lag, so kp and kv absorb them), nor
does a fit that stopped on a slope of the squared residual (``simgap.controller.misfit``).

Joint-target actions replay directly; end-effector-delta actions go through the rig's
controller (``simgap.sim.ik.ee_delta_targets``: target-delta pose, damped least-squares IK).
The logged pose is the dataset's ``observation.ee_pose`` (x, y, z, qw, qx, qy, qz) when
present, else forward kinematics of the logged measured joints in the rig model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.controller.misfit import (
    MISFIT_FLOORS,
    gate,
    reach_nominal,
    slope_reason,
    withdraw,
    withdraw_table,
)
from simgap.controller.widen import pose_inflation, widen
from simgap.errors import InputError
from simgap.finding import Verdict
from simgap.fit import search
from simgap.fit.backends import LOCAL, Compute, make_backend
from simgap.fit.local_backend import LocalBackend
from simgap.fit.params import ParamSet, box
from simgap.fit.replay_problem import ReplayProblem
from simgap.rig import Rig

EE_POSE_KEY = "observation.ee_pose"
BOX = (0.25, 4.0)
"""The search box, as multiples of the model's nominal kp and kv."""


@dataclass(frozen=True)
class Episode:
    """One logged episode, in model units.

    Attributes:
        t: times [s], shape (T,).
        q: measured joints [rad], shape (T, J) in rig order.
        action: the logged action, shape (T, J) joint targets [rad] (``joint_position``)
            or (T, >= 6) end-effector deltas [m, rad] (``ee_delta``).
        ee_pose: logged end-effector pose, shape (T, 7), or None.
    """

    t: np.ndarray
    q: np.ndarray
    action: np.ndarray
    ee_pose: np.ndarray | None = None


def _arm_joints(rig: Rig) -> list[str]:
    return [j.name for j in rig.joints if not j.gripper]


def controller_problem(rig: Rig, episodes: Sequence[Episode]) -> ReplayProblem:
    """The replay problem of the controller fit (see the module docstring)."""
    from simgap.sim.ik import ee_delta_targets, frame_poses
    from simgap.sim.model import get_param, load_model
    from simgap.sim.replay import ReplayLog

    if rig.ee_site is None:
        raise InputError(
            file=rig.source,
            field="model.ee_site",
            expected="the end-effector site or body",
            got="nothing",
            fix="set model.ee_site in rig.toml (e.g. gripperframe)",
        )
    if not episodes:
        raise InputError(file=rig.evidence.dataset, expected="at least one episode", got="none")
    model = load_model(rig.model_path)
    joints = rig.joint_names
    logs, targets = [], []
    for k, ep in enumerate(episodes):
        q0 = ep.q[0]
        if rig.action_space == "ee_delta":
            arm = _arm_joints(rig)
            idx = [joints.index(j) for j in arm]
            cmd = np.repeat(q0[None], len(ep.t), axis=0)
            cmd[:, idx] = ee_delta_targets(
                model, arm, q0[idx], ep.action[:, :6] * rig.deploy.action_scale, rig.ee_site
            )
            g = rig.gripper
            if g is not None and ep.action.shape[1] > 6:
                cmd[:, joints.index(g.name)] = g.unit.to_rad(ep.action[:, 6])
        else:
            cmd = ep.action
        target = (
            ep.ee_pose if ep.ee_pose is not None else frame_poses(model, joints, ep.q, rig.ee_site)
        )
        logs.append(
            ReplayLog(
                t=ep.t,
                commands=cmd,
                joints=joints,
                q0=q0,
                source=f"{rig.evidence.dataset} episode {k}",
            )
        )
        targets.append(target)
    keys = [(kind, j) for j in _arm_joints(rig) for kind in ("kp", "kv")]
    nominal = {key: get_param(model, *key) for key in keys}
    ranges = {key: (BOX[0] * v, BOX[1] * v) for key, v in nominal.items()}
    params: ParamSet = box(keys, nominal, ranges)
    return ReplayProblem(
        model=str(rig.model_path),
        joints=joints,
        logs=tuple(logs),
        targets=tuple(targets),
        params=params,
        score="ee",
        ee_site=rig.ee_site,
        interp=rig.command_interp,
        physics_dt=rig.physics_dt_s,
    )


def pose_loss(problem: ReplayProblem, r: np.ndarray) -> float:
    """SIMPLER's loss from one stacked residual vector: the mean over episodes of the mean
    translation error plus mean half-angle rotation error."""
    out, start = [], 0
    for tgt in problem.targets:
        n = tgt.shape[0] * 6
        block = r[start : start + n].reshape(-1, 6)
        start += n
        out.append(
            np.mean(np.linalg.norm(block[:, :3], axis=1))
            + np.mean(np.linalg.norm(block[:, 3:], axis=1)) / problem.rot_weight
        )
    return float(np.mean(out))


def noise_floor(rig: Rig, problem: ReplayProblem) -> float:
    """The loss one encoder count of error per joint can cause: reach * e + e / 2."""
    from simgap.sim.ik import reach
    from simgap.sim.model import load_model

    log = problem.logs[0]
    span = reach(load_model(rig.model_path), log.joints, log.q0, str(problem.ee_site))
    return float(rig.encoder_rad * (span + 0.5))


def fit_controller(
    problem: ReplayProblem,
    *,
    seed: int = 0,
    maxfun: int = 300,
    max_iter: int = 20,
    backend: Compute | str = LOCAL,
) -> dict[str, Any]:
    """Fit kp and kv by annealing and by least squares; see the module docstring.

    Returns:
        ``{"params", "loss_before", "loss_after", "intervals", "methods", "best",
        "identified", "at_bounds", "cond"}``; ``params`` are the better method's values,
        ``intervals`` its 95 % half-widths {joint: {"kp", "kv"}} (None when infinite, or
        withdrawn because the search stopped on a slope: ``misfit.slope_reason``).
    """
    be = make_backend(problem, backend)
    try:

        def loss(r: np.ndarray) -> float:
            return pose_loss(problem, r)

        r0 = be.residuals(problem.params.x_nominal[None])[0]
        before = loss(r0)
        lsq = search.least_squares(be, problem.params, max_iter=max_iter)
        r_lsq = be.residuals(lsq.x[None])[0]
        ann = search.dual_annealing(
            be, problem.params, seed=seed, maxfun=maxfun, loss=loss, x0=lsq.x
        )
        r_ann = be.residuals(ann.x[None])[0]
    finally:
        be.close()
    lsq_loss, ann_loss = loss(r_lsq), loss(r_ann)
    # independent-residual intervals, widened for the trajectory's autocorrelation (widen.py)
    infl = {"least_squares": pose_inflation(problem.targets, r_lsq)}
    infl["dual_annealing"] = pose_inflation(problem.targets, r_ann)
    lsq, ann = widen(lsq, infl["least_squares"]), widen(ann, infl["dual_annealing"])
    methods = {}
    for name, res, lv in (("least_squares", lsq, lsq_loss), ("dual_annealing", ann, ann_loss)):
        stall = slope_reason(res)
        methods[name] = {
            "loss_after": lv,
            "table": res.table() if stall is None else withdraw_table(res.table(), stall),
            "at_bounds": res.at_bounds,
            "cond": res.cond,
            "n_evals": res.n_evals,
            "seed": res.seed,
        }
    best_name, best = ("least_squares", lsq) if lsq_loss <= ann_loss else ("dual_annealing", ann)
    params: dict[str, dict[str, float]] = {}
    intervals: dict[str, dict[str, float | None]] = {}
    identified: dict[str, dict[str, bool]] = {}
    for p, e, h in zip(problem.params.params, best.estimate, best.half_width, strict=True):
        params.setdefault(p.target, {})[p.kind] = e.value
        intervals.setdefault(p.target, {})[p.kind] = float(h) if np.isfinite(h) else None
        identified.setdefault(p.target, {})[p.kind] = e.identified
    fit = {
        "params": params,
        "loss_before": before,
        "loss_after": min(lsq_loss, ann_loss),
        "intervals": intervals,
        "identified": identified,
        "methods": methods,
        "best": best_name,
        "at_bounds": best.at_bounds,
        "cond": best.cond,
        "why": best.estimate.reasons,
        "interval_inflation": float(np.sqrt(infl[best_name])),
    }
    stall = slope_reason(best)  # intervals only at a minimum (misfit.py)
    return fit if stall is None else withdraw(fit, stall)


def error_traces(
    problem: ReplayProblem, x_before: np.ndarray, x_after: np.ndarray
) -> dict[str, list[float]]:
    """Translation error [m] over time of the first episode, before and after the fit."""
    be = LocalBackend(problem)
    try:
        rs = be.residuals(np.stack([x_before, x_after]))
    finally:
        be.close()
    n = problem.targets[0].shape[0] * 6
    tr = [np.linalg.norm(r[:n].reshape(-1, 6)[:, :3], axis=1) for r in rs]
    return {
        "t": [float(v) for v in problem.logs[0].t],
        "before_m": tr[0].tolist(),
        "after_m": tr[1].tolist(),
    }


def verdict_for(loss_before: float, loss_after: float, floor: float) -> Verdict:
    """Eliminated when the nominal gains already match to within 3 noise floors;
    implicated when the fit halves the loss by more than 3 noise floors."""
    if loss_before <= MISFIT_FLOORS * floor:
        return Verdict.ELIMINATED
    if loss_after < 0.5 * loss_before and loss_before - loss_after > 3 * floor:
        return Verdict.IMPLICATED
    return Verdict.INCONCLUSIVE


def controller_report(
    rig: Rig,
    episodes: Sequence[Episode],
    *,
    seed: int = 0,
    maxfun: int = 300,
    max_iter: int = 20,
    compute: Compute = LOCAL,
) -> dict[str, Any]:
    """The whole controller fit as the CLI's JSON: ``{"branch": "controller", "verdict",
    "params", "loss_before", "loss_after", "intervals", ...}``.

    The gains are identified only where the fit explains the data (``misfit.gate``: its pose
    loss within ``MISFIT_FLOORS`` noise floors); above that every gain is declared not
    identifiable with the reason, and no local interval is stated."""
    problem = controller_problem(rig, episodes)
    fit = fit_controller(problem, seed=seed, maxfun=maxfun, max_iter=max_iter, backend=compute)
    floor = noise_floor(rig, problem)
    fit = gate(fit, floor)  # no interval from a model that misses its data (misfit.py)
    if fit["loss_before"] <= MISFIT_FLOORS * floor:  # the nominal fits too: cover it
        nominal: dict[str, dict[str, float]] = {p.target: {} for p in problem.params.params}
        for p in problem.params.params:
            nominal[p.target][p.kind] = p.nominal
        fit = reach_nominal(fit, nominal)
    verdict = verdict_for(fit["loss_before"], fit["loss_after"], floor)
    x_best = problem.params.to_x([fit["params"][p.target][p.kind] for p in problem.params.params])
    return {
        "branch": "controller",
        "verdict": verdict.value,
        **fit,
        "noise_floor": floor,
        "seed": seed,
        "loss_measure": "mean translation error [m] + mean arcsin(||R1-R2||_F/(2 sqrt 2))"
        " = half geodesic angle [rad], weight 1",
        "traces": error_traces(problem, problem.params.x_nominal, x_best),
    }


def contract_figures(rep: dict[str, Any]) -> dict[str, Any]:
    """``params`` (identified only), ``params_interval`` [lo, hi] and ``not_identifiable``
    {joint: {kind: reason}} of a SIMPLER fit (``controller_report``)."""
    params: dict[str, dict[str, float]] = {}
    iv: dict[str, dict[str, list[float]]] = {}
    unid: dict[str, dict[str, str]] = {}
    for j, kinds in rep["params"].items():
        for k, v in kinds.items():
            h = rep["intervals"][j][k]
            if rep["identified"][j][k] and h is not None:
                params.setdefault(j, {})[k] = v
                iv.setdefault(j, {})[k] = [v - h, v + h]
            else:
                unid.setdefault(j, {})[k] = rep["why"].get(f"{j}.{k}") or (
                    "infinite interval" if h is None else f"95% half-width {h:.3g}"
                )
    return {"params": params, "params_interval": iv, "not_identifiable": unid}
