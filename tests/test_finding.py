import json
import math

import numpy as np
import pytest

from simgap.errors import InputError
from simgap.finding import Diagnosis, Finding, Verdict, load_diagnosis


def _finding() -> Finding:
    return Finding(
        branch="example",
        verdict="implicated",  # type: ignore[arg-type]
        figures={
            "total_p95_s": np.float64(0.08),
            "stages": {"camera": {"p50_s": 0.02}},
            "bad": math.nan,
            "arr": np.arange(3),
        },
        key_figure="total_p95_s",
        residual=0.1,
        noise_floor=0.2,
        residual_unit="rad",
        artifacts={"patch": "x.xml"},
        next_step="Do it.",
        needs=["a"],
    )


def test_round_trip(tmp_path) -> None:
    f = _finding()
    assert f.verdict is Verdict.IMPLICATED and f.key_value == pytest.approx(0.08)
    d = Diagnosis(rig="r", findings=(f,), stop={"verdict": "cause_found"}, seed=3)
    text = d.to_json()
    back = json.loads(text)
    assert back["findings"][0]["figures"]["bad"] is None
    assert back["findings"][0]["figures"]["arr"] == [0, 1, 2]
    p = tmp_path / "findings.json"
    p.write_text(text)
    d2 = load_diagnosis(p)
    assert d2.findings[0].figures["stages"]["camera"]["p50_s"] == 0.02
    assert d2.findings[0].verdict is Verdict.IMPLICATED and d2.seed == 3
    assert d2.findings[0].to_dict() == Finding.from_dict(back["findings"][0]).to_dict()


def test_bad_inputs(tmp_path) -> None:
    with pytest.raises(InputError, match="verdict"):
        Finding(branch="x", verdict="guilty")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="branch"):
        Finding.from_dict({"verdict": "implicated"})
    with pytest.raises(InputError, match="colour"):
        Finding.from_dict({"branch": "x", "verdict": "implicated", "colour": 1})
    p = tmp_path / "f.json"
    p.write_text("{nope")
    with pytest.raises(InputError, match="JSON"):
        load_diagnosis(p)


def test_stop_rule_names_each_implicated_branch_once() -> None:
    """Two appearance findings implicated (exposure, camera pose) are one branch to act on."""
    from simgap.ladder import _stop

    fs = [
        Finding(branch=b, verdict=Verdict.IMPLICATED, title=t)
        for b, t in (("latency", "loop"), ("appearance", "exposure"), ("appearance", "camera pose"))
    ]
    stop = _stop(fs)
    assert stop["implicated"] == ["latency", "appearance"] and stop["branch"] == "latency"
