"""What a diagnosis left open, and the estimate it stands at (``Estimate``), read from
the actuator finding of ``findings.json`` or an identification's JSON."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.actuator.excite_design import DELAY
from simgap.actuator.joint_problem import KINDS
from simgap.errors import InputError
from simgap.figures.actuator import JointDynamicsDetails, JointDynamicsFigures, LadderFigures


@dataclass(frozen=True)
class Estimate:
    """What a diagnosis left open, and the estimate it stands at.

    Attributes:
        rig: the rig's name the diagnosis was run on.
        params: joint -> kind -> the best fit [SI] (identified or not).
        delay_s: joint -> the best delay [s].
        clock: the recorder's clock the fit replays with.
        targets: (joint, kind or ``delay``, the diagnosis's reason), in joint order.
        fitted_episodes: the recording's episodes the diagnosis fitted (the first ones).
        fit_seconds: seconds of each it replayed [s].
    """

    rig: str
    params: Mapping[str, Mapping[str, float]]
    delay_s: Mapping[str, float]
    clock: str
    targets: tuple[tuple[str, str, str], ...]
    fitted_episodes: int = 2
    fit_seconds: float = 8.0

    def only(self, kinds: Sequence[str] = (), joints: Sequence[str] = ()) -> Estimate:
        """The same estimate with only the targets of ``kinds`` on ``joints`` (empty: all);
        a name that is no target is an error listing the targets."""
        from dataclasses import replace

        for asked, have, what, opt in (
            (kinds, {t[1] for t in self.targets}, "parameter", "--param"),
            (joints, {t[0] for t in self.targets}, "joint", "--joint"),
        ):
            missing = sorted(set(asked) - have)
            if missing:
                raise InputError(
                    field=opt,
                    expected=f"a {what} the diagnosis "
                    f"declared not identifiable: {', '.join(sorted(have))}",
                    got=", ".join(missing),
                    fix=f"name one of those {what}s",
                )
        return replace(
            self,
            targets=tuple(
                t
                for t in self.targets
                if (not kinds or t[1] in kinds) and (not joints or t[0] in joints)
            ),
        )


def estimate_from_identification(
    js: Mapping[str, Any] | JointDynamicsDetails, rig: str, source: Any = None
) -> Estimate:
    """The ``Estimate`` of an identification (``identify_rig``'s JSON, or the actuator
    finding's details, which carry it whole)."""
    det = (
        js
        if isinstance(js, JointDynamicsDetails)
        else JointDynamicsDetails.from_mapping(
            {k: v for k, v in js.items() if not str(k).startswith("_")},
            source,
            "identification",
            strict=False,
        )
    )
    for key, table in (
        ("not_identifiable", det.not_identifiable),
        ("params_fitted", det.params_fitted),
        ("delay_s", det.delay_s),
    ):
        if not table:
            raise InputError(
                file=source,
                field=f"actuator finding: {key}",
                expected="the joint identification of a LeRobot dataset (a joint -> value table)",
                got="nothing",
                fix="run 'simgap diagnose RIG --out DIR' on a rig whose "
                "evidence is a LeRobot dataset, and pass DIR",
            )
    targets = []
    for j, kinds in det.not_identifiable.items():
        for kind, why in kinds.items():
            if kind in KINDS or kind == DELAY:
                targets.append((str(j), str(kind), str(why)))
    clock = det.clock.chosen if det.clock is not None and det.clock.chosen else "exact"
    return Estimate(
        rig=rig,
        params={j: {k: float(v) for k, v in p.items()} for j, p in det.params_fitted.items()},
        delay_s={j: float(v) for j, v in det.delay_s.items()},
        clock=clock,
        targets=tuple(targets),
        fitted_episodes=det.fitted_episodes if det.fitted_episodes is not None else 2,
        fit_seconds=det.fit_seconds if math.isfinite(det.fit_seconds) else 8.0,
    )


def estimate_from_diagnosis(path: str | Path) -> Estimate:
    """The ``Estimate`` of ``DIR/findings.json`` (or the file itself)."""
    from simgap.finding import load_diagnosis

    p = Path(path)
    f = p / "findings.json" if p.is_dir() else p
    if not f.is_file():
        raise InputError(
            file=p,
            field="--for",
            expected="a diagnosis folder holding findings.json",
            got="no such folder" if not p.exists() else "a folder without findings.json",
            fix="run 'simgap diagnose RIG --out DIR' and pass --for DIR",
        )
    diag = load_diagnosis(f)
    act = next((x for x in diag.findings if x.branch == "actuator"), None)
    if act is not None and from_bench_logs(act):
        raise InputError(
            file=f,
            field="findings: actuator",
            expected="the joint identification of a LeRobot dataset against the rig's MJCF",
            got="the bench ladder's fit: the rig names [evidence] actuator_logs, "
            "so diagnose fitted the servo bench logs instead (their rungs have "
            "no intervals to narrow); excite --for does not design from bench "
            "logs",
            fix="diagnose a copy of the rig without [evidence] "
            "actuator_logs and actuator_format (the dataset and its MJCF are "
            "then identified joint by joint) and pass that diagnosis",
        )
    if act is None or act.kind != JointDynamicsFigures.kind:
        raise InputError(
            file=f,
            field="findings: actuator",
            expected="an actuator finding from a LeRobot dataset (the joint identification)",
            got="none"
            if act is None
            else f"verdict {act.verdict.value} without the identification's figures",
            fix="diagnose a rig whose evidence is a LeRobot dataset with its "
            "MJCF ('simgap diagnose RIG --out DIR')",
        )
    return estimate_from_identification(act.typed_details(JointDynamicsDetails), diag.rig, f)


def from_bench_logs(finding: Any) -> bool:
    """Whether an actuator finding (a Finding, or its JSON form) is the bench ladder's
    (``evidence.actuator_logs``: per joint the rung selected and its error, no
    identification)."""
    kind = finding.get("kind") if isinstance(finding, Mapping) else finding.kind
    return str(kind or "") == LadderFigures.kind
