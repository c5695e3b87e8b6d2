"""Failure signatures: the phase where a failed episode broke, what happened just before, and
which branches that points at.

The mapping from phase to branch is the method's: a rollout that reached the right place and
failed at contact has already eliminated appearance; a failure before any contact points at
perception (appearance) or latency; an early release near a distant target points at the
body's kinematics or the controller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simgap.episodes.segment import Segmentation, SegmentParams, check_phase, segment
from simgap.values.episode import PHASES, EpisodeRecord

PHASE_BRANCHES: dict[str, dict[str, Any]] = {
    "approach": {
        "points_at": ("appearance", "latency"),
        "eliminates": (),
        "why": "it failed before any contact: the policy did not find or reach the object, "
        "which points at what it sees (appearance) or how stale its view is (latency)",
    },
    "contact": {
        "points_at": ("contact", "controller", "body"),
        "eliminates": ("appearance",),
        "why": "it reached the object and failed at contact, so it saw the object: appearance "
        "is eliminated",
    },
    "grasp": {
        "points_at": ("contact", "actuator"),
        "eliminates": ("appearance",),
        "why": "it reached the object and the grasp failed: friction, mass, squeeze and the "
        "gripper's torque (contact, actuator); appearance is eliminated",
    },
    "lift_and_carry": {
        "points_at": ("contact", "actuator"),
        "eliminates": ("appearance",),
        "why": "it held and lifted the object and lost it in the carry: grip under load "
        "(contact, actuator); appearance is eliminated",
    },
    "place": {
        "points_at": ("body", "controller"),
        "eliminates": ("contact",),
        "why": "it carried the object and released it in the wrong place: where the arm "
        "believes it is (body kinematics, joint zeros) or how it tracks (controller)",
    },
    "after_success": {
        "points_at": (),
        "eliminates": ("appearance", "contact", "actuator", "latency"),
        "why": "the task was done and then undone: the policy has no clock; stop the "
        "episode at success or shorten the deployed episode",
    },
}
"""phase -> branches it points at, branches it eliminates, and why."""

SIGNATURES: dict[str, str] = {
    "search_never_found_object": "approach",
    "closed_away_from_object": "approach",
    "never_closed": "approach",
    "touched_without_grasp": "contact",
    "closed_on_nothing": "grasp",
    "grasp_did_not_lift": "grasp",
    "dropped_in_carry": "lift_and_carry",
    "carried_never_released": "lift_and_carry",
    "early_release_short_of_target": "place",
    "released_at_target_but_failed": "place",
    "drift_after_success": "after_success",
    "annotated": "",
}
"""Every signature and the phase it belongs to ("annotated": the phase a person gave)."""


@dataclass(frozen=True)
class EpisodeResult:
    """One episode's outcome, the phase it broke in and the signature of the break.

    Attributes:
        episode: episode index.
        success: True, False, or None when unknown.
        success_source: ``manifest``, ``inferred`` or ``unknown``.
        reached: the furthest phase entered.
        failure_phase: the phase it broke in (None for successes and unknowns).
        signature: one of ``SIGNATURES`` (None for successes and unknowns).
        before: what happened just before the break, in words.
        evidence: the numbers behind the signature (SI units in the key suffix).
        annotated: whether the failure phase came from a person's annotation.
        segmentation: the phases, or None for a trial with no recording.
    """

    episode: int
    success: bool | None
    success_source: str
    reached: str | None
    failure_phase: str | None
    signature: str | None
    before: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)
    annotated: bool = False
    segmentation: Segmentation | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able summary (phase bounds as times)."""
        seg = self.segmentation
        return {
            "episode": self.episode,
            "success": self.success,
            "success_source": self.success_source,
            "reached": self.reached,
            "failure_phase": self.failure_phase,
            "signature": self.signature,
            "before": self.before,
            "evidence": dict(self.evidence),
            "annotated": self.annotated,
            "phases_s": {k: list(v) for k, v in seg.times.items()} if seg else {},
        }


def place_target(
    segs: Sequence[Segmentation], successes: Sequence[bool | None]
) -> np.ndarray | None:
    """The place target [m], shape (3,): the median release point of successful episodes.

    None when no successful episode released anything it recorded a position for.
    """
    pts = []
    for seg, ok in zip(segs, successes, strict=True):
        if ok and seg.best is not None:
            pt = seg.attempts[seg.best].release_point
            if pt is not None:
                pts.append(pt)
    return np.median(np.asarray(pts), axis=0) if pts else None


def _dist(a: Any, b: np.ndarray | None) -> float | None:
    if a is None or b is None:
        return None
    return float(np.linalg.norm(np.asarray(a, dtype=float)[:2] - b[:2]))


def _approach(rec: EpisodeRecord, seg: Segmentation) -> tuple[str, str, dict[str, Any]]:
    ev: dict[str, Any] = {}
    if rec.ee is not None and rec.obj is not None:
        d = np.linalg.norm(rec.ee - rec.obj, axis=1)
        path = float(np.sum(np.linalg.norm(np.diff(rec.ee, axis=0), axis=1)))
        net = float(np.linalg.norm(rec.ee[-1] - rec.ee[0]))
        ev = {
            "start_distance_m": float(d[0]),
            "min_distance_m": float(d.min()),
            "final_distance_m": float(d[-1]),
            "progress_fraction": float(1.0 - d.min() / d[0]) if d[0] > 0 else 0.0,
            "path_ratio": path / max(net, 1e-6),
        }
    if seg.attempts:
        a = seg.attempts[seg.best if seg.best is not None else 0]
        ev.update({"opening_fraction": a.opening_frac, "gap_deg": float(np.rad2deg(a.gap_rad))})
        return (
            "closed_away_from_object",
            "the gripper closed on something that was not the object (it never reached the object)",
            ev,
        )
    if ev:
        return (
            "search_never_found_object",
            f"the end effector came no closer than {ev['min_distance_m']:.3f} m to the "
            f"object (progress {ev['progress_fraction']:.0%}, path {ev['path_ratio']:.1f}x "
            "its net displacement): the search never found it",
            ev,
        )
    return ("never_closed", "the gripper never closed", ev)


def classify(
    rec: EpisodeRecord,
    seg: Segmentation,
    success: bool | None,
    target: np.ndarray | None,
    params: SegmentParams,
) -> tuple[str | None, str | None, str, dict[str, Any]]:
    """The failure phase, signature, what happened just before, and the evidence.

    Returns (None, None, "", {}) for a success or an unknown outcome.
    """
    if success is not False:
        return None, None, "", {}
    if "after_success" in seg.bounds:
        ev = {
            "final_distance_to_target_m": _dist(rec.obj[-1], target)
            if rec.obj is not None
            else None
        }
        return (
            "after_success",
            "drift_after_success",
            "the object was placed at the target and then drifted away",
            ev,
        )
    reached = seg.reached
    if reached == "approach":
        sig, before, ev = _approach(rec, seg)
        return "approach", sig, before, ev
    if reached == "contact":
        return (
            "contact",
            "touched_without_grasp",
            "it reached the object and touched it but never closed the gripper on it",
            {"contact_s": float(rec.t[seg.contact]) if seg.contact is not None else None},
        )
    assert seg.best is not None
    a = seg.attempts[seg.best]
    ev = {
        "opening_fraction": a.opening_frac,
        "gap_deg": float(np.rad2deg(a.gap_rad)),
        "close_s": float(rec.t[a.close]),
        "attempts": len(seg.attempts),
    }
    if reached == "grasp":
        if a.empty:
            return (
                "grasp",
                "closed_on_nothing",
                f"the gripper closed to within {abs(np.rad2deg(a.gap_rad)):.1f} deg of its "
                f"command (opening {a.opening_frac:.0%} of its range): nothing between "
                "the jaws",
                ev,
            )
        return (
            "grasp",
            "grasp_did_not_lift",
            "the gripper closed on the object but the object never rose",
            ev,
        )
    if reached == "lift_and_carry":
        if a.drop is not None:
            ev["drop_s"] = float(rec.t[a.drop])
            return (
                "lift_and_carry",
                "dropped_in_carry",
                "the object was lifted and fell while the gripper was still closed",
                ev,
            )
        return (
            "lift_and_carry",
            "carried_never_released",
            "the object was lifted and carried but never released before the end",
            ev,
        )
    d = _dist(a.release_point, target)
    ev["release_distance_to_target_m"] = d
    if d is not None and d > params.place_tol_m:
        return (
            "place",
            "early_release_short_of_target",
            f"the gripper opened {d:.3f} m from the place target",
            ev,
        )
    return (
        "place",
        "released_at_target_but_failed",
        "the gripper opened at the target but the trial was judged a failure",
        ev,
    )


def _success_at(
    rec: EpisodeRecord, seg: Segmentation, target: np.ndarray | None, params: SegmentParams
) -> int | None:
    """Index where a placement at the target was complete, or None."""
    if seg.best is None or target is None or rec.obj is None:
        return None
    a = seg.attempts[seg.best]
    if a.release is None or a.lift is None:
        return None
    dt = float(np.median(np.diff(rec.t))) if len(rec.t) > 1 else 1.0
    i = min(len(rec.t) - 1, a.release + max(1, int(round(params.settle_s / dt))))
    d = _dist(rec.obj[i], target)
    return i if d is not None and d <= params.place_tol_m else None


def analyse(
    records: Sequence[EpisodeRecord],
    labels: Sequence[bool | None] | None = None,
    annotations: Sequence[str | None] | None = None,
    target: np.ndarray | None = None,
    params: SegmentParams | None = None,
) -> list[EpisodeResult]:
    """Segment every episode and classify the failed ones.

    Args:
        records: the episodes.
        labels: success per episode from the protocol manifest (None = unknown).
        annotations: a person's failure phase per episode (overrides the segmentation).
        target: the place target [m]; by default the median release point of the episodes
            labelled successful.
        params: segmentation thresholds.

    Success, when not labelled, is inferred: the object ends within ``place_tol_m`` of the
    target (needs the object's position and a target); otherwise it stays unknown.
    """
    p = params or SegmentParams()
    n = len(records)
    labels = list(labels) if labels is not None else [None] * n
    annotations = list(annotations) if annotations is not None else [None] * n
    segs = [segment(r, p) for r in records]
    if target is None:
        target = place_target(segs, labels)
    out = []
    for rec, seg0, label, note in zip(records, segs, labels, annotations, strict=True):
        done = _success_at(rec, seg0, target, p)
        ok, source = label, "manifest"
        if ok is None:
            source = "unknown"
            if target is not None and rec.obj is not None:
                ok = (
                    _dist(rec.obj[-1], target) is not None
                    and float(_dist(rec.obj[-1], target) or 0.0) <= p.place_tol_m
                )
                source = "inferred"
        seg = segment(rec, p, success_at=done) if done is not None else seg0
        phase, sig, before, ev = classify(rec, seg, ok, target, p)
        annotated = False
        if note is not None and ok is False:
            phase, annotated = check_phase(note), True
            if sig is None or SIGNATURES.get(sig) != phase:
                sig, before = "annotated", f"a person marked the failure phase '{phase}'"
        out.append(
            EpisodeResult(
                episode=rec.episode,
                success=ok,
                success_source=source,
                reached=seg.reached,
                failure_phase=phase,
                signature=sig,
                before=before,
                evidence=ev,
                annotated=annotated,
                segmentation=seg,
            )
        )
    return out


def branch_map() -> dict[str, dict[str, Any]]:
    """The phase -> branch mapping, JSON-able, in phase order."""
    return {
        ph: {
            "points_at": list(PHASE_BRANCHES[ph]["points_at"]),
            "eliminates": list(PHASE_BRANCHES[ph]["eliminates"]),
            "why": PHASE_BRANCHES[ph]["why"],
        }
        for ph in PHASES
    }
