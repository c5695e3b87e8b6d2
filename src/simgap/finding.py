"""Verdict, Finding and Diagnosis: what every branch ends in, with a JSON round trip."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any

from simgap.errors import InputError


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
        figures: named numbers; the unit is the name's suffix (``_s``, ``_rad``, ``_px``,
            ``_fraction``, ``_m``, ``_kg``); nested mappings group related numbers.
        next_step: one sentence: what to do or measure next.
        title: a short human label for the report (e.g. "Gripper unit").
        summary: one or two sentences stating what was found, with its key number.
        key_figure: name of the figure shown in summary tables.
        residual: a fit's residual, where a fit ran (unit in ``residual_unit``).
        noise_floor: the instrument's noise, in the same unit as ``residual``.
        residual_unit: the unit of residual and noise floor (``rad``, ``N m``, ``m``).
        artifacts: name -> path of files written (model patch, randomisation spec, net).
        details: extra JSON-able data for plots and tables in the report.
        needs: for ``not_measured``: the evidence that would let the branch run.
    """

    branch: str
    verdict: Verdict
    figures: Mapping[str, Any] = field(default_factory=dict)
    next_step: str = ""
    title: str = ""
    summary: str = ""
    key_figure: str | None = None
    residual: float | None = None
    noise_floor: float | None = None
    residual_unit: str | None = None
    artifacts: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.verdict, Verdict):
            try:
                object.__setattr__(self, "verdict", Verdict(self.verdict))
            except ValueError:
                raise InputError(field="verdict", expected=f"one of {', '.join(VERDICTS)}",
                                 got=self.verdict) from None
        object.__setattr__(self, "needs", tuple(self.needs))

    @property
    def key_value(self) -> Any:
        """The value of ``key_figure`` (None when unset)."""
        if self.key_figure is None:
            return None
        return self.figures.get(self.key_figure)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict; ``from_dict`` reads it back."""
        d: dict[str, Any] = {
            "branch": self.branch,
            "verdict": self.verdict.value,
            "title": self.title,
            "summary": self.summary,
            "figures": jsonable(self.figures),
            "key_figure": self.key_figure,
            "residual": jsonable(self.residual),
            "noise_floor": jsonable(self.noise_floor),
            "residual_unit": self.residual_unit,
            "artifacts": jsonable(self.artifacts),
            "next_step": self.next_step,
            "details": jsonable(self.details),
            "needs": list(self.needs),
        }
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str | Path | None = None) -> Finding:
        """Build from ``to_dict`` output; unknown or missing keys are named in the error."""
        _check_types(d, source)
        known = {"branch", "verdict", "title", "summary", "figures", "key_figure", "residual",
                 "noise_floor", "residual_unit", "artifacts", "next_step", "details", "needs"}
        for key in ("branch", "verdict"):
            if key not in d:
                raise InputError(file=source, field=key, expected="this required key in a finding",
                                 got="nothing")
        extra = set(d) - known
        if extra:
            raise InputError(file=source, field=sorted(extra)[0], expected="a known finding key",
                             got=sorted(extra), fix=f"use only: {', '.join(sorted(known))}")
        return cls(
            branch=str(d["branch"]), verdict=Verdict(d["verdict"]) if d["verdict"] in VERDICTS
            else d["verdict"], figures=dict(d.get("figures") or {}),
            next_step=str(d.get("next_step", "")), title=str(d.get("title", "")),
            summary=str(d.get("summary", "")), key_figure=d.get("key_figure"),
            residual=d.get("residual"), noise_floor=d.get("noise_floor"),
            residual_unit=d.get("residual_unit"), artifacts=dict(d.get("artifacts") or {}),
            details=dict(d.get("details") or {}), needs=tuple(d.get("needs") or ()))


def _check_types(d: Any, source: str | Path | None) -> None:
    """The JSON types of one finding (values are checked where they are used)."""
    if not isinstance(d, Mapping):
        raise InputError(file=source, field="findings[]", expected="an object per finding",
                         got=type(d).__name__)
    for key, types, name in (("branch", (str,), "a string"), ("verdict", (str,), "a string"),
                             ("figures", (Mapping, type(None)), "an object"),
                             ("artifacts", (Mapping, type(None)), "an object"),
                             ("details", (Mapping, type(None)), "an object"),
                             ("needs", (list, type(None)), "a list")):
        if key in d and not isinstance(d[key], types):
            raise InputError(file=source, field=key, expected=name,
                             got=f"{type(d[key]).__name__} {str(d[key])[:60]!r}")
    if d.get("verdict") not in VERDICTS:
        raise InputError(file=source, field="verdict", expected=f"one of {', '.join(VERDICTS)}",
                         got=d.get("verdict"))


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
            raise InputError(file=source, field="findings", expected="a list of findings",
                             got=type(d.get("findings")).__name__)
        seed = d.get("seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            raise InputError(file=source, field="seed", expected="a whole number >= 0",
                             got=seed)
        if not isinstance(d.get("stop") or {}, Mapping):
            raise InputError(file=source, field="stop", expected="an object", got=d.get("stop"))
        return cls(rig=str(d.get("rig", "")),
                   findings=tuple(Finding.from_dict(f, source) for f in d["findings"]),
                   stop=dict(d.get("stop") or {}), comparability=d.get("comparability"),
                   seed=int(d.get("seed", 0)))

    def to_json(self) -> str:
        """Pretty JSON text."""
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)


def load_diagnosis(path: str | Path) -> Diagnosis:
    """Read ``findings.json``; errors name the file."""
    from simgap.validate import read_json

    path = Path(path)
    if not path.exists():
        raise InputError(file=path, expected="a findings.json file", got="no such file",
                         fix="run 'simgap diagnose RIG --out DIR' and pass DIR/findings.json")
    d = read_json(path, "a findings.json file")
    if not isinstance(d, dict):
        raise InputError(file=path, expected="a JSON object", got=type(d).__name__)
    return Diagnosis.from_dict(d, source=path)
