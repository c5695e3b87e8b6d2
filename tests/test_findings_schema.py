"""findings.json is a published, versioned format: the schema in docs/ is the one the typed
records generate, it is a valid JSON Schema, simgap's own files follow it and a file that
breaks the contract (an undeclared figure, an absolute path, a newer format) is refused."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from simgap.errors import InputError
from simgap.figures.registry import DETAILS, FIGURES
from simgap.figures.schema import findings_schema
from simgap.finding import SCHEMA_VERSION, Diagnosis, load_diagnosis

jsonschema = pytest.importorskip("jsonschema")
PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "findings.schema.json"


def _validator() -> Any:
    return jsonschema.Draft202012Validator(json.loads(PUBLISHED.read_text(encoding="utf-8")))


def test_the_published_schema_is_the_generated_one() -> None:
    published = json.loads(PUBLISHED.read_text(encoding="utf-8"))
    assert published == findings_schema(), (
        "docs/findings.schema.json is stale: python -m simgap.figures.schema > "
        "docs/findings.schema.json"
    )
    jsonschema.Draft202012Validator.check_schema(published)
    assert published["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_every_typed_kind_has_a_rule_and_units_for_its_numbers() -> None:
    schema = findings_schema()
    rules = schema["$defs"]["Finding"]["allOf"]
    named = {
        (r["if"]["properties"]["branch"]["const"], r["if"]["properties"]["kind"]["const"])
        for r in rules
        if "if" in r
    }
    assert {(r.branch, k) for r in (*FIGURES, *DETAILS) for k in r.serves()} <= named
    for record in FIGURES:
        assert record.branch, f"{record.__name__} names no branch"
        props = schema["$defs"][record.__name__]["properties"]
        for name, prop in props.items():
            assert prop.get("description"), f"{record.__name__}.{name} has no description"


def test_the_demo_findings_validate_carry_units_and_survive_a_round_trip(
    demo_run: tuple[Path, Path, str],
) -> None:
    out, _, _ = demo_run
    d = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}"
        for e in _validator().iter_errors(d)
    ]
    assert not errors, "\n".join(errors[:10])
    assert d["schema_version"] == SCHEMA_VERSION
    latency = next(f for f in d["findings"] if f["branch"] == "latency" and not f["kind"])
    assert latency["units"]["total_p95_s"] == "s" and latency["units"]["stages.*.p50_s"] == "s"
    assert latency["key_figure"] == {
        "name": "total_p95_s",
        "value": latency["figures"]["total_p95_s"],
        "unit": "s",
    }
    back = Diagnosis.from_dict(d).to_dict()
    assert json.loads(json.dumps(back)) == d


def _one_latency(demo: Path) -> dict[str, Any]:
    return json.loads((demo / "findings.json").read_text(encoding="utf-8"))


def test_a_broken_contract_is_refused(demo_run: tuple[Path, Path, str], tmp_path: Path) -> None:
    d = _one_latency(demo_run[0])
    i = next(i for i, f in enumerate(d["findings"]) if f["branch"] == "latency" and not f["kind"])
    v = _validator()
    extra = copy.deepcopy(d)
    extra["findings"][i]["figures"]["total_p96_s"] = 0.1
    assert not v.is_valid(extra)
    p = tmp_path / "findings.json"
    p.write_text(json.dumps(extra))
    with pytest.raises(InputError, match=r"total_p96_s.*total_p95_s"):
        load_diagnosis(p)  # the error lists the valid names
    absolute = copy.deepcopy(d)
    absolute["findings"][i]["artifacts"] = {"patch": "/home/me/out/patch.xml"}
    assert not v.is_valid(absolute)
    wrong_type = copy.deepcopy(d)
    wrong_type["findings"][i]["figures"]["ticks"] = "many"
    assert not v.is_valid(wrong_type)
    p.write_text(json.dumps(wrong_type))
    with pytest.raises(InputError, match="ticks"):
        load_diagnosis(p)
    undeclared = copy.deepcopy(d)
    undeclared["findings"][i]["kind"] = "no_such_kind"  # figures of no declared record
    assert not v.is_valid(undeclared)
    newer = copy.deepcopy(d)
    newer["schema_version"] = SCHEMA_VERSION + 1
    p.write_text(json.dumps(newer))
    with pytest.raises(InputError, match="schema_version"):
        load_diagnosis(p)


def test_the_suite_checked_what_simgap_wrote(
    demo_run: tuple[Path, Path, str], findings_follow_the_published_schema: list[Path]
) -> None:
    # the demo ran under the session's check (conftest), so at least its file was held to
    # the schema as it was written
    assert findings_follow_the_published_schema, "no findings.json was checked as written"


def test_one_details_record_serves_every_training_check() -> None:
    """The training audit's checks share one details record: the registry and the schema
    name it for each check's kind, and a finding built from it takes the figures' kind."""
    from simgap.figures.registry import details_type, figures_type
    from simgap.figures.training import TRAINING_FIGURES, TrainingDetails, TrainingRateFigures
    from simgap.finding import Finding, Verdict

    kinds = {r.kind for r in TRAINING_FIGURES}
    assert len(kinds) == 9 and set(TrainingDetails.serves()) == kinds
    assert all(details_type("training", k) is TrainingDetails for k in kinds)
    assert all(figures_type("training", k) is not TrainingDetails for k in kinds)
    assert details_type("training", "") is None
    rules = findings_schema()["$defs"]["Finding"]["allOf"]
    refs = {
        r["if"]["properties"]["kind"]["const"]
        for r in rules
        if "if" in r
        and r["if"]["properties"]["branch"]["const"] == "training"
        and "details" in r["then"]["properties"]
    }
    assert refs == kinds
    f = Finding(
        branch="training",
        verdict=Verdict.ELIMINATED,
        figures=TrainingRateFigures(check="control_rate"),
        details=TrainingDetails(check="control_rate", provenance={"control.dt_s": "given"}),
    )
    assert f.kind == "control_rate"
    back = Finding.from_dict(json.loads(json.dumps(f.to_dict())))
    assert back.details == f.details and back.kind == "control_rate"
    with pytest.raises(ValueError, match="several kinds"):
        Finding(
            branch="training", verdict=Verdict.ELIMINATED, details=TrainingDetails(check="origin")
        )
    with pytest.raises(ValueError, match="not 'no_such_check'"):
        Finding(
            branch="training",
            verdict=Verdict.ELIMINATED,
            details=TrainingDetails(check="origin"),
            kind="no_such_check",
        )


def test_a_file_without_kinds_reads_them_back_from_the_figures(
    demo_run: tuple[Path, Path, str], tmp_path: Path
) -> None:
    """A findings.json written before findings named their kind (no schema_version, kind or
    units) gets each kind back from its figures' names, so randomize, the report's plots
    and excite --for find the records they pick by kind."""
    from typer.testing import CliRunner

    from simgap.cli import app
    from simgap.report.html import render_report

    current = demo_run[0] / "findings.json"
    d = json.loads(current.read_text(encoding="utf-8"))
    old = copy.deepcopy(d)
    del old["schema_version"]
    for f in old["findings"]:
        del f["kind"], f["units"]
    old_path = tmp_path / "old" / "findings.json"
    old_path.parent.mkdir()
    old_path.write_text(json.dumps(old), encoding="utf-8")
    new, back = load_diagnosis(current), load_diagnosis(old_path)
    assert [f.kind for f in back.findings] == [f.kind for f in new.findings]
    assert sum(bool(f.kind) for f in back.findings) >= 10  # the demo's multi-kind branches
    assert [type(f.figures) for f in back.findings] == [type(f.figures) for f in new.findings]
    specs = []
    for path in (current, old_path):
        out = tmp_path / f"spec-{len(specs)}.json"
        res = CliRunner().invoke(
            app, ["randomize", str(path), "--format", "json", "--out", str(out)]
        )
        assert res.exit_code == 0, res.output
        specs.append(json.loads(out.read_text(encoding="utf-8")))
    assert specs[0] == specs[1]
    assert any(e["source"] == "fitted" for e in specs[1]["entries"])
    plots = [render_report(x).count("<svg") for x in (d, old)]
    assert plots[0] == plots[1] > 0


def test_a_finding_whose_figures_fit_two_kinds_stays_untyped() -> None:
    """Where the figures' names do not tell the kind apart (a not-measured training check
    carries only its ``check``), the kind stays empty and the finding still reads."""
    from simgap.figures.registry import kind_of
    from simgap.finding import Finding

    only_check = {"branch": "training", "verdict": "not_measured", "figures": {"check": "origin"}}
    assert kind_of(only_check) == ""
    f = Finding.from_dict(only_check, strict=False)
    assert f.kind == "" and f.figures == {"check": "origin"}
    named = {**only_check, "figures": {"check": "origin", "offset_m": 0.02}}
    assert kind_of(named) == "origin"
    assert kind_of({**named, "kind": "camera_fov"}) == "camera_fov"  # a stated kind stands
    assert kind_of({"branch": "training", "verdict": "eliminated", "figures": {}}) == ""
