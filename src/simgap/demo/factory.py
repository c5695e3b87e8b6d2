"""SO-101 benches built outside the design: a model with planted faults, recorded like LeRobot.

``make_so101_bench(out_dir, model_path, seed)`` simulates the rig's own MJCF (the Menagerie
SO-101 ``so101.xml``, path given by the caller and never copied) with joint faults
(``simgap.demo.faults``: ``None`` healthy, ``"random"`` drawn from issue 12's ranges, or an
explicit dict, the form a fleet uses to draw each arm from its own known distribution, e.g.
``faults=draw_faults([fleet_seed, arm], JOINTS, ranges={...})``), drives it with wide-band
joint targets and writes what a user of ``lerobot-record`` would hand simgap:

- ``dataset/``: a LeRobot v3 dataset at ``fps`` (30 or 100), ``timestamp`` float32 =
  frame_index / fps, body joints in degrees, the gripper in percent of its range, ``action``
  the goal sent to the servo (whole STS3215 counts, 4096 per turn), ``observation.state`` the
  encoder reading (whole counts);
- ``heldout/``: ``n_heldout`` more episodes of the same arm, not named in the rig (for
  proving a patch on episodes the fit never saw);
- ``rig.toml``: written without knowledge of the faults (model = the nominal MJCF);
- ``truth.json``: the planted truth (never read by simgap).

Timing, as LeRobot's record loop: in frame k at ``t_k = k / fps`` the observation is read,
then the action is sent; it reaches joint j at ``t_k + delay_j`` and is held until the next
one arrives. Before the first command the servos hold the first goal (1 s of settling precedes
t = 0). Physics runs the model's own integrator and timestep on the grid ``n * timestep``;
a step that an event (an observation read or a command arrival) falls inside is split at the
event, so commands act at their own times (``clock="exact"``); ``clock="step"`` reads and
applies on the first physics step at or after the event instead, and ``clock="jitter"`` reads
each frame a random fraction of a few ms late (``RECORDER_CLOCKS``). Deterministic from the seed.

The simulation itself is ``simgap.demo.bench_sim``; the nominal model, its parameters and
the planted ones written into it, ``simgap.demo.nominal``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from simgap.demo.bench_sim import RECORDER_CLOCKS, excitation, quantise, simulate
from simgap.demo.faults import PARAMS, JointTruth, resolve_faults
from simgap.demo.nominal import apply_truth, nominal_model, nominal_params
from simgap.demo.twin import JOINTS
from simgap.demo.writers import write_lerobot_v3
from simgap.errors import InputError
from simgap.outputs import atomic_write_json, atomic_write_text
from simgap.safe_names import checked_toml, py_comment, toml_string
from simgap.sim.scene import Model, name_id
from simgap.units import ENCODER_RESOLUTION_RAD, JointUnit

GRIPPER = "gripper"


TASK = "wide-band joint excitation"


@dataclass(frozen=True)
class Bench:
    """One recorded bench.

    Attributes:
        rig: the bench's ``rig.toml`` (written without knowledge of the faults).
        dataset: the LeRobot v3 dataset the rig names.
        heldout: the held-out LeRobot v3 dataset (same arm, other excitation), or None.
        model: the nominal MJCF the rig names (the caller's path).
        truth: per joint, the planted parameters, multipliers and delay, model order.
        seed: the seed everything random on the bench came from.
        fps: frames per second of the recording [Hz].
        contact_fraction: fraction of physics steps with any contact (self-collision) [0..1].
    """

    rig: Path
    dataset: Path
    heldout: Path | None
    model: Path
    truth: tuple[JointTruth, ...]
    seed: int
    fps: int
    contact_fraction: float

    @property
    def faulty(self) -> bool:
        """True when any joint carries a fault (False: the healthy case)."""
        return any(t.faulty for t in self.truth)

    def joint(self, name: str) -> JointTruth:
        """The truth of one joint; a miss lists the joints."""
        from simgap.errors import NameNotFoundError

        for t in self.truth:
            if t.name == name:
                return t
        raise NameNotFoundError("joint", name, [t.name for t in self.truth])


def faulty_model(bench: Bench) -> Model:
    """The bench's true model (without its delay, which lives in the command timing)."""
    return apply_truth(nominal_model(bench.model), bench.truth)


def _units(m: Model) -> dict[str, JointUnit]:
    out = {}
    for j in JOINTS:
        if j == GRIPPER:
            lo, hi = (float(x) for x in m.jnt_range[name_id(m, "joint", j)])
            out[j] = JointUnit(unit="pct", lo_rad=lo, hi_rad=hi)
        else:
            out[j] = JointUnit(unit="deg")
    return out


def _episodes(
    m: Model,
    seed: int,
    which: str,
    n: int,
    fps: int,
    duration_s: float,
    delays: np.ndarray,
    clock: str = "exact",
    jitter_s: float = 0.0,
    motion: tuple[float, float] = (1.0, 4.0),
    max_relative_target: float | Mapping[str, float] | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """Record ``n`` episodes; the excitation of episode e comes from ``[seed, which, e]``,
    the read times' jitter (``clock="jitter"``: uniform in [0, jitter_s)) from
    ``[seed, which, e, 7]``. ``max_relative_target`` (LeRobot's units: degrees, percent for
    the gripper; one number or joint -> number) clips each sent goal against the present
    reading; ``action`` records the goal before the clip, as ``lerobot-record`` 0.6.1 does."""
    units = _units(m)
    bound = _relative_bound(max_relative_target, units)
    t = np.arange(int(round(duration_s * fps))) / fps
    eps, cfrac = [], []
    for e in range(n):
        rng = np.random.default_rng([seed, 0 if which == "dataset" else 1, e])
        ranges = [m.jnt_range[name_id(m, "joint", j)] for j in JOINTS]
        tg = np.stack(
            [
                excitation(
                    rng,
                    t,
                    float(r[0]),
                    float(r[1]),
                    gripper=j == GRIPPER,
                    amplitude=motion[0],
                    max_hz=motion[1],
                )
                for j, r in zip(JOINTS, ranges, strict=True)
            ],
            axis=1,
        )
        tg = quantise(tg)
        offsets = None
        if clock == "jitter":
            offsets = np.random.default_rng([seed, 0 if which == "dataset" else 1, e, 7]).uniform(
                0.0, jitter_s, t.size
            )
        q, cf = simulate(
            m,
            tg,
            fps,
            delays,
            "step" if clock == "step" else "exact",
            offsets,
            relative_bound=bound,
        )
        q = quantise(q)
        cfrac.append(cf)
        conv = [units[j].from_rad for j in JOINTS]
        eps.append(
            {
                "action": np.stack([c(tg[:, i]) for i, c in enumerate(conv)], 1),
                "observation.state": np.stack([c(q[:, i]) for i, c in enumerate(conv)], 1),
            }
        )
    return eps, float(np.mean(cfrac)) if cfrac else 0.0


def _relative_bound(
    mrt: float | Mapping[str, float] | None,
    units: Mapping[str, JointUnit],
) -> np.ndarray | None:
    """LeRobot's ``max_relative_target`` (its units) per joint of ``JOINTS`` [rad]."""
    if mrt is None:
        return None
    vals = [float(mrt[j]) if isinstance(mrt, Mapping) else float(mrt) for j in JOINTS]
    if not all(v > 0 for v in vals):
        raise InputError(field="max_relative_target", expected="positive numbers", got=mrt)
    return np.array([v * units[j].rad_per_unit() for v, j in zip(vals, JOINTS, strict=True)])


def _rig_text(name: str, seed: int, model: Path, fps: int, grip: JointUnit) -> str:
    # the model path is the user's (a cache folder may hold any character): TOML-escaped
    lines = [
        f"# {py_comment(name)}: an SO-101 dataset as lerobot-record writes it ({fps} fps).",
        f"name = {toml_string(name)}",
        f"seed = {seed}",
        "",
        "[model]",
        f"path = {toml_string(str(model), 'the model path')}",
        'ee_site = "gripperframe"',
        "",
        "[control]",
        f"dt_s = {1.0 / fps!r}",
        f"real_dt_s = {1.0 / fps!r}",
        'action_space = "joint_position"',
        'command_interp = "hold"',
        "",
    ]
    for j in JOINTS:
        lines += [f"[joints.{j}]", f'recorded = "{j}.pos"']
        if j == GRIPPER:
            lines += [
                'unit = "pct"',
                f"range_rad = [{grip.lo_rad!r}, {grip.hi_rad!r}]",
                "gripper = true",
            ]
        else:
            lines += ['unit = "deg"']
    lines += [
        "",
        "[noise]",
        f"encoder_rad = {ENCODER_RESOLUTION_RAD!r}   # one STS3215 count",
        "",
        "[evidence]",
        'dataset = "dataset"',
        "",
    ]
    text = "\n".join(lines)
    checked_toml(text, "demo rig.toml")  # parsed before it is written
    return text


def make_so101_bench(
    out_dir: str | Path,
    model_path: str | Path,
    seed: int,
    *,
    fps: Literal[30, 100] | int = 30,
    n_episodes: int = 3,
    duration_s: float = 20.0,
    faults: None | str | Mapping[str, Any] = None,
    n_heldout: int = 1,
    substeps: int = 1,
    clock: str = "exact",
    jitter_s: float = 0.002,
    amplitude: float = 1.0,
    max_hz: float = 4.0,
    max_relative_target: float | Mapping[str, float] | None = None,
) -> Bench:
    """Simulate and record one SO-101 bench into ``out_dir`` (see the module docstring).

    Args:
        out_dir: folder to write (created; existing files of the same name are replaced).
        model_path: the nominal MJCF (the Menagerie ``so101.xml``); the rig names it as is.
        seed: seed of the excitation and of ``faults="random"``.
        fps: recording rate [Hz].
        n_episodes: episodes in ``dataset/``.
        duration_s: length of each episode [s].
        faults: None (healthy), ``"random"`` or an explicit dict (``simgap.demo.faults``).
        n_heldout: episodes in ``heldout/`` (0: none).
        substeps: physics steps per model timestep for the truth (1: the nominal model's own
            data). At its 5 ms step the SO-101's kp = 998 servo is numerically chaotic (a
            1e-7 rad change of the commands moves a 20 s replay by 2-7 mrad RMS); from
            2.5 ms on it is not, so ``substeps >= 2`` gives a smooth, hardware-like truth
            that the 5 ms nominal model can only approximate.
        clock: when each frame is read and its command sent against the physics steps
            (``RECORDER_CLOCKS``): at the frame's stamp, on the first physics step at or
            after it, or at the stamp plus a uniform jitter in ``[0, jitter_s)``.
        jitter_s: the jitter's width [s] (``clock="jitter"`` only).
        amplitude, max_hz: the excitation's span (a fraction of the default) and highest
            frequency [Hz] (``excitation``).
        max_relative_target: LeRobot's follower clip, planted (None: none): each goal is
            clipped to the present reading +- it (degrees; percent for the gripper; one
            number or joint -> number) before it is simulated, and the dataset records the
            goal before the clip, as ``lerobot-record`` does. The rig does not state it.
    """
    out = Path(out_dir)
    if clock not in RECORDER_CLOCKS or not 0 <= jitter_s < 1.0 / fps:
        raise InputError(
            field="clock",
            expected=f"one of {list(RECORDER_CLOCKS)}, jitter_s in [0, one frame)",
            got=(clock, jitter_s),
        )
    if fps <= 0 or n_episodes < 1 or duration_s <= 0 or n_heldout < 0 or substeps < 1:
        raise InputError(
            field="make_so101_bench",
            expected="fps > 0, n_episodes >= 1, duration_s > 0, n_heldout >= 0, substeps >= 1",
            got=(fps, n_episodes, duration_s, n_heldout, substeps),
        )
    model = Path(model_path).resolve()
    m = nominal_model(model)
    truth = resolve_faults(faults, seed, nominal_params(m))
    apply_truth(m, truth)
    m.opt.timestep = m.opt.timestep / substeps
    delays = np.array([t.delay_s for t in truth])
    names = [f"{j}.pos" for j in JOINTS]
    if not (0 < amplitude <= 1 and 0.08 < max_hz <= 0.5 * fps):
        raise InputError(
            field="excitation",
            expected="0 < amplitude <= 1, 0.08 Hz < max_hz <= half the frame rate",
            got=(amplitude, max_hz),
        )
    motion = (float(amplitude), float(max_hz))

    def record(which: str, n: int) -> tuple[list[dict[str, Any]], float]:
        return _episodes(
            m, seed, which, n, fps, duration_s, delays, clock, jitter_s, motion, max_relative_target
        )

    eps, cf = record("dataset", n_episodes)
    write_lerobot_v3(
        out / "dataset", eps, fps=fps, names=names, task=TASK, robot_type="so101_follower"
    )
    heldout = None
    if n_heldout:
        heps, _ = record("heldout", n_heldout)
        heldout = write_lerobot_v3(
            out / "heldout", heps, fps=fps, names=names, task=TASK, robot_type="so101_follower"
        )
    grip = _units(m)[GRIPPER]
    rig = atomic_write_text(
        out / "rig.toml", _rig_text(f"so101-bench-{seed}", seed, model, fps, grip)
    )
    bench = Bench(
        rig=rig,
        dataset=out / "dataset",
        heldout=heldout,
        model=model,
        truth=truth,
        seed=seed,
        fps=int(fps),
        contact_fraction=cf,
    )
    atomic_write_json(
        out / "truth.json",
        {
            "seed": seed,
            "fps": fps,
            "faulty": bench.faulty,
            "params": list(PARAMS),
            "physics_dt_s": float(m.opt.timestep),
            "clock": clock,
            "jitter_s": jitter_s if clock == "jitter" else 0.0,
            "amplitude": amplitude,
            "max_hz": max_hz,
            "max_relative_target": dict(max_relative_target)
            if isinstance(max_relative_target, Mapping)
            else max_relative_target,
            "contact_fraction": cf,
            "joints": {t.name: t.to_dict() for t in truth},
        },
    )
    return bench
