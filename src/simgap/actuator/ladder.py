"""The per-joint ladder: ideal -> delay_lag -> servo -> net, with a stop rule.

1. The cross-correlation delay (``delay.xcorr_delay``, from the data alone) bounds the
   delay from above; each rung with a delay profiles it with its dynamics (the dynamics
   refitted at every delay of a grid between 0 and that bound), never fitting it by gradient.
2. Each rung is fitted on training trajectories and scored on held-out ones: one trajectory
   type out at a time where the logs name types, else leave-one-trajectory-out (every log
   held out once). The logs given with ``--validate`` stay out of all of it and test the
   selected fit afterwards (a single training log: they are the held-out fold).
3. The ladder stops at the first rung whose held-out MAE is within the noise floor, or at
   the rung after which no richer rung improves the held-out MAE meaningfully (by more than
   ``improve_fraction`` and by more than the noise floor). The floor is the instrument's
   (``simgap.actuator.noise_floor``, the one the joint identification holds its RMS against)
   in MAE, never below one encoder count (``ladder_floor_rad``).

Fits are batched: all folds of a rung run in one vectorised simulation per iteration, warm
started from the fit on all training logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.actuator.folds import make_folds
from simgap.actuator.noise_floor import NoiseFloor, instrument_floor
from simgap.actuator.rungs import (
    LadderConfig,
    RungResult,
    rung_delay_lag,
    rung_ideal,
    rung_servo,
    xcorr_delays,
)
from simgap.actuator.servo import FREE_BAM, Drive, ParamSpace, ServoBatch
from simgap.errors import InputError
from simgap.values.actuator_log import ActuatorLog
from simgap.values.load import JointLoad

LADDER_FLOOR_COUNTS = 1.0
"""The fewest encoder counts of held-out MAE the ladder holds its rungs against.

The ladder's null is the ideal actuator (the command), which no servo is: a servo that is
exactly the rig's model still sags under gravity and lags its command. On the demo's twin
with the rig's own servo (kp 998, no lag or delay), chirped at 0.05-0.4 Hz, the ideal
actuator misses by 0.43-1.37 mrad MAE, between 1.1 and 3.6 times the instrument's floor in
MAE (count / 4 = 0.38 mrad). Held against that floor the ladder implicated wrist_flex and
left four joints inconclusive; held against one count (1.53 mrad) every joint is
eliminated. One count is the instrument's resolution, the smallest change one sample can
show."""


def log_floors(
    logs: Sequence[ActuatorLog], count_rad: float, jitter_s: float = 0.0, source: str = ""
) -> dict[str, NoiseFloor]:
    """Each joint's noise floor over the logs (``noise_floor.instrument_floor``: quantisation,
    sampling, jitter; no start state, since the null is the command and replays no model)."""
    floors = instrument_floor(
        count_rad,
        [np.asarray(lg.traj.t, dtype=float) for lg in logs],
        [np.asarray(lg.traj.q, dtype=float) for lg in logs],
        jitter_s=jitter_s,
        source=source,
    )
    return dict(zip(logs[0].traj.joint_names, floors, strict=True))


def ladder_floor_rad(floor: NoiseFloor) -> float:
    """The held-out MAE the ladder holds a joint's rungs and verdict against [rad]: the
    instrument's floor in MAE (``NoiseFloor.mae_rad``), never below ``LADDER_FLOOR_COUNTS``
    encoder counts."""
    return max(LADDER_FLOOR_COUNTS * floor.count_rad, floor.mae_rad)


@dataclass(frozen=True)
class JointResult:
    """The ladder of one joint.

    Attributes:
        joint: joint name.
        delay_s: delay of the selected rung [s] (the cross-correlation estimate for ideal).
        xcorr_delay_s: the cross-correlation delay, from the data alone: the upper bound of
            the rungs' delay profiles, not a fitted delay [s].
        selected: the rung kept.
        rungs: every rung fitted, in ladder order.
        stop_reason: why the ladder stopped there.
        dt: sample step of the fit [s].
        servo_params: the servo's six internal parameters (``servo.PARAM_NAMES``), if fitted.
        servo_free: which of them were fitted.
        servo_delay_s: the servo rung's transport delay [s].
        lag_s: the delay_lag rung's time constant [s].
        net: the trained network (``net.ActuatorNet``), if rung 4 ran.
        logs: the names of the held-out logs in order of ``validation_per_log_rad``.
        held_out: the held-out scheme (``rungs.HELD_OUT_SCHEMES``).
        friction_family: the BAM friction family of the servo rung (``m1`` ... ``m6``) on
            a known servo, else None.
        servo_family: the servo family (``xl330``, ``sts3215``) when known.
        bam_params: the servo rung's BAM-named parameters (kt, R, ..., delay_s) on a known
            servo, else None; ``servo_params`` then holds their M1 projection.
        skipped: rung -> why a rung the ladder would have climbed to was not fitted.
        test_logs: the ``--validate`` logs that every fold and the selection left out
            (``rungs.Folds.test``), in the order of each rung's ``test_per_log_rad``;
            empty when there were none, or when a single training log left no folds to
            select on (``held_out`` is then ``validate``).
    """

    joint: str
    delay_s: float
    xcorr_delay_s: float
    selected: str
    rungs: tuple[RungResult, ...]
    stop_reason: str
    dt: float
    servo_params: tuple[float, ...] | None = None
    servo_free: tuple[str, ...] = ()
    servo_delay_s: float = 0.0
    lag_s: float | None = None
    net: Any = None
    logs: tuple[str, ...] = ()
    held_out: str = "leave-one-trajectory-out"
    friction_family: str | None = None
    servo_family: str | None = None
    bam_params: dict[str, float] | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    test_logs: tuple[str, ...] = ()

    def rung(self, name: str) -> RungResult:
        """A rung by name; a miss lists the rungs fitted."""
        for r in self.rungs:
            if r.model == name:
                return r
        from simgap.errors import NameNotFoundError

        raise NameNotFoundError("rung", name, [r.model for r in self.rungs])


def check_excitation(logs: Sequence[ActuatorLog], joint: int, noise_floor: float) -> None:
    """Refuse a joint whose command never moves more than the noise floor in any log."""
    spans = [float(np.ptp(lg.traj.q_cmd[:, joint])) for lg in logs]
    if max(spans) <= max(noise_floor, 1e-9):
        name = logs[0].traj.joint_names[joint]
        raise InputError(
            file=logs[0].source,
            field=f"cmd_{name}",
            expected="a command that excites the joint (moves more than the noise floor)",
            got=f"a constant command (largest span {max(spans):.3g} rad over {len(logs)} logs)",
            fix="no excitation, nothing to identify: record while sending the chirps written by "
            "'simgap excite', then fit again",
        )


def build_batch(
    logs: Sequence[ActuatorLog], joint: int, loads: Sequence[JointLoad], drives: Sequence[Drive]
) -> ServoBatch:
    """One joint of L logs as a padded ServoBatch (all logs must share one step)."""
    dts = {round(lg.dt, 9) for lg in logs}
    if len(dts) != 1:
        raise InputError(
            file=logs[0].source,
            field="dt",
            expected="one sample step for all logs",
            got=sorted(dts),
            fix="resample the logs to one step",
        )
    T = max(lg.traj.n_samples for lg in logs)

    def pad(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a, np.full(T - a.size, a[-1])])

    qd0 = []
    for lg in logs:
        if lg.traj.qd is not None:
            qd0.append(float(lg.traj.qd[0, joint]))
        else:
            q = lg.traj.q[:, joint]
            qd0.append(float((q[min(2, q.size - 1)] - q[0]) / (min(2, q.size - 1) * lg.dt)))
    return ServoBatch(
        dt=float(logs[0].dt),
        cmd=np.array([pad(lg.traj.q_cmd[:, joint]) for lg in logs]),
        q=np.array([pad(lg.traj.q[:, joint]) for lg in logs]),
        mask=np.array(
            [np.r_[np.ones(lg.traj.n_samples), np.zeros(T - lg.traj.n_samples)] for lg in logs]
        ),
        enable=np.array([pad(lg.torque_enable[:, joint].astype(float)) for lg in logs]) > 0.5,
        qd0=np.array(qd0),
        gain=np.array([d.gain for d in drives]),
        vin=np.array([d.vin for d in drives]),
        max_pwm=np.array([d.max_pwm for d in drives]),
        tau_max=np.array([ld.tau_max for ld in loads]),
        inertia=np.array([ld.inertia for ld in loads]),
        g_sin=np.array([ld.g_sin for ld in loads]),
        g_cos=np.array([ld.g_cos for ld in loads]),
        qd=np.array(
            [
                pad(lg.traj.qd[:, joint])
                if lg.traj.qd is not None
                else pad(np.gradient(lg.traj.q[:, joint], lg.dt))
                for lg in logs
            ]
        ),
        tau=np.array(
            [
                pad(lg.traj.tau[:, joint])  # type: ignore[index]
                for lg in logs
            ]
        )
        if all(lg.traj.tau is not None for lg in logs)
        else None,
        vin_t=np.array([pad(lg.vin) for lg in logs])  # type: ignore[arg-type]
        if all(
            lg.vin is not None and d.known and d.logged_voltage
            for lg, d in zip(logs, drives, strict=True)
        )
        else None,
        i_max=np.array([d.current_limit_a for d in drives], dtype=float)
        if any(d.current_limit_a is not None for d in drives)
        else None,
    )


def select(rungs: Sequence[RungResult], config: LadderConfig) -> tuple[str, str]:
    """The stop rule: (selected rung, reason)."""
    floor = config.noise_floor_rad
    for r in rungs:
        if r.validation_mae_rad <= floor:
            return r.model, (
                f"{r.model} is within the noise floor ({config.noise_source}, "
                f"{floor:.3g} rad) on held-out trajectories"
            )
    for i, r in enumerate(rungs):
        later = rungs[i + 1 :]
        if all(not _improves(r.validation_mae_rad, s.validation_mae_rad, config) for s in later):
            if later:
                return r.model, (
                    f"no richer rung improves on {r.model}'s held-out MAE "
                    f"({r.validation_mae_rad:.3g} rad) by more than "
                    f"{config.improve_fraction:.0%}"
                )
            return r.model, (
                f"{r.model} is the richest rung fitted; its held-out MAE "
                f"{r.validation_mae_rad:.3g} rad stays above the noise floor"
            )
    return rungs[-1].model, "last rung"


def _improves(old: float, new: float, config: LadderConfig) -> bool:
    return new < old * (1.0 - config.improve_fraction) and old - new > config.noise_floor_rad


def fit_joint(
    logs: Sequence[ActuatorLog],
    joint: str,
    loads: Sequence[JointLoad],
    drives: Sequence[Drive],
    config: LadderConfig,
    *,
    n_validate: int = 0,
) -> JointResult:
    """Climb the ladder for one joint.

    Args:
        logs: training logs followed by ``n_validate`` held-out logs, one common step.
        joint: the joint's name in the logs.
        loads: one JointLoad per log.
        drives: one Drive per log.
        config: noise floor and fit settings.
        n_validate: how many of the last logs are held out (0: leave-one-out).
    """
    j = logs[0].traj.joint_index(joint)
    train_logs = list(logs[: len(logs) - n_validate])
    check_excitation(train_logs, j, config.noise_floor_rad)
    folds = make_folds(len(train_logs), n_validate, _labels(train_logs, "trajectory"))
    gain_folds = None
    kps = _labels(train_logs, "kp")
    if config.gain_out and kps is not None and len(set(kps)) >= 2:
        gain_folds = make_folds(len(train_logs), n_validate, kps, scheme="leave-one-gain-out")
    batch = build_batch(logs, j, loads, drives)
    delays = xcorr_delays(batch, folds, config.max_delay_s, logs[0].source)
    rungs = [rung_ideal(batch, folds, config)]
    if rungs[0].validation_mae_rad > config.noise_floor_rad:
        kmax = int(np.ceil(min(float(delays[0]), config.max_delay_s) / batch.dt))
        dl, dl_delays, lags = rung_delay_lag(batch, folds, kmax, config)
        rungs.append(dl)
    else:
        dl_delays, lags = np.array([delays[0]]), np.array([np.nan])
    servo: tuple[RungResult, np.ndarray, ParamSpace, float] | None = None
    phys = None
    net = None
    skipped: dict[str, str] = {}
    fams = {d.family for d in drives}
    if min(r.validation_mae_rad for r in rungs) > config.noise_floor_rad:
        if len(fams) == 1 and None not in fams:
            from simgap.actuator.families import servo_family
            from simgap.actuator.net import grouped_folds
            from simgap.actuator.physical_rung import rung_physical

            # many logs without types (LeRobot episodes): at most 4 held-out groups
            phys = rung_physical(
                batch,
                grouped_folds(folds),
                gain_folds,
                servo_family(str(fams.pop())),
                config,
                fit_delay=any(d.transport_delay for d in drives),
            )
            servo = (
                phys.result,
                phys.legacy_params,
                ParamSpace(FREE_BAM),
                float(phys.fit.params(0).get("delay_s", 0.0)),
            )
        else:
            known = all(d.known for d in drives)
            servo = rung_servo(batch, folds, known, float(delays[0]), config)
        rungs.append(servo[0])
        if config.use_net and servo[0].validation_mae_rad > config.noise_floor_rad:
            from simgap.actuator import net as net_mod

            if net_mod.torch_available():
                res, net = net_mod.rung_net(batch, folds, servo[1], config)
                rungs.append(res)
            else:
                skipped["net"] = (
                    "torch is not installed (install the 'net' extra: pip install 'simgap[net]')"
                )
    selected, reason = select(rungs, config)
    if skipped:
        reason += "".join(f"; the {k} rung was not fitted: {v}" for k, v in skipped.items())
    delay_sel = {"ideal": float(delays[0]), "delay_lag": float(dl_delays[0])}.get(
        selected, servo[3] if servo else float(delays[0])
    )
    return JointResult(
        joint=joint,
        delay_s=delay_sel,
        xcorr_delay_s=float(delays[0]),
        selected=selected,
        rungs=tuple(rungs),
        stop_reason=reason,
        dt=batch.dt,
        servo_params=None if servo is None else tuple(float(x) for x in servo[1]),
        servo_free=() if servo is None else servo[2].free,
        servo_delay_s=0.0 if servo is None else servo[3],
        lag_s=None if np.isnan(lags[0]) else float(lags[0]),
        net=net,
        logs=tuple(lg.source for lg in logs[len(logs) - n_validate :])
        if folds.scheme == "validate"
        else tuple(lg.source for lg in train_logs),
        test_logs=tuple(lg.source for lg in logs[len(logs) - n_validate :])
        if folds.test is not None
        else (),
        held_out=folds.scheme,
        friction_family=None if phys is None else phys.family,
        servo_family=None if phys is None else phys.fit.space.servo.name,
        bam_params=None if phys is None else phys.fit.params(0),
        skipped=skipped,
    )


def _labels(logs: Sequence[ActuatorLog], key: str) -> list[str] | None:
    """Each log's header value ``key`` (trajectory type, gain), or None if one lacks it."""
    vals = [lg.meta.get(key) for lg in logs]
    return None if any(v is None for v in vals) else [str(v) for v in vals]
