"""The actuator patch's figures: the MJCF patch written from a fit and the held-out replay
that decides whether it is offered; both actuator kinds (the ladder and the joint dynamics)
carry one (:class:`PatchOffer`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from simgap.figures.base import TEXT, UNITLESS, Record, figure


@dataclass(frozen=True, kw_only=True)
class PatchProof(Record):
    """The replay of held-out episodes on the rig's model and on the patched one."""

    passed: bool = figure(TEXT, "stable and better: only then is the patch offered")
    stable: bool = figure(TEXT, "the patched replay did not diverge")
    better: bool = figure(TEXT, "the patched replay is closer to the recording")
    nominal_rms_rad: Mapping[str, float] = figure(
        "rad", "per joint: the rig's model's RMS error on the held-out stretches"
    )
    patched_rms_rad: Mapping[str, float] = figure(
        "rad", "per joint: the patched model's RMS error on the same stretches"
    )
    nominal_total_rad: float = figure("rad", "the rig's model's RMS error over every joint")
    patched_total_rad: float = figure("rad", "the patched model's RMS error over every joint")
    diverged_at_s: float | None = figure("s", "when the patched replay diverged (None: never)")
    n_episodes: int | None = figure(UNITLESS, "held-out stretches replayed", default=None)
    reason: str = figure(TEXT, "the proof's outcome in words")


@dataclass(frozen=True, kw_only=True)
class PatchOffer(Record):
    """The MJCF patch written from the fit, and the proof that decides whether it is kept."""

    path: str | None = figure(TEXT, "the patch file, None when the proof failed")
    proof: PatchProof = figure(TEXT, "the held-out replay that decided")
    notes: tuple[str, ...] = figure(TEXT, "joints left out of the patch, and why", default=())
