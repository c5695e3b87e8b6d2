"""Value types for recorded evidence: frozen, SI units, time on axis 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from simgap.errors import InputError


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class Trajectory:
    """One recorded episode of commanded and measured joint positions.

    Attributes:
        t: sample times [s], shape (T,), strictly increasing.
        q_cmd: commanded joint positions [rad], shape (T, J).
        q: measured joint positions [rad], shape (T, J).
        joint_names: model joint names, length J.
        qd: measured joint velocities [rad/s], shape (T, J), optional.
        tau: measured joint torques [N m], shape (T, J), optional.
        episode: episode index in the source.
        source: where it was read from (for messages).
        meta: small extra facts from the source (a BAM header, a gain), never arrays.
    """

    t: np.ndarray
    q_cmd: np.ndarray
    q: np.ndarray
    joint_names: tuple[str, ...]
    qd: np.ndarray | None = None
    tau: np.ndarray | None = None
    episode: int = 0
    source: str = ""
    meta: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = np.asarray(self.t, dtype=float)
        if t.ndim != 1:
            raise InputError(
                file=self.source, field="t", expected="a 1-D time axis", got=f"shape {t.shape}"
            )
        n, j = t.shape[0], len(self.joint_names)
        arrays = {"q_cmd": self.q_cmd, "q": self.q, "qd": self.qd, "tau": self.tau}
        for name, arr in arrays.items():
            if arr is None:
                continue
            a = np.asarray(arr, dtype=float)
            if a.ndim == 1 and j == 1:
                a = a[:, None]
            if a.shape != (n, j):
                raise InputError(
                    file=self.source,
                    field=name,
                    expected=f"shape ({n}, {j}) (samples, joints)",
                    got=f"shape {a.shape}",
                )
            object.__setattr__(self, name, _readonly(a))
        object.__setattr__(self, "t", _readonly(t))
        object.__setattr__(self, "joint_names", tuple(self.joint_names))

    @property
    def n_samples(self) -> int:
        """Number of samples T."""
        return int(self.t.shape[0])

    @property
    def duration_s(self) -> float:
        """Time from first to last sample [s]."""
        return float(self.t[-1] - self.t[0]) if self.n_samples > 1 else 0.0

    def joint_index(self, name: str) -> int:
        """Column of a joint; a miss lists the joints present."""
        from simgap.errors import NameNotFoundError

        try:
            return self.joint_names.index(name)
        except ValueError:
            raise NameNotFoundError("joint", name, self.joint_names, file=self.source) from None

    def select(self, names: tuple[str, ...] | list[str]) -> Trajectory:
        """A trajectory with only the named joints, in the given order."""
        idx = [self.joint_index(n) for n in names]
        return Trajectory(
            t=self.t,
            q_cmd=self.q_cmd[:, idx],
            q=self.q[:, idx],
            joint_names=tuple(names),
            qd=None if self.qd is None else self.qd[:, idx],
            tau=None if self.tau is None else self.tau[:, idx],
            episode=self.episode,
            source=self.source,
            meta=self.meta,
        )

    def rows(self, keep: np.ndarray, source: str | None = None) -> Trajectory:
        """The samples where ``keep`` (shape (T,), bool) holds, every array cut alike;
        ``source`` (default: this one's) names the cut in messages."""
        return Trajectory(
            t=self.t[keep],
            q_cmd=self.q_cmd[keep],
            q=self.q[keep],
            joint_names=self.joint_names,
            qd=None if self.qd is None else self.qd[keep],
            tau=None if self.tau is None else self.tau[keep],
            episode=self.episode,
            source=self.source if source is None else source,
            meta=self.meta,
        )


@dataclass(frozen=True)
class StageTimes:
    """Per-tick durations of the named stages of a control loop.

    Attributes:
        t: tick start on a monotonic clock [s], shape (N,).
        episode: episode index of each tick, shape (N,), int.
        step: step index within the episode, shape (N,), int.
        stages: stage name -> durations [s], each shape (N,); NaN where a tick lacks the stage.
        source: where it was read from.
    """

    t: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    stages: Mapping[str, np.ndarray]
    source: str = ""

    def __post_init__(self) -> None:
        n = np.asarray(self.t).shape[0]
        object.__setattr__(self, "t", _readonly(np.asarray(self.t, dtype=float)))
        object.__setattr__(self, "episode", _readonly(np.asarray(self.episode, dtype=np.int64)))
        object.__setattr__(self, "step", _readonly(np.asarray(self.step, dtype=np.int64)))
        st = {}
        for name, arr in self.stages.items():
            a = np.asarray(arr, dtype=float)
            if a.shape != (n,):
                raise InputError(
                    file=self.source,
                    field=f"stages.{name}",
                    expected=f"{n} durations",
                    got=f"shape {a.shape}",
                )
            st[name] = _readonly(a)
        object.__setattr__(self, "stages", st)

    @property
    def n_ticks(self) -> int:
        """Number of ticks N."""
        return int(self.t.shape[0])

    @property
    def stage_names(self) -> tuple[str, ...]:
        """Stage names in first-seen order."""
        return tuple(self.stages)

    def total(self) -> np.ndarray:
        """Per-tick total [s]: the sum of the stages present in each tick, shape (N,)."""
        if not self.stages:
            return np.zeros(self.n_ticks)
        return np.nansum(np.vstack(list(self.stages.values())), axis=0)


@dataclass(frozen=True)
class Frames:
    """Camera frames with the joint angles at which each was taken.

    Attributes:
        images: uint8 RGB, shape (N, H, W, 3).
        q: joint angles [rad] at each frame, shape (N, J).
        joint_names: model joint names, length J.
        episode: episode index of each frame, shape (N,).
        frame_index: frame index within its episode, shape (N,).
        source: where they were read from.
    """

    images: np.ndarray
    q: np.ndarray
    joint_names: tuple[str, ...]
    episode: np.ndarray
    frame_index: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        imgs = np.asarray(self.images)
        if imgs.ndim != 4 or imgs.shape[-1] != 3:
            raise InputError(
                file=self.source,
                field="images",
                expected="shape (N, H, W, 3)",
                got=f"shape {imgs.shape}",
            )
        q = np.asarray(self.q, dtype=float)
        if q.shape != (imgs.shape[0], len(self.joint_names)):
            raise InputError(
                file=self.source,
                field="q",
                expected=f"one row of {len(self.joint_names)} joint angles per "
                f"frame ({imgs.shape[0]} frames)",
                got=f"shape {q.shape}",
                fix="give exactly one joint-angle row per frame",
            )
        object.__setattr__(self, "images", _readonly(imgs.astype(np.uint8, copy=False)))
        object.__setattr__(self, "q", _readonly(q))
        object.__setattr__(self, "episode", _readonly(np.asarray(self.episode, dtype=np.int64)))
        object.__setattr__(
            self, "frame_index", _readonly(np.asarray(self.frame_index, dtype=np.int64))
        )
        object.__setattr__(self, "joint_names", tuple(self.joint_names))

    @property
    def n_frames(self) -> int:
        """Number of frames N."""
        return int(self.images.shape[0])
