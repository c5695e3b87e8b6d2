"""Each branch's contract is one ``Branch`` value: the ladder runs the listed rungs, every typed
record belongs to a listed branch, the report draws a finding through its branch's plots, and
``simgap randomize`` writes the entries each branch names.

``randomize_golden/`` holds the demo's latency, contact, actuator and controller findings
(``simgap demo`` at fecc5bb, artifacts and the unread details left out) and what
``simgap randomize`` wrote for them before the ``Branch`` base (``spec.json``, byte for byte
the spec of the whole demo's findings.json; ``variants.json``, ``build_spec`` on the same
diagnosis with the controller implicated and with no findings).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from simgap.branches import calibration
from simgap.branches.branch import Branch
from simgap.branches.ladder_list import BRANCHES, LADDER, branch_named, entry_builders
from simgap.cli import app
from simgap.errors import NameNotFoundError
from simgap.figures.registry import DETAILS, FIGURES
from simgap.finding import Verdict, load_diagnosis
from simgap.ladder import assess_for
from simgap.randomize import (
    Draft,
    actuator_entries,
    build_spec,
    contact_entries,
    controller_entries,
    latency_entries,
)
from simgap.report.html import branch_plots
from simgap.values.randomization import Entry

GOLDEN = Path(__file__).parent / "randomize_golden"
SRC = Path(__file__).resolve().parents[1] / "src" / "simgap" / "branches"

RUNGS = (
    ("plumbing", 0.5, ("evidence.trace (a deployment trace from the fake arm or the real one)",)),
    ("training", 0.6, ("a [training] section (simgap init --maniskill-config)",)),
    ("phases", 0.7, ("evidence.dataset or evidence.sim_dataset (recorded rollouts)",)),
    ("envelope", 0.8, ("evidence.dataset and a [training] section",)),
    ("latency", 1.0, ("evidence.timing_logs or evidence.client_logs/server_logs",)),
    ("contact", 2.0, ("evidence.push_logs (logged pushes) and model.object_body",)),
    ("actuator", 3.0, ("evidence.actuator_logs or evidence.dataset",)),
    ("controller", 3.5, ("evidence.dataset with actions, and model.ee_site",)),
    ("body", 3.7, ("evidence.static_object_poses or frame.origin_reference_m",)),
    (
        "appearance",
        4.0,
        ("evidence.frames or camera frames in evidence.dataset", "a [camera] section"),
    ),
)
"""The ladder as ``branches/context.py`` listed it before the ``Branch`` base."""


def test_the_ladder_keeps_its_rungs_order_costs_and_needs() -> None:
    assert [(b.name, b.cost, b.needs) for b in LADDER] == list(RUNGS)
    for b in LADDER:
        assert isinstance(b, Branch) and callable(b.assess), b.name
        assert assess_for(b) is b.assess


def test_every_branch_module_with_a_contract_is_listed() -> None:
    names = [b.name for b in BRANCHES]
    assert len(names) == len(set(names)), names
    found = []
    for path in sorted(SRC.glob("*.py")):
        module = importlib.import_module(f"simgap.branches.{path.stem}")
        contract = getattr(module, "SPEC", None)
        if contract is not None:
            found.append(path.stem)
            assert contract in BRANCHES, f"{path.stem}.SPEC is not in ladder_list.BRANCHES"
    assert len(found) == len(BRANCHES)  # each listed branch comes from one module


def test_a_branch_that_is_no_rung_is_refused_by_the_ladder() -> None:
    assert calibration.SPEC.assess is None and calibration.SPEC not in LADDER
    with pytest.raises(NameNotFoundError, match="calibration"):
        assess_for(calibration.SPEC)


def test_every_registered_record_belongs_to_a_branch() -> None:
    for records, side in ((FIGURES, 0), (DETAILS, 1)):
        for r in records:
            b = branch_named(r.branch)
            assert b is not None, f"{r.__name__}: no Branch named {r.branch!r}"
            assert b.records[r.kind][side] is r, f"{r.__name__} not among {b.name}'s records"
    for b in BRANCHES:  # and a branch's records are the registry's, none made up
        assert b.records, f"{b.name} writes no typed record"
        for kind, (figures, details) in b.records.items():
            assert figures is not None or details is not None, (b.name, kind)


def test_each_branch_with_plots_draws_the_demo_finding(demo_run: tuple[Path, Path, str]) -> None:
    findings = json.loads((demo_run[0] / "findings.json").read_text())["findings"]
    for f in findings:  # the demo's torque came on at the goal: a 2 degree jump draws its bars
        if f["branch"] == "plumbing" and f["kind"] == "torque_jump":
            f["figures"]["distance_deg"] = {j: 2.0 for j in f["figures"]["distance_deg"]}
    drawing = [b for b in BRANCHES if b.plots is not None]
    assert {b.name for b in drawing} >= {"latency", "contact", "actuator", "appearance"}
    for b in drawing:
        mine = [f for f in findings if f["branch"] == b.name and f["verdict"] != "not_measured"]
        assert mine, f"the demo has no measured {b.name} finding"
        plots = [p for f in mine for p in branch_plots(f)]
        assert plots and all(p.strip().startswith("<") for p in plots), b.name


def test_a_finding_of_no_branch_or_a_branch_without_plots_draws_none() -> None:
    assert branch_plots({"branch": "no-such-branch"}) == []
    training = branch_named("training")
    assert training is not None and training.plots is None
    assert branch_plots({"branch": "training", "figures": {}}) == []


def test_the_branches_name_their_randomisation_entries_in_ladder_order() -> None:
    assert entry_builders() == (
        latency_entries,
        contact_entries,
        actuator_entries,
        controller_entries,
    )
    assert entry_builders(tuple(reversed(LADDER))) == entry_builders()  # cost order, not given


def test_randomize_writes_what_it_wrote_before_the_branch_base(tmp_path: Path) -> None:
    out = tmp_path / "spec.json"
    r = CliRunner().invoke(app, ["randomize", str(GOLDEN / "findings.json"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes() == (GOLDEN / "spec.json").read_bytes()


def test_build_spec_matches_the_stored_specs_of_other_diagnoses() -> None:
    diag = load_diagnosis(GOLDEN / "findings.json")
    want = json.loads((GOLDEN / "variants.json").read_text())
    implicated = replace(
        diag,
        findings=tuple(
            replace(f, verdict=Verdict.IMPLICATED) if f.branch == "controller" else f
            for f in diag.findings
        ),
    )
    spec = build_spec(implicated, entry_builders())
    assert spec.to_dict() == want["controller_implicated"]
    assert spec.entry("kp").source == "fitted"  # the controller's identified gain pinned
    empty = build_spec(replace(diag, findings=()), entry_builders())
    assert empty.to_dict() == want["no_findings"]
    assert empty.control_dt_s is None and all(e.source == "defaulted" for e in empty.entries)


def test_a_later_branch_leaves_alone_a_gain_an_earlier_one_pinned() -> None:
    diag = load_diagnosis(GOLDEN / "findings.json")
    implicated = replace(
        diag,
        findings=tuple(
            replace(f, verdict=Verdict.IMPLICATED)
            for f in diag.findings
            if f.branch == "controller"
        ),
    )
    alone = controller_entries(Draft(implicated))
    assert [e.name for e in alone] == ["kp"]
    pinned = Entry("kp", "pinned", "fitted", value=1.0)
    assert controller_entries(Draft(implicated, earlier=(pinned,))) == []
