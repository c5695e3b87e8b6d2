"""Verdict, Finding and Diagnosis: what every branch ends in, with a JSON round trip."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, TypeVar

from simgap.errors import InputError
from simgap.figures.base import Record

R = TypeVar("R", bound=Record)

SCHEMA_VERSION = 1
"""The version of findings.json's format (docs/findings.schema.json); raised on any change a
reader of the old format would misread."""


class Verdict(StrEnum):
    """The outcome of one branch of the diagnosis."""

    IMPLICATED = "implicated"
    ELIMINATED = "eliminated"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURED = "not_measured"


VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)


def jsonable(value: Any) -> Any:
    """Numbers, strings, bools, None, lists and str-keyed dicts; NaN and inf become None."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "ndim") and getattr(value, "ndim", 1) == 0:  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "tolist"):
        return jsonable(value.tolist())
    raise TypeError(f"not JSON-able: {type(value).__name__}")


@dataclass(frozen=True)
class Finding:
    """The end of one branch: a verdict, the numbers behind it and the change to make.

    Attributes:
        branch: the branch name (``latency``, ``contact``, ``actuator``, ...).
        verdict: implicated, eliminated, inconclusive or not_measured.
        figures: the branch's typed figures (a :class:`simgap.figures.base.Record` whose fields
            carry their units); a plain mapping only for a kind no type is declared for yet.
        next_step: one sentence: what to do or measure next.
        title: a short human label for the report (e.g. "Gripper unit").
        summary: one or two sentences stating what was found, with its key number.
        key_figure: name of the figure shown in summary tables.
        residual: a fit's residual, where a fit ran (unit in ``residual_unit``).
        noise_floor: the instrument's noise, in the same unit as ``residual``.
        residual_unit: the unit of residual and noise floor (``rad``, ``N m``, ``m``).
        artifacts: name -> path of files written (model patch, randomisation spec, net).
        details: the data the report plots (a typed record, or a plain mapping).
        needs: for ``not_measured``: the evidence that would let the branch run.
        kind: which of the branch's findings this is, where a branch writes several kinds
            (taken from the figures' type when it is typed and serves one kind).
    """

    branch: str
    verdict: Verdict
    figures: Record | Mapping[str, Any] = field(default_factory=dict)
    next_step: str = ""
    title: str = ""
    summary: str = ""
    key_figure: str | None = None
    residual: float | None = None
    noise_floor: float | None = None
    residual_unit: str | None = None
    artifacts: Mapping[str, str] = field(default_factory=dict)
    details: Record | Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    kind: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            try:
                object.__setattr__(self, "verdict", Verdict(self.verdict))
            except ValueError:
                raise InputError(
                    field="verdict", expected=f"one of {', '.join(VERDICTS)}", got=self.verdict
                ) from None
        object.__setattr__(self, "needs", tuple(self.needs))
        for part in (self.figures, self.details):
            if isinstance(part, Record):
                if part.branch != self.branch:
                    raise ValueError(
                        f"{type(part).__name__} belongs to the {part.branch} "
                        f"branch, not {self.branch}"
                    )
                served = part.serves()
                if self.kind and self.kind not in served:
                    raise ValueError(
                        f"{type(part).__name__} is kind {' or '.join(map(repr, served))}, "
                        f"not {self.kind!r}"
                    )
                if not self.kind:
                    if len(served) > 1:
                        raise ValueError(
                            f"{type(part).__name__} serves several kinds "
                            f"({', '.join(served)}): name the finding's kind"
                        )
                    object.__setattr__(self, "kind", served[0])

    def typed(self, cls: type[R]) -> R:
        """The figures as ``cls``: as they are when typed, else read from their JSON form."""
        return _as(cls, self.figures, "figures")

    def typed_details(self, cls: type[R]) -> R:
        """The details as ``cls``, like :meth:`typed`."""
        return _as(cls, self.details, "details")

    @property
    def key_value(self) -> Any:
        """The value of ``key_figure`` (None when unset)."""
        if self.key_figure is None:
            return None
        if isinstance(self.figures, Record):
            return getattr(self.figures, self.key_figure, None)
        return self.figures.get(self.key_figure)

    @property
    def key_unit(self) -> str | None:
        """The unit of ``key_figure`` where the figures are typed, else None."""
        if self.key_figure is None or not isinstance(self.figures, Record):
            return None
        return type(self.figures).unit_of(self.key_figure)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict; ``from_dict`` reads it back."""
        key = (
            None
            if self.key_figure is None
            else {
                "name": self.key_figure,
                "value": jsonable(_plain(self.key_value)),
                "unit": self.key_unit,
            }
        )
        d: dict[str, Any] = {
            "branch": self.branch,
            "kind": self.kind,
            "verdict": self.verdict.value,
            "title": self.title,
            "summary": self.summary,
            "figures": jsonable(_plain(self.figures)),
            "units": type(self.figures).units() if isinstance(self.figures, Record) else {},
            "key_figure": key,
            "residual": jsonable(self.residual),
            "noise_floor": jsonable(self.noise_floor),
            "residual_unit": self.residual_unit,
            "artifacts": jsonable(self.artifacts),
            "next_step": self.next_step,
            "details": jsonable(_plain(self.details)),
            "needs": list(self.needs),
        }
        return d

    @classmethod
    def from_dict(
        cls, d: Mapping[str, Any], source: str | Path | None = None, *, strict: bool = True
    ) -> Finding:
        """Build from ``to_dict`` output; unknown or missing keys are named in the error.

        Figures and details of a typed (branch, kind) are read into their record;
        ``strict=False`` (a file older than the schema) ignores figure names it no longer has.
        A finding that names no kind (written before findings did) takes the kind its
        figures' names identify, or none where they are ambiguous
        (``simgap.figures.registry.kind_of``).
        """
        _check_types(d, source)
        known = {
            "branch",
            "verdict",
            "title",
            "summary",
            "figures",
            "key_figure",
            "residual",
            "noise_floor",
            "residual_unit",
            "artifacts",
            "next_step",
            "details",
            "needs",
            "kind",
            "units",
        }
        for key in ("branch", "verdict"):
            if key not in d:
                raise InputError(
                    file=source, field=key, expected="this required key in a finding", got="nothing"
                )
        extra = set(d) - known
        if extra:
            raise InputError(
                file=source,
                field=sorted(extra)[0],
                expected="a known finding key",
                got=sorted(extra),
                fix=f"use only: {', '.join(sorted(known))}",
            )
        from simgap.figures.registry import details_type, figures_type, kind_of

        branch, kind = str(d["branch"]), kind_of(d)
        raw_figures, raw_details = dict(d.get("figures") or {}), dict(d.get("details") or {})
        figures: Record | dict[str, Any] = raw_figures
        details: Record | dict[str, Any] = raw_details
        ftype, dtype = figures_type(branch, kind), details_type(branch, kind)
        if ftype is not None and raw_figures:
            figures = ftype.from_mapping(
                raw_figures, source, f"findings[{branch}].figures", strict=strict
            )
        if dtype is not None and raw_details:
            details = dtype.from_mapping(
                raw_details, source, f"findings[{branch}].details", strict=strict
            )
        key_figure: Any = d.get("key_figure")
        if isinstance(key_figure, Mapping):
            key_figure = key_figure.get("name")
        return cls(
            branch=branch,
            verdict=Verdict(d["verdict"]) if d["verdict"] in VERDICTS else d["verdict"],
            figures=figures,
            kind=kind,
            next_step=str(d.get("next_step", "")),
            title=str(d.get("title", "")),
            summary=str(d.get("summary", "")),
            key_figure=key_figure,
            residual=d.get("residual"),
            noise_floor=d.get("noise_floor"),
            residual_unit=d.get("residual_unit"),
            artifacts=dict(d.get("artifacts") or {}),
            details=details,
            needs=tuple(d.get("needs") or ()),
        )


def figures_of(finding: Finding | Mapping[str, Any], cls: type[R]) -> R:
    """The figures of a Finding, or of its JSON form (a report's, a test's), as ``cls``.

    A JSON form is read leniently (a left-out figure is not measured, an unknown name is
    ignored): the report draws what an older or hand-written file holds.
    """
    if isinstance(finding, Finding):
        return finding.typed(cls)
    return cls.from_mapping(finding.get("figures") or {}, strict=False)


def details_of(finding: Finding | Mapping[str, Any], cls: type[R]) -> R:
    """The details of a Finding or of its JSON form as ``cls``, like :func:`figures_of`."""
    if isinstance(finding, Finding):
        return finding.typed_details(cls)
    return cls.from_mapping(finding.get("details") or {}, where="details", strict=False)


def _plain(value: Any) -> Any:
    """A record's JSON form; anything else as it is."""
    return value.to_dict() if isinstance(value, Record) else value


def _as(cls: type[R], part: Record | Mapping[str, Any], where: str) -> R:
    if isinstance(part, cls):
        return part
    if isinstance(part, Record):
        raise TypeError(f"the {where} are {type(part).__name__}, not {cls.__name__}")
    return cls.from_mapping(part, where=where)


def _check_types(d: Any, source: str | Path | None) -> None:
    """The JSON types of one finding (values are checked where they are used)."""
    if not isinstance(d, Mapping):
        raise InputError(
            file=source, field="findings[]", expected="an object per finding", got=type(d).__name__
        )
    for key, types, name in (
        ("branch", (str,), "a string"),
        ("verdict", (str,), "a string"),
        ("figures", (Mapping, type(None)), "an object"),
        ("artifacts", (Mapping, type(None)), "an object"),
        ("details", (Mapping, type(None)), "an object"),
        ("needs", (list, type(None)), "a list"),
    ):
        if key in d and not isinstance(d[key], types):
            raise InputError(
                file=source,
                field=key,
                expected=name,
                got=f"{type(d[key]).__name__} {str(d[key])[:60]!r}",
            )
    if d.get("verdict") not in VERDICTS:
        raise InputError(
            file=source,
            field="verdict",
            expected=f"one of {', '.join(VERDICTS)}",
            got=d.get("verdict"),
        )


@dataclass(frozen=True)
class Diagnosis:
    """The comparability check, the Findings in ladder order, and the stop verdict.

    Attributes:
        rig: the rig's name (findings from another rig are refused downstream).
        findings: in ladder order (plumbing first, then latency, contact, actuator, ...).
        stop: why the ladder stopped: ``{"branch", "verdict", "reason"}``.
        comparability: the comparability check of the sim and real manifests, when given.
        seed: the seed used for everything random in the run.
    """

    rig: str
    findings: tuple[Finding, ...]
    stop: Mapping[str, Any]
    comparability: Mapping[str, Any] | None = None
    seed: int = 0

    def by_branch(self, branch: str) -> list[Finding]:
        """All findings of one branch."""
        return [f for f in self.findings if f.branch == branch]

    def implicated(self) -> list[Finding]:
        """The findings whose verdict is ``implicated``."""
        return [f for f in self.findings if f.verdict is Verdict.IMPLICATED]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: ``{"rig", "seed", "comparability", "findings", "stop"}``."""
        from simgap._version import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "simgap_version": __version__,
            "rig": self.rig,
            "seed": self.seed,
            "comparability": jsonable(self.comparability),
            "findings": [f.to_dict() for f in self.findings],
            "stop": jsonable(self.stop),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str | Path | None = None) -> Diagnosis:
        """Read back ``to_dict`` output."""
        if "findings" not in d or not isinstance(d["findings"], list):
            raise InputError(
                file=source,
                field="findings",
                expected="a list of findings",
                got=type(d.get("findings")).__name__,
            )
        version = d.get("schema_version", SCHEMA_VERSION)
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise InputError(
                file=source, field="schema_version", expected="a whole number >= 1", got=version
            )
        if version > SCHEMA_VERSION:
            raise InputError(
                file=source,
                field="schema_version",
                expected=f"format {SCHEMA_VERSION} or older (this simgap's)",
                got=version,
                fix="read it with the simgap release that wrote it "
                "(its simgap_version), or upgrade simgap",
            )
        seed = d.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise InputError(file=source, field="seed", expected="a whole number >= 0", got=seed)
        if not isinstance(d.get("stop") or {}, Mapping):
            raise InputError(file=source, field="stop", expected="an object", got=d.get("stop"))
        return cls(
            rig=str(d.get("rig", "")),
            findings=tuple(
                Finding.from_dict(f, source, strict="schema_version" in d) for f in d["findings"]
            ),
            stop=dict(d.get("stop") or {}),
            comparability=d.get("comparability"),
            seed=int(d.get("seed", 0)),
        )

    def to_json(self) -> str:
        """Pretty JSON text."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)


def load_diagnosis(path: str | Path) -> Diagnosis:
    """Read ``findings.json``; errors name the file.

    Paths in it are relative to its folder (``simgap.outputs.relative_paths``) and are
    returned absolute, resolved against that folder; an absolute path (an older file) is
    used as it is.
    """
    from simgap.outputs import resolve_paths
    from simgap.validate import read_json

    path = Path(path)
    if not path.exists():
        raise InputError(
            file=path,
            expected="a findings.json file",
            got="no such file",
            fix="run 'simgap diagnose RIG --out DIR' and pass DIR/findings.json",
        )
    d = read_json(path, "a findings.json file")
    if not isinstance(d, dict):
        raise InputError(file=path, expected="a JSON object", got=type(d).__name__)
    return Diagnosis.from_dict(resolve_paths(d, path.parent), source=path)
