"""The JSON Schema of findings.json, generated from the typed records (docs/findings.schema.json).

``python -m simgap.figures.schema > docs/findings.schema.json`` writes the published copy;
``tests/test_findings_schema.py`` keeps the two equal and validates every findings.json the
test suite writes against it.
"""

from __future__ import annotations

import json
from typing import Any

from simgap.figures.base import Record
from simgap.figures.registry import DETAILS, FIGURES

SCHEMA_ID = "urn:simgap:findings.schema.json"
VERDICTS = ("implicated", "eliminated", "inconclusive", "not_measured")
_NUMBER_OR_NULL = {"type": ["number", "null"]}
_ABSOLUTE = r"^(/|\\\\|[A-Za-z]:[\\\\/])"


def _finding_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "required": [
            "branch",
            "kind",
            "verdict",
            "figures",
            "units",
            "key_figure",
            "details",
            "artifacts",
            "needs",
        ],
        "additionalProperties": False,
        "properties": {
            "branch": {"type": "string", "description": "the branch (latency, contact, ...)"},
            "kind": {
                "type": "string",
                "description": "which of the branch's findings ('' for its only one)",
            },
            "verdict": {"enum": list(VERDICTS)},
            "title": {"type": "string"},
            "summary": {"type": "string", "description": "what was found, with its key number"},
            "figures": {
                "type": "object",
                "description": "the branch's figures; their schema "
                "is chosen by branch and kind (see allOf)",
            },
            "units": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "each figure's unit by dotted path; '*' stands for a "
                "mapping's keys; '1' a ratio, count or fraction",
            },
            "key_figure": {
                "anyOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["name", "value", "unit"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string"},
                            "value": {},
                            "unit": {"type": ["string", "null"]},
                        },
                    },
                ],
                "description": "the figure shown in summary tables, with its value and unit",
            },
            "residual": _NUMBER_OR_NULL,
            "noise_floor": _NUMBER_OR_NULL,
            "residual_unit": {"type": ["string", "null"]},
            "artifacts": {
                "type": "object",
                "additionalProperties": {"type": "string", "not": {"pattern": _ABSOLUTE}},
                "description": "files written, relative to the folder holding findings.json",
            },
            "next_step": {"type": "string"},
            "details": {"type": "object", "description": "the data the report plots"},
            "needs": {"type": "array", "items": {"type": "string"}},
        },
        "allOf": [_branch_rule(r, k, "figures") for r in FIGURES for k in r.serves()]
        + [_branch_rule(r, k, "details") for r in DETAILS for k in r.serves()]
        + [_typed_or_empty()],
    }


def _typed_or_empty() -> dict[str, Any]:
    """A finding with figures is of a declared (branch, kind); only an empty one (a branch
    that could not run) may be of another."""
    return {
        "anyOf": [
            {"properties": {"figures": {"type": "object", "maxProperties": 0}}},
            *(
                {
                    "properties": {"branch": {"const": r.branch}, "kind": {"const": k}},
                    "required": ["branch", "kind"],
                }
                for r in FIGURES
                for k in r.serves()
            ),
        ]
    }


def _branch_rule(record: type[Record], kind: str, part: str) -> dict[str, Any]:
    """``part`` of a finding of (record's branch, kind) is ``record`` (or empty)."""
    return {
        "if": {
            "properties": {"branch": {"const": record.branch}, "kind": {"const": kind}},
            "required": ["branch", "kind"],
        },
        "then": {
            "properties": {
                part: {
                    "anyOf": [
                        {"$ref": f"#/$defs/{record.__name__}"},
                        {
                            "type": "object",
                            "maxProperties": 0,
                            "description": "empty where the branch could not run",
                        },
                    ]
                }
            }
        },
    }


def findings_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of findings.json as this simgap writes it."""
    from simgap.finding import SCHEMA_VERSION

    defs = {r.__name__: r.json_schema() for r in (*FIGURES, *DETAILS)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "simgap findings.json",
        "description": "A diagnosis: the comparability check, the findings in ladder order and "
        "why the ladder stopped. Numbers are SI unless a figure's unit says "
        "otherwise; null stands for a value that is not finite or not measured.",
        "type": "object",
        "required": ["schema_version", "simgap_version", "rig", "seed", "findings", "stop"],
        "additionalProperties": False,
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "simgap_version": {"type": "string"},
            "rig": {"type": "string"},
            "seed": {"type": "integer", "minimum": 0},
            "comparability": {"type": ["object", "null"]},
            "findings": {"type": "array", "items": {"$ref": "#/$defs/Finding"}},
            "stop": {"type": "object"},
        },
        "$defs": {"Finding": _finding_schema(), **defs},
    }


def main() -> None:
    """Print the schema (the published copy is this output)."""
    print(json.dumps(findings_schema(), indent=2, sort_keys=False))


if __name__ == "__main__":
    main()
