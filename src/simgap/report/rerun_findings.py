"""Where in an episode each finding belongs: the moments findings.json itself names.

A finding is placed at a moment only from figures it carries; none is guessed:

- the time base (``evidence``): its fastest step, ``peak_speed_episode`` / ``peak_speed_frame``
  (the row of the episode where that step ends), refused or not;
- plumbing's stale first frame: each episode its ``details.episodes`` lists as stale, at the
  episode's first frame, with that episode's own figures;
- the failure phases: each failed real episode (``details.real_episodes``) at the start of
  the phase it broke in when the segmentation entered it, else at the start of the furthest
  phase it reached (the one it was in when it broke), seconds into the episode.

Every other finding, and these in the episodes they do not name, sits at the episode's first
frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from simgap.errors import InputError
from simgap.figures.base import finite
from simgap.figures.evidence import TimeBaseFigures
from simgap.figures.phases import PhasesDetails
from simgap.figures.plumbing import StaleFirstFrameDetails
from simgap.finding import details_of, figures_of

LEVELS = {"implicated": "WARN", "inconclusive": "DEBUG"}
"""Text-log level of a finding's verdict (the rest INFO)."""


@dataclass(frozen=True)
class FindingMark:
    """One finding at one moment of one episode.

    Attributes:
        finding: index of the finding in the diagnosis's ``findings``.
        episode: the episode it concerns.
        row: the row of the episode (0 is its first frame), or None when ``t_s`` places it.
        t_s: seconds into the episode (the recording's own ``timestamp``), or None.
        note: what happened there, in words.
    """

    finding: int
    episode: int
    row: int | None
    t_s: float | None
    note: str


def finding_text(f: Mapping[str, Any], note: str = "") -> str:
    """A finding as one log line: ``[verdict] branch: title: summary`` (and the note)."""
    text = f"[{f.get('verdict')}] {f.get('branch')}: {f.get('title')}: {f.get('summary')}"
    return f"{text} Here: {note}" if note else text


def level(f: Mapping[str, Any]) -> str:
    """The text-log level of a finding (``LEVELS`` by its verdict)."""
    return LEVELS.get(str(f.get("verdict")), "INFO")


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _time_base(i: int, fig: TimeBaseFigures) -> list[FindingMark]:
    e, k = _int(fig.peak_speed_episode), _int(fig.peak_speed_frame)
    speed = finite(fig.peak_speed_rad_s)
    if e is None or k is None or speed is None:
        return []
    return [
        FindingMark(
            i,
            e,
            k,
            None,
            f"the fastest step of the recording ends on this "
            f"frame: {speed:.3g} rad/s "
            f"({fig.peak_speed_joint})",
        )
    ]


def _stale(i: int, det: StaleFirstFrameDetails) -> list[FindingMark]:
    out = []
    for ep in det.episodes:
        why = []
        before = ep.taken_before_reset_s
        if ep.before_reset and finite(before) is not None:
            why.append(f"its first image was taken {before:.3g} s before the reset")
        if ep.same_as_previous_last:
            why.append("identical to the previous episode's last")
        if why:
            out.append(FindingMark(i, ep.episode, 0, None, "; ".join(why)))
    return out


def _phases(i: int, det: PhasesDetails) -> list[FindingMark]:
    out = []
    for ep in det.real_episodes or ():
        if not ep.failure_phase:
            continue
        phase, reached = ep.failure_phase, ep.reached
        times = ep.phases_s
        at = phase if phase in times else reached if reached in times else None
        if at is None or not times[at]:
            continue
        note = (
            f"episode {ep.episode} failed at {phase}"
            + ("" if at == phase else f" after entering {at} here")
            + (f": {ep.before}" if ep.before else "")
        )
        out.append(FindingMark(i, ep.episode, None, float(times[at][0]), note))
    return out


def finding_marks(findings: Sequence[Mapping[str, Any]]) -> list[FindingMark]:
    """Every moment the findings name (the module docstring says which); a finding whose
    figures do not read as its kind's is placed nowhere."""
    out: list[FindingMark] = []
    for i, f in enumerate(findings):
        branch, kind = f.get("branch"), f.get("kind")
        try:
            if branch == "evidence" and kind == TimeBaseFigures.kind and f.get("figures"):
                out += _time_base(i, figures_of(f, TimeBaseFigures))
            elif branch == "plumbing" and kind == StaleFirstFrameDetails.kind:
                out += _stale(i, details_of(f, StaleFirstFrameDetails))
            elif branch == "phases":
                out += _phases(i, details_of(f, PhasesDetails))
        except InputError:
            continue
    return out


def episode_logs(
    episode: int,
    t_s: np.ndarray,
    t0_s: float,
    findings: Sequence[Mapping[str, Any]],
    marks: Sequence[FindingMark],
) -> list[tuple[int, str, str, str]]:
    """One episode's finding logs in time order: (row, text, level, branch). A finding
    placed in this episode is logged at each of its marks (a time goes to the nearest
    frame, ``t_s + t0_s`` being the recording's own time of each row); the rest at row 0."""
    logs = []
    for i, f in enumerate(findings):
        here = [m for m in marks if m.episode == episode and m.finding == i]
        for m in here or [FindingMark(i, episode, 0, None, "")]:
            row = (
                m.row
                if m.row is not None
                else int(np.argmin(np.abs(t_s + t0_s - float(m.t_s or 0.0))))
            )
            row = min(max(row, 0), t_s.size - 1)
            logs.append((row, i, finding_text(f, m.note), level(f), str(f.get("branch"))))
    return [(row, text, lvl, br) for row, _, text, lvl, br in sorted(logs)]
