"""``simgap excite --for DIR``: the episode to record next, designed from a diagnosis.

``estimate_from_diagnosis`` reads what the actuator finding of ``findings.json`` left open:
every (joint, parameter) declared not identifiable, and every delay on a ridge, with the
current estimate (the best fit whole, ``params_fitted``; the delays; the recorder's clock).
``next_motion`` designs, per such joint, the motion that narrows it most
(``excite_design``), assembles them into one episode, predicts each interval on the
recording plus that episode, and (``check``) simulates the episode on the current estimate,
adds it to the recording and runs the identification, so the prediction is held against a
fit. The caller writes the episode as a LeRobot v3 dataset (``episode_frames``) with
``readme`` beside it.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from simgap.actuator.excite import DEFAULT_VMAX_RAD_S
from simgap.actuator.excite_design import (
    DELAY,
    SEGMENT_S,
    Prediction,
    Segment,
    assemble,
    candidates,
    predict,
    sensitivities,
)
from simgap.actuator.joint_problem import KINDS, JointProblem
from simgap.errors import InputError
from simgap.figures.actuator import JointDynamicsDetails, JointDynamicsFigures, LadderFigures
from simgap.rig import Rig


@dataclass(frozen=True)
class Estimate:
    """What a diagnosis left open, and the estimate it stands at.

    Attributes:
        rig: the rig's name the diagnosis was run on.
        params: joint -> kind -> the best fit [SI] (identified or not).
        delay_s: joint -> the best delay [s].
        clock: the recorder's clock the fit replays with.
        targets: (joint, kind or ``delay``, the diagnosis's reason), in joint order.
        fitted_episodes: the recording's episodes the diagnosis fitted (the first ones).
        fit_seconds: seconds of each it replayed [s].
    """

    rig: str
    params: Mapping[str, Mapping[str, float]]
    delay_s: Mapping[str, float]
    clock: str
    targets: tuple[tuple[str, str, str], ...]
    fitted_episodes: int = 2
    fit_seconds: float = 8.0

    def only(self, kinds: Sequence[str] = (), joints: Sequence[str] = ()) -> Estimate:
        """The same estimate with only the targets of ``kinds`` on ``joints`` (empty: all);
        a name that is no target is an error listing the targets."""
        from dataclasses import replace

        for asked, have, what, opt in (
            (kinds, {t[1] for t in self.targets}, "parameter", "--param"),
            (joints, {t[0] for t in self.targets}, "joint", "--joint"),
        ):
            missing = sorted(set(asked) - have)
            if missing:
                raise InputError(
                    field=opt,
                    expected=f"a {what} the diagnosis "
                    f"declared not identifiable: {', '.join(sorted(have))}",
                    got=", ".join(missing),
                    fix=f"name one of those {what}s",
                )
        return replace(
            self,
            targets=tuple(
                t
                for t in self.targets
                if (not kinds or t[1] in kinds) and (not joints or t[0] in joints)
            ),
        )


def estimate_from_identification(
    js: Mapping[str, Any] | JointDynamicsDetails, rig: str, source: Any = None
) -> Estimate:
    """The ``Estimate`` of an identification (``identify_rig``'s JSON, or the actuator
    finding's details, which carry it whole)."""
    det = (
        js
        if isinstance(js, JointDynamicsDetails)
        else JointDynamicsDetails.from_mapping(
            {k: v for k, v in js.items() if not str(k).startswith("_")},
            source,
            "identification",
            strict=False,
        )
    )
    for key, table in (
        ("not_identifiable", det.not_identifiable),
        ("params_fitted", det.params_fitted),
        ("delay_s", det.delay_s),
    ):
        if not table:
            raise InputError(
                file=source,
                field=f"actuator finding: {key}",
                expected="the joint identification of a LeRobot dataset (a joint -> value table)",
                got="nothing",
                fix="run 'simgap diagnose RIG --out DIR' on a rig whose "
                "evidence is a LeRobot dataset, and pass DIR",
            )
    targets = []
    for j, kinds in det.not_identifiable.items():
        for kind, why in kinds.items():
            if kind in KINDS or kind == DELAY:
                targets.append((str(j), str(kind), str(why)))
    clock = det.clock.chosen if det.clock is not None and det.clock.chosen else "exact"
    return Estimate(
        rig=rig,
        params={j: {k: float(v) for k, v in p.items()} for j, p in det.params_fitted.items()},
        delay_s={j: float(v) for j, v in det.delay_s.items()},
        clock=clock,
        targets=tuple(targets),
        fitted_episodes=det.fitted_episodes if det.fitted_episodes is not None else 2,
        fit_seconds=det.fit_seconds if math.isfinite(det.fit_seconds) else 8.0,
    )


def estimate_from_diagnosis(path: str | Path) -> Estimate:
    """The ``Estimate`` of ``DIR/findings.json`` (or the file itself)."""
    from simgap.finding import load_diagnosis

    p = Path(path)
    f = p / "findings.json" if p.is_dir() else p
    if not f.is_file():
        raise InputError(
            file=p,
            field="--for",
            expected="a diagnosis folder holding findings.json",
            got="no such folder" if not p.exists() else "a folder without findings.json",
            fix="run 'simgap diagnose RIG --out DIR' and pass --for DIR",
        )
    diag = load_diagnosis(f)
    act = next((x for x in diag.findings if x.branch == "actuator"), None)
    if act is not None and from_bench_logs(act):
        raise InputError(
            file=f,
            field="findings: actuator",
            expected="the joint identification of a LeRobot dataset against the rig's MJCF",
            got="the bench ladder's fit: the rig names [evidence] actuator_logs, "
            "so diagnose fitted the servo bench logs instead (their rungs have "
            "no intervals to narrow); excite --for does not design from bench "
            "logs",
            fix="diagnose a copy of the rig without [evidence] "
            "actuator_logs and actuator_format (the dataset and its MJCF are "
            "then identified joint by joint) and pass that diagnosis",
        )
    if act is None or act.kind != JointDynamicsFigures.kind:
        raise InputError(
            file=f,
            field="findings: actuator",
            expected="an actuator finding from a LeRobot dataset (the joint identification)",
            got="none"
            if act is None
            else f"verdict {act.verdict.value} without the identification's figures",
            fix="diagnose a rig whose evidence is a LeRobot dataset with its "
            "MJCF ('simgap diagnose RIG --out DIR')",
        )
    return estimate_from_identification(act.typed_details(JointDynamicsDetails), diag.rig, f)


UNBOUNDED_SPAN = 1e6
"""A predicted interval of a kind spanning more than this factor (hi / lo, x1000 either side
of the estimate) states no value and is written "unbounded": its bounds read as 1e+-40 or
overflow (the identification declares a parameter at a span of 2, ``joint_id.MAX_SPAN``)."""

UNBOUNDED_DELAY_S = 1.0
"""A predicted delay half-width over this [s] states no delay (a servo's is tens of ms)."""


def from_bench_logs(finding: Any) -> bool:
    """Whether an actuator finding (a Finding, or its JSON form) is the bench ladder's
    (``evidence.actuator_logs``: per joint the rung selected and its error, no
    identification)."""
    kind = finding.get("kind") if isinstance(finding, Mapping) else finding.kind
    return str(kind or "") == LadderFigures.kind


@dataclass(frozen=True)
class Design:
    """The motion chosen for one open (joint, parameter) and what it is predicted to give.

    Attributes:
        joint, kind: the parameter (``delay`` for a delay on a ridge).
        reason: why the diagnosis declared it not identifiable.
        value: the current estimate [SI; s for the delay].
        segment: the motion chosen.
        before: the prediction on the recording alone.
        after: the prediction on the recording plus the whole designed episode.
        scores: candidate name -> predicted half-width on the recording plus it.
        checked: the identification of the recording plus the episode simulated at the
            estimate: ``{"interval": [lo, hi]}`` or ``{"reason": ...}`` (empty: not run).
    """

    joint: str
    kind: str
    reason: str
    value: float
    segment: Segment
    before: Prediction
    after: Prediction
    scores: Mapping[str, float]
    checked: Mapping[str, Any] = field(default_factory=dict)

    def halfwidth(self, which: str = "after") -> float:
        """The predicted 95 % half-width: in the log-multiplier for a kind, [s] for the delay
        (inf along a null direction)."""
        p = self.after if which == "after" else self.before
        return float(p.halfwidth[p.columns.index(self.kind)])

    def interval(self, which: str = "after") -> tuple[float, float] | None:
        """The predicted 95 % interval [SI; s for the delay]: a kind's is multiplicative,
        the delay's not; None where it is unbounded (``unbounded``)."""
        hw = self.halfwidth(which)
        if self.unbounded(which):
            return None
        if self.kind == DELAY:
            return max(0.0, self.value - hw), self.value + hw
        return self.value * float(np.exp(-hw)), self.value * float(np.exp(hw))

    def unbounded(self, which: str = "after") -> str:
        """Why the predicted interval states no value ('' where it does): a half-width that
        is infinite (a null direction) or past ``UNBOUNDED_SPAN`` (``UNBOUNDED_DELAY_S``
        for the delay), whose bounds would overflow or read as 1e+-40."""
        hw = self.halfwidth(which)
        if not np.isfinite(hw) or not np.isfinite(self.value):
            return (
                "unbounded: the motions leave this parameter's sensitivity on a null "
                "direction (an infinite predicted half-width)"
            )
        if self.kind == DELAY:
            return (
                f"unbounded: the predicted 95 % half-width is {hw * 1e3:.3g} ms (over "
                f"{UNBOUNDED_DELAY_S * 1e3:.0f} ms)"
                if hw > UNBOUNDED_DELAY_S
                else ""
            )
        if 2.0 * hw > np.log(UNBOUNDED_SPAN):
            return (
                f"unbounded: the predicted 95 % half-width is {hw:.3g} in the log, a "
                f"factor e^{hw:.3g} either side of the estimate (a stated interval spans "
                f"at most x{UNBOUNDED_SPAN:.0e})"
            )
        return ""


@dataclass(frozen=True)
class NextMotion:
    """The designed episode.

    Attributes:
        joints: model joints, the commands' column order.
        fps: frame rate [Hz] (the recording's).
        commands: joint targets [rad], shape (T, J), whole encoder counts.
        predicted_q: the replay of the commands at the current estimate [rad], (T, J).
        start: the pose it starts and ends at [rad], shape (J,).
        designs: one per open (joint, parameter).
    """

    joints: tuple[str, ...]
    fps: float
    commands: np.ndarray
    predicted_q: np.ndarray
    start: np.ndarray
    designs: tuple[Design, ...]


def _settings(est: Estimate, joints: Sequence[str]) -> dict[str, Any]:
    from simgap.sim.actuator_patch import ActuatorSettings

    names = ("kp", "kv", "damping", "frictionloss", "armature", "force_limit")
    return {
        j: ActuatorSettings(
            **{k: float(v) for k, v in est.params[j].items() if k in names and np.isfinite(v)}
        )
        for j in joints
        if j in est.params
    }


def _log(t: np.ndarray, commands: np.ndarray, joints: Sequence[str], source: str) -> Any:
    from simgap.sim.replay import ReplayLog

    return ReplayLog(
        t=t,
        commands=commands,
        joints=tuple(joints),
        q0=commands[0],
        hold_before=commands[0],
        source=source,
    )


def next_motion(
    rig: Rig,
    est: Estimate,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    fps: float,
    *,
    vmax_rad_s: float = DEFAULT_VMAX_RAD_S,
    seconds: float = SEGMENT_S,
    seed: int = 0,
    check: bool = True,
) -> NextMotion:
    """Design the episode for every open target of ``est`` (module docstring).

    Args:
        rig: the rig (model, joints, encoder, physics step).
        est: the diagnosis's estimate and open targets.
        logs, targets: the recording the diagnosis fitted (``ReplayLog``s and measured
            joints [rad], (T, J) each).
        fps: the recording's frame rate [Hz].
        vmax_rad_s: the joint speed the replay at the estimate may reach [rad/s].
        seconds: length of each joint's motion [s].
        seed: seed of the chirp phases.
        check: simulate the episode at the estimate and identify (the slow part).
    """
    from simgap.sim.actuator_patch import write_actuator_patch
    from simgap.sim.load import joint_ranges

    joints = tuple(rig.joint_names)
    open_joints = [j for j in joints if any(t[0] == j for t in est.targets)]
    if not open_joints:
        raise InputError(
            field="not_identifiable",
            expected="at least one parameter the diagnosis declared not identifiable",
            got="none: every parameter has an interval",
            fix="nothing to design: the recording already "
            "identifies the joints ('simgap excite RIG' writes generic chirps)",
        )
    ranges = joint_ranges(rig.model_path, list(joints))
    start = np.asarray(logs[0].commands[0], dtype=float)
    enc = rig.encoder_rad
    with tempfile.TemporaryDirectory(prefix="simgap-excite-") as tmp:
        model = write_actuator_patch(
            rig.model_path, Path(tmp) / "estimate.xml", _settings(est, joints)
        )
        chosen: dict[str, list[Segment]] = {}
        per: dict[tuple[str, str], tuple[Segment, Prediction, dict[str, float]]] = {}
        floors: dict[str, tuple[float, float, float, np.ndarray, tuple[str, ...]]] = {}
        for j in open_joints:
            kinds = tuple(k for k in KINDS if k in est.params.get(j, {}))
            prob = _problem(model, rig, logs, targets, kinds, j, est.clock)
            try:
                s2, s2_min, infl, calm = _noise(prob, rig, est.clock, est.delay_s[j])
                jac_rec = sensitivities(prob, prob.z0, est.delay_s[j])
            finally:
                prob.close()
            floors[j] = (s2, s2_min, infl, jac_rec, kinds)
            before = predict([jac_rec], kinds, s2, s2_min, infl)
            scores: dict[str, dict[str, float]] = {}
            for seg in candidates(
                j, *ranges[j], fps, vmax_rad_s=vmax_rad_s, seconds=seconds, seed=seed
            ):
                cmd = _counts(assemble(start, joints, [seg], fps, vmax_rad_s), enc)
                jac, q = _episode_jacobian(model, rig, cmd, fps, kinds, j, est)
                if not _feasible(q[:, joints.index(j)], fps, ranges[j], vmax_rad_s):
                    continue
                chaos, inst = replay_floor(model, rig, cmd, fps, j, est.clock, est.delay_s[j])
                if chaos > max(inst, calm):
                    continue  # the replay at the estimate could not follow it
                pred = predict([jac_rec, jac], kinds, s2, s2_min, infl)
                for k in (t[1] for t in est.targets if t[0] == j):
                    scores.setdefault(k, {})[seg.name] = float(
                        pred.halfwidth[pred.columns.index(k)]
                    )
                    best = per.get((j, k))
                    if best is None or scores[k][seg.name] < best[2][best[0].name]:
                        per[(j, k)] = (seg, before, scores[k])
            for seg, _, _ in (per[(j, k)] for k in scores):
                if all(s.name != seg.name for s in chosen.setdefault(j, [])):
                    chosen[j].append(seg)
        segments = [s for j in joints for s in chosen.get(j, [])]
        if not segments:
            raise InputError(
                field="excitation",
                expected="a candidate motion inside the "
                "joints' ranges and the speed limit whose replay the model "
                "follows (no more chaotic than the recording's)",
                got="none",
                fix="raise --vmax (the joint speed allowed) or check the "
                "model's joint ranges; a model whose replay is chaotic on "
                "every candidate needs a shorter physics step",
            )
        commands = _counts(assemble(start, joints, segments, fps, vmax_rad_s), enc)
        designs, q_pred = [], np.zeros_like(commands)
        for j in {t[0] for t in est.targets if (t[0], t[1]) in per}:
            s2, s2_min, infl, jac_rec, kinds = floors[j]
            jac, q = _episode_jacobian(model, rig, commands, fps, kinds, j, est)
            q_pred[:, joints.index(j)] = q[:, joints.index(j)]
            after = predict([jac_rec, jac], kinds, s2, s2_min, infl)
            for jj, k, why in est.targets:
                if jj != j or (j, k) not in per:
                    continue
                seg, before, sc = per[(j, k)]
                value = est.delay_s[j] if k == DELAY else est.params[j][k]
                designs.append(Design(j, k, why, float(value), seg, before, after, dict(sc)))
        for j in joints:  # the joints left out: the replay at the estimate with their delay
            if j not in {d.joint for d in designs}:
                _, q = _episode_jacobian(model, rig, commands, fps, (), j, est, jac=False)
                q_pred[:, joints.index(j)] = q[:, joints.index(j)]
    designs.sort(key=lambda d: (joints.index(d.joint), (*KINDS, DELAY).index(d.kind)))
    if check:
        designs = check_designs(
            rig, est, logs, targets, commands, np.rint(q_pred / enc) * enc, fps, designs
        )
    return NextMotion(
        joints=joints,
        fps=fps,
        commands=commands,
        predicted_q=q_pred,
        start=start,
        designs=tuple(designs),
    )


def _counts(q: np.ndarray, enc: float) -> np.ndarray:
    out: np.ndarray = np.rint(q / enc) * enc
    return out


def _problem(
    model: Path,
    rig: Rig,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    kinds: tuple[str, ...],
    joint: str,
    clock: str,
) -> JointProblem:
    return JointProblem(
        model,
        rig.joint_names,
        logs,
        targets,
        kinds or ("damping",),
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
        fit_joints=[joint],
        clock=clock,
    )


def _noise(
    prob: JointProblem,
    rig: Rig,
    clock: str,
    delay_s: float,
) -> tuple[float, float, float, float]:
    """(residual variance, the replay's floor variance [rad^2], lag-1 inflation, the
    replay's own floor on the recording [rad]) of the problem's one joint, as the
    identification sets them: the recording's residual at the estimate (at least the
    instrument's floor, ``noise_floor``) and its autocorrelation; the floor of what a
    replay tells apart (the model's discretisation counts unless the recorder reads on the
    model's steps); the replay's change for a start known to half a count or commands
    moved by float rounding, without the discretisation (``replay_floor``'s test)."""
    from simgap.actuator.noise_floor import noise_floor
    from simgap.fit.profile import lag1_inflation

    f = noise_floor(prob, rig.encoder_rad, rig.clock_jitter_s)[prob.joints[0]]
    model = f["discretisation_rad"] if clock != "step" else 0.0
    r = prob.residuals(prob.z0[None], np.array([delay_s]))[0, 0]
    s2 = max(float(np.mean(r**2)), f["total_rad"] ** 2)
    calm = max(f["start_state_rad"], f["chaos_rad"])
    return s2, max(calm, model) ** 2, lag1_inflation(r), calm


def _episode_jacobian(
    model: Path,
    rig: Rig,
    commands: np.ndarray,
    fps: float,
    kinds: tuple[str, ...],
    joint: str,
    est: Estimate,
    jac: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """(the sensitivities of ``joint`` over the episode, (T, K + 1); the replay of every
    joint at the estimate with ``joint``'s delay [rad], (T, J))."""
    t = np.arange(commands.shape[0]) / fps
    log = _log(t, commands, rig.joint_names, "designed episode")
    prob = _problem(model, rig, [log], [np.zeros_like(commands)], kinds, joint, est.clock)
    try:
        d = est.delay_s.get(joint, 0.0)
        q = prob.replays(prob.z0[None], np.array([d]))[0].q[0]
        out = sensitivities(prob, prob.z0, d) if jac else np.zeros((t.size, 0))
    finally:
        prob.close()
    return out, np.asarray(q)


def replay_floor(
    model: str | Path,
    rig: Rig,
    commands: np.ndarray,
    fps: float,
    joint: str,
    clock: str,
    delay_s: float,
) -> tuple[float, float]:
    """(the replay's own floor on an episode, the instrument's floor there) for ``joint``
    [rad], under the model at ``model`` (``noise_floor``: the widest of the replay's change
    for a start known to half an encoder count and for commands moved by float rounding;
    quantisation, start and the rig's jitter at the commanded speed).

    A candidate whose replay floor at the estimate exceeds both the instrument's floor and
    the recording's own replay floor (without the model's discretisation) is refused: the
    identification counts that floor in every interval, and its fit cannot settle below
    it nor reach its gate of 1.5x the instrument's floor. (On the 5 ms SO-101 a swing at
    the torque limit raised the identification's chaos term from 0.001-0.06 to
    2.7-8.1 mrad against a floor of 0.44; docs/actuator.md.)"""
    from simgap.actuator.noise_floor import noise_floor

    t = np.arange(commands.shape[0]) / fps
    log = _log(t, commands, rig.joint_names, "designed episode")
    prob = _problem(Path(model), rig, [log], [commands], (), joint, clock)
    try:
        prob.replayer.delay_s = float(delay_s)
        f = noise_floor(prob, rig.encoder_rad, rig.clock_jitter_s)[joint]
    finally:
        prob.close()
    return max(f["chaos_rad"], f["start_state_rad"]), f["total_rad"]


def _feasible(q: np.ndarray, fps: float, rng: tuple[float, float], vmax: float) -> bool:
    """Whether a joint's replay stays finite, inside its range and under ``vmax``."""
    if not np.all(np.isfinite(q)):
        return False
    speed = np.abs(np.gradient(q)) * fps
    return bool(q.min() >= rng[0] and q.max() <= rng[1] and speed.max() <= vmax)


def identify_with(rig: Rig, logs: Sequence[Any], targets: Sequence[np.ndarray], clock: str) -> Any:
    """The joint identification (``joint_id.identify``, diagnose's settings) of the given
    episodes against the rig's own MJCF, under the recorder's ``clock``."""
    from simgap.actuator.joint_id import IdConfig, identify

    cfg = IdConfig(clock=clock, jitter_s=rig.clock_jitter_s, seed=rig.seed)
    problem = JointProblem(
        rig.model_path,
        rig.joint_names,
        logs,
        targets,
        cfg.kinds,
        physics_dt=rig.physics_dt_s,
        interp=rig.command_interp,
    )
    try:
        return identify(problem, encoder_rad=rig.encoder_rad, config=cfg)
    finally:
        problem.close()


def check_designs(
    rig: Rig,
    est: Estimate,
    logs: Sequence[Any],
    targets: Sequence[np.ndarray],
    commands: np.ndarray,
    q: np.ndarray,
    fps: float,
    designs: Sequence[Design],
) -> list[Design]:
    """Each design with ``checked``: the identification of the recording plus the episode
    as recorded ``q`` [rad] (the replay at the estimate, in whole counts)."""
    from dataclasses import replace

    t = np.arange(commands.shape[0]) / fps
    res = identify_with(
        rig,
        [*logs, _log(t, commands, rig.joint_names, "designed episode")],
        [*targets, q],
        est.clock,
    )
    return [replace(d, checked=outcome(res, d.joint, d.kind)) for d in designs]


def outcome(res: Any, joint: str, kind: str) -> dict[str, Any]:
    """An identification's interval (or its reason) for one (joint, parameter)."""
    j = res.joints.index(joint)
    if kind == DELAY:
        p = res.delay[j]
        return (
            {"reason": res.ridge[j]}
            if res.ridge[j]
            else {"interval": [float(p.interval_s[0]), float(p.interval_s[1])]}
        )
    e = res.estimates[j][kind]
    # a declared parameter keeps its local interval beside the reason (what the fit's
    # linearisation gives, not stated as a 95 % interval)
    return (
        {
            "reason": e.reason,
            "value": e.value,
            "local_interval": list(e.rejected or (math.nan, math.nan)),
        }
        if e.interval is None
        else {"interval": list(e.interval), "value": e.value}
    )
