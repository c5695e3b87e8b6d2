"""Fuzzing the boundaries hardened in issue 33, with the fuzz suite's harness and contract
(tests/fuzz_harness.py: exit 0 or 2, never a traceback or exit 3, inputs unchanged, only
finite numbers written), in the default run: ``contact measure``'s numbers, ``info.json``'s
``fps`` of every JSON type, and the report built from findings with damaged sections."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.factories import write_v3_dataset
from tests.fuzz_harness import EDGE_NUMBERS, EDGE_VALUES, mutate_tree, run_cli, run_reader

_NUMBER_TEXT = st.one_of(
    st.sampled_from([repr(v) if isinstance(v, float) else str(v) for v in EDGE_NUMBERS]),
    st.sampled_from(
        [
            "0.008",
            "0.0005",
            "8",
            "6",
            "150",
            "89.999",
            "90",
            "71.56",
            "71.57",
            "1e-9",
            "-0",
            "0.35",
            "3",
            "3.0001",
            "abc",
            "",
            "true",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=1e-6, max_value=200.0).map(lambda v: f"{v:.6g}"),
)


def _plausible(option: str, text: str) -> bool:
    """Whether ``text`` is a value ``contact measure`` must accept for ``option``."""
    try:
        v = float(text)
    except ValueError:
        return False
    if not math.isfinite(v):
        return False
    if option == "--tilt-deg":
        return 0 < v <= math.degrees(math.atan(3.0))
    if option == "--sliding":
        return 0 < v <= 3.0
    if option == "--patch-diameter-mm":
        return 0.5 <= v <= 100.0
    return v == 0 or 0.02 <= v <= 10.0  # --depth-mm


@given(st.data())
def test_contact_measure_numbers(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    inp = tmp_path_factory.mktemp("contact")  # holds no input: the digest stays empty
    options = data.draw(
        st.lists(
            st.sampled_from(["--tilt-deg", "--patch-diameter-mm", "--sliding", "--depth-mm"]),
            min_size=1,
            max_size=4,
            unique=True,
        ),
        label="options",
    )
    values = {o: data.draw(_NUMBER_TEXT, label=o) for o in options}
    out = tmp_path_factory.mktemp("contact_out") / "m.json"
    args = [a for o, v in values.items() for a in (o, v)]
    code = run_cli(["contact", "measure", *args, "--json", out], inp, out)
    if any(not _plausible(o, v) for o, v in values.items()):
        assert code == 2, values  # zero exit 0 on bad input
        assert not out.exists()
    elif code == 0:
        got = json.loads(out.read_text())
        assert 0 < got.get("sliding", 1.0) <= 3.0
        assert 0 <= got.get("torsional_m", 0.0) <= 0.1 and 0 <= got.get("rolling_m", 0.0) <= 0.01
        assert not ("--tilt-deg" in values and "--sliding" in values)


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fpsds") / "dataset"
    state = np.zeros((6, 6), dtype=np.float32)
    return write_v3_dataset(root, [{"observation.state": state, "action": state}])


_FPS = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-10, 2000),
    st.text(max_size=8),
    st.floats(min_value=1, max_value=120).map(str),
)


@given(st.data())
def test_lerobot_info_fps_of_every_json_type(
    small_dataset: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    from simgap.evidence.lerobot import read_lerobot_dataset

    inp = tmp_path_factory.mktemp("fps")
    ds = inp / "dataset"
    shutil.copytree(small_dataset, ds)
    fps = data.draw(_FPS, label="fps")
    info = ds / "meta" / "info.json"
    meta = json.loads(info.read_text())
    meta["fps"] = fps
    info.write_text(json.dumps(meta))
    code = run_reader(read_lerobot_dataset, ds, inputs=inp)
    number = isinstance(fps, (int, float)) and not isinstance(fps, bool)
    if not (number and math.isfinite(fps) and 0 < fps <= 1000):
        assert code == 2, fps  # a boolean, a string, null, NaN: refused, never read as 1 Hz


def _findings() -> dict[str, Any]:
    img = np.full((4, 4, 3), 90, dtype=np.uint8).tolist()
    return {
        "rig": "r",
        "stop": {"verdict": "cause_found", "branch": "latency"},
        "findings": [
            {
                "branch": "latency",
                "verdict": "implicated",
                "title": "Latency",
                "key_figure": "total_p95_s",
                "figures": {"total_p95_s": 0.09, "control_dt_s": 0.066, "ticks": 300},
                "details": {"total_quantiles_s": [0.05, 0.07, 0.09]},
            },
            {
                "branch": "appearance",
                "verdict": "inconclusive",
                "title": "Exposure",
                "key_figure": "jaw_gain",
                "figures": {
                    "jaw_gain": 1.1,
                    "regions": {
                        "jaws": {"real_rgb": [100, 100, 100], "sim_rgb": [90, 90, 90], "pixels": 9},
                        "object": {
                            "real_rgb": None,
                            "sim_rgb": None,
                            "pixels": 0,
                            "measured": False,
                        },
                    },
                },
                "details": {
                    "images": {
                        "real": img,
                        "sim": img,
                        "diff": img,
                        "frame": 1,
                        "recording": "ep0",
                    },
                    "jaw_gain_per_frame": [1.1, None, 1.2],
                },
            },
            {
                "branch": "actuator",
                "verdict": "eliminated",
                "title": "Actuator",
                "figures": {"noise_floor_rad": 0.001},
            },
        ],
    }


@given(st.data())
def test_report_from_damaged_findings(data: st.DataObject) -> None:
    from simgap.report import render_report

    damaged = mutate_tree(data, _findings())
    if not isinstance(damaged, dict):
        return  # findings.json's own reader refuses a document that is not an object
    page = render_report(damaged)  # a damaged section shows its failure; nothing raises
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
