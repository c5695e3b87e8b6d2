import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simgap.errors import InputError
from simgap.units import ENCODER_RESOLUTION_RAD, JointUnit


def test_known_values() -> None:
    assert JointUnit("deg").to_rad(180.0) == pytest.approx(math.pi)
    assert JointUnit("ticks").to_rad(2048 + 1024) == pytest.approx(math.pi / 2)
    m = JointUnit("m100", lo_rad=-1.0, hi_rad=1.0)
    assert m.to_rad(-100.0) == pytest.approx(-1.0) and m.to_rad(0.0) == pytest.approx(0.0)
    p = JointUnit("pct", lo_rad=0.0, hi_rad=2.0, sign=-1.0, offset_rad=0.5)
    assert p.to_rad(50.0) == pytest.approx(-1.0 + 0.5)
    assert ENCODER_RESOLUTION_RAD == pytest.approx(2 * math.pi / 4096)
    assert JointUnit("ticks").rad_per_unit() == pytest.approx(ENCODER_RESOLUTION_RAD)


@pytest.mark.parametrize("unit", ["rad", "deg", "ticks", "m100", "pct"])
@given(x=st.floats(-1000, 1000), sign=st.sampled_from([1.0, -1.0]), off=st.floats(-1, 1))
def test_round_trip(unit: str, x: float, sign: float, off: float) -> None:
    u = JointUnit(unit, lo_rad=-1.2, hi_rad=2.3, sign=sign, offset_rad=off)  # type: ignore[arg-type]
    assert u.from_rad(u.to_rad(x)) == pytest.approx(x, abs=1e-9)


def test_rejects_bad_units() -> None:
    with pytest.raises(InputError):
        JointUnit("grad")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="range_rad"):
        JointUnit("m100")
    with pytest.raises(InputError):
        JointUnit("deg", sign=2.0)
    assert np.allclose(JointUnit("deg").to_rad([0, 90]), [0, math.pi / 2])
