"""The contact branch's typed figures on a bench with a true pad friction."""

from __future__ import annotations

from pathlib import Path

from simgap.branches.contact import assess
from simgap.branches.context import Context
from simgap.evidence.bundle import EvidenceBundle
from simgap.figures.contact import ContactDetails, ContactFigures
from tests.contact_benches import make_bench
from tests.typed_records import check_typed


def test_contact_finding_is_typed_and_round_trips(tmp_path: Path) -> None:
    b = make_bench(tmp_path, "push", {("grip", "sliding"): 0.35}, seed=3)
    (f,) = assess(
        Context(
            rig=b.rig,
            evidence=EvidenceBundle(b.rig),  # type: ignore[arg-type]
            out_dir=tmp_path / "out",
        )
    )
    check_typed(f, ContactFigures, ContactDetails)
    fig = f.typed(ContactFigures)
    assert fig.pushes and fig.friction_status == "fitted"
    assert fig.units()["friction_best"] == "1"
    line = fig.headline()
    assert line is not None and line.text.startswith("friction 1.00 -> ")
