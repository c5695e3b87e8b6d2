"""Camera frames with the labels the appearance checks group by (read by ``evidence.frames``,
compared by ``appearance/``)."""

from __future__ import annotations

from dataclasses import dataclass

from simgap.errors import InputError
from simgap.series import Frames


@dataclass(frozen=True)
class FrameSet:
    """Frames plus the labels the appearance checks group by.

    Attributes:
        frames: images (N, H, W, 3) uint8 and joint angles (N, J) [rad].
        recording: session name of each frame, length N.
        pose_label: ``rest``, ``start`` or ``""`` for each frame, length N.
    """

    frames: Frames
    recording: tuple[str, ...]
    pose_label: tuple[str, ...]

    def __post_init__(self) -> None:
        n = self.frames.n_frames
        if len(self.recording) != n or len(self.pose_label) != n:
            raise InputError(
                file=self.frames.source,
                field="recording/pose_label",
                expected=f"{n} labels (one per frame)",
                got=f"{len(self.recording)} and {len(self.pose_label)}",
            )

    @property
    def n_frames(self) -> int:
        """Number of frames N."""
        return self.frames.n_frames
