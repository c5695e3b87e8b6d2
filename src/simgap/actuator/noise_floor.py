"""The noise floor: the least error the instrument that logged a joint allows, one definition
for every actuator verdict.

``NoiseFloor`` holds one joint's floor by its parts, each an RMS [rad] added in quadrature:
encoder quantisation (one count / sqrt(12)), sampling (timestamp error x joint speed), the
timing jitter of reads inside a frame where the rig states it (jitter x joint speed), and
the start state (the replay's change when its start moves within the encoder's half count:
the recorded first position is all a replay starts from, and a stiff servo at a coarse
physics step carries that error on, or amplifies it); and the model's own floor beside them
(``model_rad``: its step's discretisation where the recording follows continuous time). One
routine computes the parts from the logs (``instrument_floor``); the joint identification
adds the replay's start state (``noise_floor``), the actuator ladder has no replay of a model
at its null (the ideal actuator is the command) and states none.

The floor is stated in either metric: RMS (``rms_rad``, what the joint identification's RMS
residuals are held against) and MAE (``mae_rad``, the actuator ladder's held-out metric),
converted by ``MAE_PER_RMS``. Two properties of the joint identification's model are reported
beside the floor and never added to it, since every candidate model shares them: the
discretisation (the replay at its step against a quarter of it) and the chaos (the replay's
change for a change of the commands at the size of float rounding). See ``noise_floor``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.fit.verdict import least_residual

CHAOS_EPS_RAD = 1e-6
"""Command perturbation of the chaos probe [rad] (float32 rounding of a command is ~1e-7)."""

START_DRAWS = 4
"""Start states drawn per episode within the encoder's half count (fixed seed)."""

MAE_PER_RMS = math.sqrt(3.0) / 2.0
"""MAE / RMS of a uniform error: a uniform quantisation's MAE is count / 4 against its RMS
count / sqrt(12). Exact where quantisation is the whole floor (a bench log on a uniform
clock); a Gaussian error has sqrt(2 / pi) = 0.80, so on a floor of mixed parts the MAE
stated is at most 8 % above the true one."""


@dataclass(frozen=True)
class NoiseFloor:
    """The least error the instrument allows on one joint [rad], by its parts.

    Every part is an RMS error [rad]; the parts are independent and add in quadrature.

    Attributes:
        count_rad: one encoder count [rad]; its quantisation is ``quantisation_rad``.
        sampling_rad: the RMS joint speed times the RMS timestamp error against a uniform
            grid [rad].
        jitter_rad: the RMS joint speed times the reads' stated spread inside a frame /
            sqrt(12) [rad].
        start_state_rad: the replay's RMS change for a start known to half a count [rad];
            0 where no model is replayed at the null.
        model_rad: the model's own floor [rad] (its step's discretisation where the
            recording follows continuous time), in quadrature with the instrument's in
            ``rms_rad``, never in ``total_rad``.
        source: where the count came from (the rig's ``noise.encoder_rad``, ...).
    """

    count_rad: float
    sampling_rad: float = 0.0
    jitter_rad: float = 0.0
    start_state_rad: float = 0.0
    model_rad: float = 0.0
    source: str = ""

    @property
    def quantisation_rad(self) -> float:
        """One count / sqrt(12) [rad]: the RMS of a uniform rounding to the count."""
        return self.count_rad / math.sqrt(12.0)

    @property
    def total_rad(self) -> float:
        """The instrument's floor [rad RMS]: its parts in quadrature."""
        return math.sqrt(
            self.quantisation_rad**2
            + self.sampling_rad**2
            + self.jitter_rad**2
            + self.start_state_rad**2
        )

    @property
    def rms_rad(self) -> float:
        """The least RMS residual a verdict may expect [rad]: the instrument's floor with
        the model's own in quadrature (``simgap.fit.verdict.least_residual``)."""
        return least_residual({"total_rad": self.total_rad, "model_rad": self.model_rad})

    @property
    def mae_rad(self) -> float:
        """The same floor as a mean absolute error [rad]: ``rms_rad`` x ``MAE_PER_RMS``
        (count / 4 where quantisation is the whole floor)."""
        return self.rms_rad * MAE_PER_RMS

    def parts(self) -> dict[str, float]:
        """The parts and ``total_rad`` by name [rad], as findings.json states them."""
        return {
            "quantisation_rad": self.quantisation_rad,
            "sampling_rad": self.sampling_rad,
            "jitter_rad": self.jitter_rad,
            "start_state_rad": self.start_state_rad,
            "total_rad": self.total_rad,
        }


def instrument_floor(
    count_rad: float,
    times: Sequence[np.ndarray],
    positions: Sequence[np.ndarray],
    *,
    jitter_s: float = 0.0,
    start_state_rad: np.ndarray | None = None,
    source: str = "",
) -> list[NoiseFloor]:
    """The one routine of the floor: each joint's ``NoiseFloor`` over a set of logs.

    Sampling is the RMS speed times the RMS timestamp error against the uniform grid fitted
    to each log's timestamps (float32 timestamps, an irregular clock); jitter the RMS speed
    times ``jitter_s`` / sqrt(12) (reads spread uniformly over ``jitter_s`` inside a frame,
    as the rig states); both over every log's samples.

    Args:
        count_rad: one encoder count [rad].
        times: per log, its timestamps [s], shape (T,).
        positions: per log, the measured joints [rad], shape (T, J).
        jitter_s: the reads' spread inside a frame [s] (0: none stated).
        start_state_rad: per joint, the replay's change for a start within half a count
            [rad], shape (J,); None: no model is replayed at the null (0).
        source: where the count came from.

    Returns:
        One ``NoiseFloor`` per joint (column of ``positions``), in order.
    """
    samp, speed_all = [], []
    for t, q in zip(times, positions, strict=True):
        n = np.arange(t.size)
        fit = np.polyfit(n, t, 1)
        terr = t - np.polyval(fit, n)
        speed = np.gradient(q, t, axis=0)
        speed_all.append(speed)
        samp.append(speed * float(np.sqrt(np.mean(terr**2))))
    ds = rms(samp)
    dj = rms(speed_all) * float(jitter_s) / np.sqrt(12.0)
    d0 = np.zeros(ds.size) if start_state_rad is None else np.asarray(start_state_rad)
    return [
        NoiseFloor(
            count_rad=float(count_rad),
            sampling_rad=float(ds[a]),
            jitter_rad=float(dj[a]),
            start_state_rad=float(d0[a]),
            source=source,
        )
        for a in range(ds.size)
    ]


def rms(parts: Sequence[np.ndarray]) -> np.ndarray:
    """Per column, the RMS over the rows of every part [the parts' unit], shape (J,)."""
    out: np.ndarray = np.sqrt(np.mean(np.concatenate(parts) ** 2, axis=0))
    return out


def noise_floor(
    problem: Any,
    encoder_rad: float,
    jitter_s: float = 0.0,
) -> dict[str, dict[str, float]]:
    """The joint identification's floor: per joint, the parts of its ``NoiseFloor`` by name
    (``quantisation_rad``, ``sampling_rad``, ``jitter_rad``, ``start_state_rad``,
    ``total_rad``; ``instrument_floor`` on the fitted episodes) and two properties of the
    model, not in the total: ``discretisation_rad`` and ``chaos_rad``.

    Start state is the RMS change of the nominal replay over ``START_DRAWS`` start
    positions drawn uniformly within half an encoder count of the recorded one (fixed
    seed). Discretisation is the RMS difference between the nominal model replayed at its
    step and at a quarter of it, times 4/3 (Richardson: for an error linear in the step,
    e(h) - e(h/4) = 3/4 e(h)); chaos the RMS change of the nominal replay when its commands
    move by ``CHAOS_EPS_RAD`` (Gaussian, fixed seed). A recording made at the model's own step
    (a simulated rig) is replayed exactly by the true model whatever the discretisation, so
    that term says how far the model is from continuous time, not how closely a fit can
    come to the data.
    """
    from simgap.sim.replay import Replayer

    fine = Replayer.build(
        problem.spec,
        problem.all_joints,
        interp=problem.interp,
        physics_dt=problem.replayer.physics_dt / 4,
        nthread=1,
        source=problem.model_path,
        clock=problem.replayer.clock,
    )
    rows = problem.rows
    try:
        num, chaos, start = [], [], []
        rng = np.random.default_rng(0)
        for log in problem.logs:
            qa = problem.replayer.replay(None, log).q[0][:, rows]
            qb = fine.replay(None, log).q[0][:, rows]
            num.append(qa - qb)
            moved = dataclasses.replace(
                log,
                commands=np.asarray(log.commands)
                + CHAOS_EPS_RAD * rng.standard_normal(np.shape(log.commands)),
            )
            qc = problem.replayer.replay(None, moved).q[0][:, rows]
            chaos.append(np.where(np.isfinite(qc - qa), qc - qa, 0.0))
            for _ in range(START_DRAWS):
                q0 = np.asarray(log.q0) + rng.uniform(-0.5, 0.5, np.shape(log.q0)) * encoder_rad
                qs = problem.replayer.replay(None, dataclasses.replace(log, q0=q0)).q[0][:, rows]
                start.append(np.where(np.isfinite(qs - qa), qs - qa, 0.0))
    finally:
        fine.close()
    floors = instrument_floor(
        encoder_rad,
        [log.t for log in problem.logs],
        [tgt[:, rows] for tgt in problem.targets],
        jitter_s=jitter_s,
        start_state_rad=rms(start),
    )
    dn, dc = rms(num) * 4.0 / 3.0, rms(chaos)
    out = {}
    for a, j in enumerate(problem.joints):
        parts = floors[a].parts()
        total = parts.pop("total_rad")
        out[j] = {
            **parts,
            "discretisation_rad": float(dn[a]),
            "chaos_rad": float(dc[a]),
            "total_rad": total,
        }
    return out
