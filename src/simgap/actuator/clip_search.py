"""A command clip seen in the data: does the recording show a ``max_relative_target``?

Two signatures, both in each joint's recorded unit (LeRobot's):

- The recorded goal is the one sent (an older ``lerobot-record``, a deploy script or bag that
  logs what it sent): ``|action - observation.state|`` piles up at one bound (``piled_bound``:
  at least ``PILE_MIN_FRACTION`` of the frames within a count of the largest gap).
- The recorded goal is the policy's, before the clip (``lerobot-record`` 0.6.1 writes
  ``action_values``): the gap is unbounded, but the arm follows ``present +- bound``. The
  rig's own model replays the recording with the action clipped at each bound of
  ``BOUND_GRID`` (one number for every motor, as LeRobot's float) and without, each at the
  best of ``DELAY_GRID_S`` per joint (a delay slows a replay too, so the clip is credited
  only with what a delay cannot do); a joint shows a clip when the clipped replay's RMS is
  at most ``1 - MIN_GAIN`` of the best unclipped one and the bound changes at least
  ``MIN_CLIPPED_FRACTION`` of its goals.

The replay is the model as given: a model far from the arm may prefer a clip for reasons of
its own, so the finding states the replay RMS both ways and the bound is a lead to check in
the follower's config, not a measurement of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.episodes.command_shaping import Shaping, clip_relative, shape_commands
from simgap.rig import Rig
from simgap.series import Trajectory

BOUND_GRID: tuple[float, ...] = tuple(float(x) for x in np.geomspace(0.5, 45.0, 19))
"""Candidate ``max_relative_target`` values, in the recorded unit (degrees, percent)."""
DELAY_GRID_S: tuple[float, ...] = (0.0, 0.017, 0.033, 0.05, 0.067, 0.1)
"""Command delays each replay is taken at the best of, per joint [s]."""
MIN_GAIN = 0.5
"""Least fraction of a joint's best unclipped replay RMS a clip must remove."""
MIN_CLIPPED_FRACTION = 0.05
"""Least fraction of a joint's goals the bound must change to count as a clip."""
PILE_MIN_FRACTION = 0.02
"""Least fraction of frames whose recorded gap sits at its largest value (within a count)
for the recorded goal to be read as clipped."""
REFINE_POINTS = 7
"""Bounds tried between the best grid bound's neighbours (ends excluded)."""
SEARCH_SECONDS = 6.0
"""Seconds of each searched episode replayed."""
SEARCH_EPISODES = 2
"""Episodes replayed by the search (the first ones)."""


@dataclass(frozen=True)
class ClipSearch:
    """What the recording says about a clip of the goal against the present position.

    Attributes:
        joints: model joint names, rig order.
        units: each joint's recorded unit (the unit of the bounds).
        bound: per joint, the bound the replay prefers [recorded unit], None where no clip
            shows (``MIN_GAIN``, ``MIN_CLIPPED_FRACTION``).
        piled: per joint, the bound the recorded gap piles up at [recorded unit], or None.
        rms_unclipped_rad: per joint, the replay RMS of the action as recorded, at the best
            delay of ``DELAY_GRID_S`` [rad].
        rms_clipped_rad: per joint, the replay RMS with the action clipped at ``bound`` (at
            the best bound of the grid where none shows) [rad].
        clipped_fraction: per joint, fraction of the goals the bound changes.
        best_bound: per joint, the grid's best bound whether or not it shows [recorded unit].
        seconds: seconds replayed in all.
    """

    joints: tuple[str, ...]
    units: tuple[str, ...]
    bound: tuple[float | None, ...]
    piled: tuple[float | None, ...]
    rms_unclipped_rad: tuple[float, ...]
    rms_clipped_rad: tuple[float, ...]
    clipped_fraction: tuple[float, ...]
    best_bound: tuple[float, ...]
    seconds: float

    @property
    def found(self) -> bool:
        """Whether any joint shows a clip (by either signature)."""
        return any(b is not None for b in self.bound) or any(p is not None for p in self.piled)

    def bounds_found(self) -> dict[str, float]:
        """joint -> the bound found [recorded unit] (the piled-up gap first: it is exact)."""
        out: dict[str, float] = {}
        for j, b, p in zip(self.joints, self.bound, self.piled, strict=True):
            if p is not None:
                out[j] = p
            elif b is not None:
                out[j] = b
        return out

    def rig_line(self, rig: Rig) -> str:
        """The ``[deploy]`` line to write: one number when the joints found agree within
        a grid step (as LeRobot's float), else a table by LeRobot motor name."""
        found = self.bounds_found()
        if not found:
            return ""
        vals = list(found.values())
        if max(vals) <= 1.3 * min(vals) and len(found) >= max(2, len(self.joints) // 2):
            return f"max_relative_target = {float(np.median(vals)):.3g}"
        cells = ", ".join(
            f"{rig.joint(j).recorded.removesuffix('.pos')} = {found.get(j, 1e3):.3g}"
            for j in self.joints
        )
        return f"max_relative_target = {{ {cells} }}"

    def figures(self) -> dict[str, Any]:
        """JSON-able figures (units in the names; bounds in each joint's recorded unit)."""
        return {
            "joints": {
                j: {
                    "unit": u,
                    "bound": b,
                    "piled_bound": p,
                    "replay_rms_unclipped_rad": ru,
                    "replay_rms_clipped_rad": rc,
                    "clipped_fraction": f,
                    "best_bound": bb,
                }
                for j, u, b, p, ru, rc, f, bb in zip(
                    self.joints,
                    self.units,
                    self.bound,
                    self.piled,
                    self.rms_unclipped_rad,
                    self.rms_clipped_rad,
                    self.clipped_fraction,
                    self.best_bound,
                    strict=True,
                )
            },
            "replayed_s": self.seconds,
            "min_gain_fraction": MIN_GAIN,
            "min_clipped_fraction": MIN_CLIPPED_FRACTION,
            "bound_grid": list(BOUND_GRID),
            "delay_grid_s": list(DELAY_GRID_S),
        }


def piled_bound(gap: np.ndarray, count: float) -> float | None:
    """The bound a recorded gap ``|action - observation|`` (N,) [recorded unit] piles up at,
    or None: at least ``PILE_MIN_FRACTION`` of the frames within ``count`` (one encoder
    count in the unit) of the largest gap, which is more than a few counts."""
    g = np.abs(np.asarray(gap, dtype=float))
    if g.size < 20:
        return None
    top = float(g.max())
    if top <= 4 * count:
        return None
    at = g >= top - count
    return top if float(at.mean()) >= PILE_MIN_FRACTION else None


def replay_rms(
    rig: Rig, trajs: Sequence[Trajectory], variants: Sequence[np.ndarray | Shaping | None]
) -> np.ndarray:
    """Replay RMS [rad] of each command variant, shape (len(variants), J): the action
    clipped at each bound (J,) [rad], or shaped (a ``Shaping``), or as recorded (None),
    against the recorded state, on the rig's model, at the best delay of ``DELAY_GRID_S``
    per joint."""
    from simgap.sim.model import load_spec, strip_visuals
    from simgap.sim.replay import Replayer, ReplayLog

    spec = strip_visuals(load_spec(rig.model_path))
    out = np.empty((len(variants), len(rig.joints)))
    with Replayer.build(
        spec,
        rig.joint_names,
        interp=rig.command_interp,
        physics_dt=rig.physics_dt_s,
        source=rig.model_path,
    ) as rep:
        models = [rep.model] * len(DELAY_GRID_S)
        for i, b in enumerate(variants):
            sq = np.zeros((len(DELAY_GRID_S), len(rig.joints)))
            n = 0
            for tr in trajs:
                q, c = np.asarray(tr.q), np.asarray(tr.q_cmd)
                if isinstance(b, Shaping):
                    sent = shape_commands(c, q, float(np.median(np.diff(tr.t))), b)[0]
                else:
                    sent = c if b is None else clip_relative(c, q, b)
                log = ReplayLog(
                    t=np.asarray(tr.t),
                    commands=sent,
                    joints=rig.joint_names,
                    q0=q[0],
                    hold_before=sent[0],
                    source=tr.source,
                )
                res = rep.replay(models, log, delays=list(DELAY_GRID_S))
                err = np.nan_to_num(res.q - q[None], nan=np.pi)
                sq += (err**2).sum(axis=1)
                n += len(q)
            out[i] = np.sqrt(sq / max(n, 1)).min(axis=0)
    return out


def search_clip(
    rig: Rig,
    trajs: Sequence[Trajectory],
    seconds: float = SEARCH_SECONDS,
    episodes: int = SEARCH_EPISODES,
) -> ClipSearch:
    """Both signatures on the first ``episodes`` Trajectories (model radians, the action as
    recorded), the replay on their first ``seconds``."""
    cut = [tr.rows(tr.t - tr.t[0] <= seconds + 1e-9) for tr in list(trajs)[:episodes]]
    rpu = np.array([j.unit.rad_per_unit() for j in rig.joints])
    count = rig.encoder_rad / rpu  # one count in each recorded unit
    gaps = np.concatenate([np.abs(np.asarray(tr.q_cmd) - np.asarray(tr.q)) for tr in trajs])
    piled = tuple(piled_bound(gaps[:, j] / rpu[j], float(count[j])) for j in range(len(rig.joints)))
    grid = list(BOUND_GRID)
    rms = replay_rms(rig, cut, [None] + [b * rpu for b in grid])
    # refine around the joints' median best: a grid step is 28 %
    i = int(np.median(np.argmin(rms[1:], axis=0)))
    fine = [
        float(x)
        for x in np.geomspace(grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)], REFINE_POINTS)[
            1:-1
        ]
        if x != grid[i]
    ]
    rms = np.vstack([rms, replay_rms(rig, cut, [b * rpu for b in fine])])
    grid += fine
    cgaps = np.concatenate([np.abs(np.asarray(tr.q_cmd) - np.asarray(tr.q)) for tr in cut])
    bound, clipped, best_b, rms_c = [], [], [], []
    for j in range(len(rig.joints)):
        i = int(np.argmin(rms[1:, j])) + 1
        b = grid[i - 1]
        frac = float(np.mean(cgaps[:, j] > b * rpu[j]))
        shows = rms[i, j] <= (1 - MIN_GAIN) * rms[0, j] and frac >= MIN_CLIPPED_FRACTION
        bound.append(b if shows else None)
        clipped.append(frac)
        best_b.append(b)
        rms_c.append(float(rms[i, j]))
    return ClipSearch(
        joints=rig.joint_names,
        units=tuple(j.unit.unit for j in rig.joints),
        bound=tuple(bound),
        piled=piled,
        rms_unclipped_rad=tuple(float(x) for x in rms[0]),
        rms_clipped_rad=tuple(rms_c),
        clipped_fraction=tuple(clipped),
        best_bound=tuple(best_b),
        seconds=float(sum(tr.t[-1] - tr.t[0] for tr in cut)),
    )
