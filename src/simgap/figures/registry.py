"""Every typed figures and details record, looked up by (branch, kind).

The list is explicit (no registration at import time): a record type is part of the
findings.json format only once it is named here, and ``simgap.figures.schema`` publishes
exactly these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simgap.figures.appearance import (
    CameraFigures,
    ExposureDetails,
    ExposureFigures,
    ReachFigures,
)
from simgap.figures.base import Record
from simgap.figures.body import FrameOriginFigures, ZeroOffsetsDetails, ZeroOffsetsFigures
from simgap.figures.calibration import (
    CheckDetails,
    CheckFigures,
    CompareFigures,
    DriftFigures,
)
from simgap.figures.contact import ContactDetails, ContactFigures
from simgap.figures.controller import GainsDetails, GainsFigures, SimplerDetails, SimplerFigures
from simgap.figures.envelope import ENVELOPE_DETAILS, ENVELOPE_FIGURES
from simgap.figures.evidence import (
    ActuatorNotRun,
    CommandShapingFigures,
    ControllerNotRun,
    EvidenceNotRun,
    ExcitationFigures,
    TimeBaseDetails,
    TimeBaseFigures,
)
from simgap.figures.joint_dynamics import JointDynamicsDetails, JointDynamicsFigures
from simgap.figures.ladder import LadderDetails, LadderFigures
from simgap.figures.latency import LatencyDetails, LatencyFigures, TransportFigures
from simgap.figures.phases import PhasesDetails, PhasesFigures
from simgap.figures.plumbing import PLUMBING_DETAILS, PLUMBING_FIGURES
from simgap.figures.training import TRAINING_FIGURES, TrainingDetails

FIGURES: tuple[type[Record], ...] = (
    LatencyFigures,
    TransportFigures,
    ContactFigures,
    ZeroOffsetsFigures,
    FrameOriginFigures,
    ExposureFigures,
    CameraFigures,
    ReachFigures,
    CheckFigures,
    CompareFigures,
    DriftFigures,
    LadderFigures,
    JointDynamicsFigures,
    SimplerFigures,
    GainsFigures,
    TimeBaseFigures,
    ExcitationFigures,
    CommandShapingFigures,
    EvidenceNotRun,
    ActuatorNotRun,
    ControllerNotRun,
    PhasesFigures,
    *ENVELOPE_FIGURES,
    *PLUMBING_FIGURES,
    *TRAINING_FIGURES,
)
"""The figures record of each (branch, kind)."""
DETAILS: tuple[type[Record], ...] = (
    LatencyDetails,
    ContactDetails,
    ZeroOffsetsDetails,
    ExposureDetails,
    CheckDetails,
    LadderDetails,
    JointDynamicsDetails,
    SimplerDetails,
    GainsDetails,
    TimeBaseDetails,
    PhasesDetails,
    *ENVELOPE_DETAILS,
    *PLUMBING_DETAILS,
    TrainingDetails,
)
"""The details record of each (branch, kind) whose details are typed (one record may serve
several kinds: ``Record.serves``)."""


def _index(records: tuple[type[Record], ...]) -> dict[tuple[str, str], type[Record]]:
    out: dict[tuple[str, str], type[Record]] = {}
    for r in records:
        for kind in r.serves():
            key = (r.branch, kind)
            if key in out:
                raise TypeError(f"{r.__name__} and {out[key].__name__} both claim {key}")
            out[key] = r
    return out


def figures_type(branch: str, kind: str = "") -> type[Record] | None:
    """The figures record of (branch, kind), or None where none is declared."""
    return _index(FIGURES).get((branch, kind))


def details_type(branch: str, kind: str = "") -> type[Record] | None:
    """The details record of (branch, kind), or None where none is declared."""
    return _index(DETAILS).get((branch, kind))


def kind_of(finding: Mapping[str, Any]) -> str:
    """The kind of a finding's JSON form: as it states it, else (a file written before
    findings named their kind) inferred from its figures' names.

    The inferred kind is the one declared (branch, kind) whose figures record shares the most
    names with the finding's figures, where no other shares as many: a branch with one
    figures record always gives its kind. Where two records tie (e.g. a not-measured check
    that carries only its ``check``), or the figures are empty, it is ``""``: the finding is
    read as it is, untyped, and consumers that pick by kind pass it over.
    """
    if "kind" in finding:
        return str(finding.get("kind") or "")
    figures = finding.get("figures")
    if not isinstance(figures, Mapping) or not figures:
        return ""
    names = set(map(str, figures))
    shared = [
        (len(names & set(r.figure_names())), kind)
        for r in FIGURES
        if r.branch == finding.get("branch")
        for kind in r.serves()
    ]
    most = max((n for n, _ in shared), default=0)
    best = [kind for n, kind in shared if n == most]
    return best[0] if most and len(best) == 1 else ""
