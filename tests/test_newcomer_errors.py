"""What a new user tripped on: errors that name the input they came from, say what came
(a folder where a file is expected, and the reverse) and give a fix that is not the
problem restated."""

from pathlib import Path

import numpy as np
import pytest

from simgap.errors import InputError, NameNotFoundError
from simgap.evidence.servo_csv import read_servo_csv
from simgap.rig import load_rig
from tests.factories import write_rig


def _csv(path: Path, header: str, rows: list[str]) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def _sine_rows(cells: int = 2) -> list[str]:
    t = np.arange(0, 2, 0.01)
    return [",".join([f"{a:.3f}"] + [f"{np.sin(a):.5f}"] * cells) for a in t]


def test_misspelt_csv_joint_names_the_csv_and_its_column(tmp_path: Path, demo_model: Path) -> None:
    rig_path = write_rig(tmp_path / "rig", demo_model)
    rig = load_rig(rig_path)
    bad = _csv(tmp_path / "misspelt.csv", "t,cmd_elbow_flx,q_elbow_flx", _sine_rows())
    with pytest.raises(NameNotFoundError) as e:
        read_servo_csv(bad, rig)
    msg = str(e.value)
    assert msg.startswith(f"{bad}: field 'cmd_elbow_flx'")
    assert "elbow_flex" in msg.split("Fix:")[1]
    assert e.value.file == str(bad)
    # the rig is named only as the other place to fix, never as where the name came from
    assert str(rig_path) in msg.split("Fix:")[1] and str(rig_path) not in msg.split("Fix:")[0]


def test_a_rig_joint_lookup_without_a_source_still_names_the_rig(
    tmp_path: Path, demo_model: Path
) -> None:
    rig_path = write_rig(tmp_path / "rig", demo_model)
    with pytest.raises(NameNotFoundError) as e:
        load_rig(rig_path).joint("elbow")
    assert e.value.file == str(rig_path) and e.value.field is None
