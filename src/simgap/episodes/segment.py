"""Segment a recorded episode into phases: approach, contact, grasp, lift_and_carry, place.

What is used, when recorded:

- the gripper's command and measured opening (required): a grasp attempt starts when the
  command closes, and ends when it opens again (the release);
- the end effector's position (forward kinematics of the measured joints, computed in
  ``simgap.sim.fk`` and passed in): contact is the end effector within ``contact_radius_m``
  of the object; without the object, a lift is the end effector rising after the grasp;
- the object's position (``observation.object_pos``): contact when it first moves, the lift
  when it rises, a drop when it falls back while held, and success when it rests at the
  place target.

Opening grows with the gripper's model angle (the SO-101 convention: 0 % is closed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simgap.errors import InputError
from simgap.values.episode import PHASES, EpisodeRecord


def check_phase(name: object, *, file: str | None = None, field: str | None = None) -> str:
    """Return ``name`` when it is a known phase; otherwise an InputError listing them."""
    if not isinstance(name, str) or name not in PHASES:
        raise InputError(
            file=file,
            field=field,
            expected="a known phase name",
            got=name,
            fix=f"use one of: {', '.join(PHASES)}",
        )
    return name


@dataclass(frozen=True)
class SegmentParams:
    """Thresholds of the segmentation (SI units).

    Attributes:
        contact_radius_m: end effector this close to the object counts as contact [m].
        moved_m: the object moved this far counts as contact [m].
        lift_m: object rise that counts as lifted [m].
        ee_lift_m: end-effector rise after a grasp that counts as a lift (no object) [m].
        place_tol_m: a release this close to the place target is a placement [m].
        settle_s: time the gripper is given to close before its opening is read [s].
        empty_opening_frac: a settled opening below this fraction of the gripper's range
            means it closed on nothing (used when the object's position is not recorded).
        min_cmd_span_frac: the command must span this fraction of the range to count as
            opening and closing at all.
    """

    contact_radius_m: float = 0.03
    moved_m: float = 0.005
    lift_m: float = 0.01
    ee_lift_m: float = 0.02
    place_tol_m: float = 0.04
    settle_s: float = 0.3
    empty_opening_frac: float = 0.08
    min_cmd_span_frac: float = 0.1


@dataclass(frozen=True)
class Attempt:
    """One close-hold-open cycle of the gripper (indices into the episode).

    Attributes:
        close: index where the command closed.
        release: index where it opened again, or None if it stayed closed to the end.
        opening_frac: median measured opening while held, fraction of the range.
        gap_rad: median (measured - commanded) gripper angle while held [rad].
        between: whether the object was between the jaws (None when not measurable).
        lift: index where the object (or end effector) rose, or None.
        drop: index where a lifted object fell back while held, or None.
        release_point: object (else end-effector) position at release [m], or None.
    """

    close: int
    release: int | None
    opening_frac: float
    gap_rad: float
    between: bool | None
    lift: int | None
    drop: int | None
    release_point: tuple[float, float, float] | None

    @property
    def empty(self) -> bool:
        """The gripper closed on nothing."""
        return self.between is False


@dataclass(frozen=True)
class Segmentation:
    """An episode cut into phases.

    Attributes:
        episode: the episode index.
        bounds: phase -> (start, end) sample indices, end exclusive, for phases entered.
        times: phase -> (start, end) times [s].
        attempts: every grasp attempt.
        best: index into ``attempts`` of the one that got furthest, or None.
        contact: index of first contact, or None.
        holding: samples where the gripper held something, shape (T,), bool.
        has_object: whether the object's position was recorded.
        has_ee: whether the end effector's position was given.
    """

    episode: int
    bounds: dict[str, tuple[int, int]]
    times: dict[str, tuple[float, float]]
    attempts: tuple[Attempt, ...]
    best: int | None
    contact: int | None
    holding: np.ndarray = field(repr=False)
    has_object: bool = False
    has_ee: bool = False

    @property
    def reached(self) -> str:
        """The furthest phase entered."""
        return max(self.bounds, key=PHASES.index)


def _transitions(closed: np.ndarray) -> list[tuple[int, int | None]]:
    """(close, release) index pairs of the closed-command runs that follow an open command."""
    out: list[tuple[int, int | None]] = []
    was_open = False
    start: int | None = None
    for i, c in enumerate(closed):
        if not c:
            if start is not None:
                out.append((start, i))
                start = None
            was_open = True
        elif start is None and was_open:
            start = i
    if start is not None:
        out.append((start, None))
    return out


def _attempt(
    rec: EpisodeRecord, close: int, release: int | None, p: SegmentParams, n_settle: int
) -> Attempt:
    lo, hi = rec.gripper_range
    end = release if release is not None else len(rec.t)
    held = slice(min(close + n_settle, end - 1), end)
    opening = (rec.gripper[held] - lo) / (hi - lo)
    opening_frac = float(np.median(opening))
    gap = float(np.median(rec.gripper[held] - rec.gripper_cmd[held]))
    s = held.start
    between: bool | None = opening_frac > p.empty_opening_frac
    if between and rec.obj is not None and rec.ee is not None:
        between = bool(np.linalg.norm(rec.ee[s] - rec.obj[s]) <= p.contact_radius_m)
    lift = drop = None
    idx = np.arange(s, end)
    if rec.obj is not None:
        rise = rec.obj[idx, 2] - rec.obj[0, 2]
        up = np.nonzero(rise > p.lift_m)[0]
        if up.size and between is not False:
            lift = int(idx[up[0]])
            down = np.nonzero(rise[up[0] :] < 0.5 * p.lift_m)[0]
            if down.size:
                drop = int(idx[up[0] + down[0]])
    elif rec.ee is not None and between:
        rise = rec.ee[idx, 2] - rec.ee[s, 2]
        up = np.nonzero(rise > p.ee_lift_m)[0]
        if up.size:
            lift = int(idx[up[0]])
    point = None
    if release is not None:
        src = rec.obj if rec.obj is not None else rec.ee
        if src is not None:
            point = (float(src[release, 0]), float(src[release, 1]), float(src[release, 2]))
    return Attempt(
        close=close,
        release=release,
        opening_frac=opening_frac,
        gap_rad=gap,
        between=between,
        lift=lift,
        drop=drop,
        release_point=point,
    )


def _progress(a: Attempt) -> tuple[int, int]:
    """Rank of an attempt by how far it got (ties: the later one wins through the index)."""
    if a.lift is not None and a.release is not None and a.drop is None:
        return (3, a.close)
    if a.lift is not None:
        return (2, a.close)
    if not a.empty:
        return (1, a.close)
    return (0, a.close)


def segment(
    rec: EpisodeRecord, params: SegmentParams | None = None, success_at: int | None = None
) -> Segmentation:
    """Cut one episode into phases.

    Args:
        rec: the episode.
        params: thresholds; defaults when None.
        success_at: index where the task was done, when known (starts ``after_success``).

    Returns:
        The segmentation; ``bounds`` holds only the phases entered, in order.
    """
    p = params or SegmentParams()
    n = len(rec.t)
    lo, hi = rec.gripper_range
    cmd = (rec.gripper_cmd - lo) / (hi - lo)
    span = float(cmd.max() - cmd.min()) if n else 0.0
    closed = (
        cmd < 0.5 * (cmd.max() + cmd.min())
        if span >= p.min_cmd_span_frac
        else np.zeros(n, dtype=bool)
    )
    dt = float(np.median(np.diff(rec.t))) if n > 1 else 1.0
    n_settle = max(1, int(round(p.settle_s / dt)))
    attempts = tuple(_attempt(rec, c, r, p, n_settle) for c, r in _transitions(closed))
    best = max(range(len(attempts)), key=lambda k: _progress(attempts[k])) if attempts else None

    contact: int | None = None
    if rec.obj is not None:
        moved = np.linalg.norm(rec.obj - rec.obj[0], axis=1) > p.moved_m
        near = (
            np.linalg.norm(rec.ee - rec.obj, axis=1) <= p.contact_radius_m
            if rec.ee is not None
            else np.zeros(n, dtype=bool)
        )
        hits = np.nonzero(moved | near)[0]
        contact = int(hits[0]) if hits.size else None
    elif attempts:
        contact = attempts[0].close  # without the object, contact and closing coincide

    marks: list[tuple[str, int]] = [("approach", 0)]
    if contact is not None:
        marks.append(("contact", contact))
    holding = np.zeros(n, dtype=bool)
    if best is not None and (contact is not None or rec.obj is None):
        a = attempts[best]
        marks.append(("grasp", a.close))
        end = a.release if a.release is not None else n
        if not a.empty:
            holding[min(a.close + n_settle, end - 1) : end] = True
        if a.lift is not None:
            marks.append(("lift_and_carry", a.lift))
        if a.release is not None and (
            a.lift is not None or (rec.obj is None and rec.ee is None and not a.empty)
        ):
            marks.append(("place", a.release))
    if success_at is not None:
        marks.append(("after_success", int(success_at)))
    marks = [(name, max(0, min(i, n))) for name, i in marks]
    cleaned: list[tuple[str, int]] = []
    for name, i in marks:
        if cleaned and i < cleaned[-1][1]:
            i = cleaned[-1][1]
        cleaned.append((name, i))
    bounds: dict[str, tuple[int, int]] = {}
    for k, (name, i) in enumerate(cleaned):
        end = cleaned[k + 1][1] if k + 1 < len(cleaned) else n
        if end > i or k + 1 == len(cleaned):
            bounds[name] = (i, end)
    t = np.asarray(rec.t, dtype=float)

    def _time(i: int) -> float:
        return float(t[min(i, n - 1)]) if n else 0.0

    times = {
        k: (_time(a0), _time(b0 - 1) if b0 > a0 else _time(a0)) for k, (a0, b0) in bounds.items()
    }
    return Segmentation(
        episode=rec.episode,
        bounds=bounds,
        times=times,
        attempts=attempts,
        best=best,
        contact=contact,
        holding=holding,
        has_object=rec.obj is not None,
        has_ee=rec.ee is not None,
    )
