"""What every training check shares: what the rig's recording and model give the audit
(``RigSide``), whether a value may decide (stated, not a default or ``# guessed``), and the
Findings a check returns (measured, or not measured naming the keys to fill)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from simgap.figures.training import training_records
from simgap.finding import Finding, Verdict
from simgap.rig import Rig

BRANCH = "training"


@dataclass(frozen=True)
class RigSide:
    """What the rig's recording and model give the audit (None: not available).

    Attributes:
        dataset_dt_s: the dataset's median frame period [s].
        pan_axis_m: the first joint's axis point in model coordinates [m], shape (3,).
        camera_fovy_deg: the model camera's vertical field of view [deg].
        camera_body: the model body the camera is fixed to.
        camera_pos_m: the camera's position in that body [m], shape (3,).
    """

    dataset_dt_s: float | None = None
    pan_axis_m: tuple[float, float, float] | None = None
    camera_fovy_deg: float | None = None
    camera_body: str | None = None
    camera_pos_m: tuple[float, float, float] | None = None


def stated(rig: Rig, key: str, value: Any) -> bool:
    return value is not None and rig.provenance(key) in ("given", "from ManiSkill")


def missing_keys(rig: Rig, pairs: Sequence[tuple[str, Any]]) -> list[str]:
    """The keys among ``pairs`` (key, value) no verdict may rest on, with why."""
    out = []
    for key, value in pairs:
        if not stated(rig, key, value):
            out.append(f"{key} ({'guessed' if rig.provenance(key) == 'guessed' else 'not set'})")
    return out


def training_finding(
    title: str,
    check: str,
    implicated: bool,
    summary: str,
    fix: str,
    figures: dict[str, Any],
    key_figure: str | None,
    prov: dict[str, str],
) -> Finding:
    record, details = training_records(check)
    return Finding(
        branch=BRANCH,
        verdict=Verdict.IMPLICATED if implicated else Verdict.ELIMINATED,
        title=title,
        summary=summary,
        figures=record.from_mapping({"check": check, **figures}),
        key_figure=key_figure,
        next_step=fix if implicated else "",
        details=details(check=check, provenance=prov),
    )


def not_measured(title: str, check: str, missing: list[str], what: str) -> Finding:
    keys = tuple(m.split(" (")[0] for m in missing)
    record, details = training_records(check)
    return Finding(
        branch=BRANCH,
        verdict=Verdict.NOT_MEASURED,
        title=title,
        summary=f"Not measured: {what} needs {', '.join(missing)}; no verdict rests "
        "on a default or a guess.",
        figures=record.from_mapping({"check": check}),
        next_step=f"Set {' and '.join(keys)} in rig.toml.",
        details=details(check=check),
        needs=keys,
    )


def provenance_of(rig: Rig, *keys: str) -> dict[str, str]:
    return {k: rig.provenance(k) for k in keys}
