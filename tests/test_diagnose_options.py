"""``simgap diagnose``'s flags for what the branches read from ``ctx.options``: each reaches
the context the ladder gets, and a run without them passes the defaults (no key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.finding import Diagnosis

runner = CliRunner()


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        ([], {}),
        (["--no-actuator-net"], {"actuator_net": False}),
        (["--controller-episodes", "3"], {"controller_episodes": 3}),
    ],
)
def test_diagnose_flags_reach_the_ladder(
    tmp_path: Path,
    demo_model: Path,
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    options: dict[str, Any],
) -> None:
    import simgap.diagnose as dg
    from tests.factories import write_rig

    rig = write_rig(tmp_path / "rig", demo_model)
    seen: list[dict[str, Any]] = []

    def ladder(ctx: Any, comparability: Any = None) -> Diagnosis:
        seen.append(dict(ctx.options))
        return Diagnosis(rig="r", findings=(), stop={"verdict": "no_cause_found"})

    monkeypatch.setattr(dg, "run_ladder", ladder)
    r = runner.invoke(app, ["diagnose", str(rig), "--out", str(tmp_path / "out"), *flags])
    assert r.exit_code == 0, r.output
    assert seen == [options]


def test_controller_episodes_must_be_positive(tmp_path: Path, demo_model: Path) -> None:
    from tests.factories import write_rig

    rig = write_rig(tmp_path / "rig", demo_model)
    r = runner.invoke(
        app, ["diagnose", str(rig), "--out", str(tmp_path / "out"), "--controller-episodes", "0"]
    )
    assert r.exit_code != 0 and "controller-episodes" in r.output
