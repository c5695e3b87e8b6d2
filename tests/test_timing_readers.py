import json
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simgap.errors import InputError
from simgap.evidence.timing import (
    TimingLogWarning,
    read_latency_files,
    read_timing_log,
    read_timing_logs,
)


def _rec(ep: int, step: int, t: float, **stages: float | None) -> str:
    return json.dumps({"episode": ep, "step": step, "t": t, "stages": stages})


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _good(n: int = 4) -> list[str]:
    return [_rec(0, i, 0.1 * i, camera=0.01, inference=0.02 + 0.001 * i) for i in range(n)]


def test_jsonl_reads_columns(tmp_path: Path) -> None:
    log = read_timing_log(_write(tmp_path / "a.jsonl", _good()))
    st = log.times
    assert st.n_ticks == 4 and st.stage_names == ("camera", "inference")
    np.testing.assert_allclose(st.stages["inference"], [0.020, 0.021, 0.022, 0.023])
    np.testing.assert_allclose(st.total(), [0.030, 0.031, 0.032, 0.033])
    np.testing.assert_allclose(st.t, [0.0, 0.1, 0.2, 0.3])
    assert log.warnings == ()


def test_parquet_struct_and_flat_columns(tmp_path: Path) -> None:
    stages = [{"camera": 0.01, "inference": 0.02}, {"camera": 0.011, "inference": None}]
    table = pa.table(
        {"episode": [0, 0], "step": [0, 1], "t": [0.0, 0.07], "stages": pa.array(stages)}
    )
    pq.write_table(table, tmp_path / "s.parquet")
    with pytest.warns(TimingLogWarning, match="'inference' missing in 1 of 2"):
        st = read_timing_log(tmp_path / "s.parquet").times
    np.testing.assert_allclose(st.stages["camera"], [0.01, 0.011])
    assert np.isnan(st.stages["inference"][1])
    flat = pa.table(
        {
            "episode": [0, 0],
            "step": [0, 1],
            "t": [0.0, 0.07],
            "stages.camera": [0.01, 0.011],
            "stages.net": [0.005, 0.004],
        }
    )
    pq.write_table(flat, tmp_path / "f.parquet")
    st2 = read_timing_log(tmp_path / "f.parquet").times
    assert st2.stage_names == ("camera", "net")
    np.testing.assert_allclose(st2.total(), [0.015, 0.015])


def test_empty_file(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="at least one tick.*empty log"):
        read_timing_log(tmp_path / "e.jsonl")


def test_non_json_line_is_named(tmp_path: Path) -> None:
    lines = _good(3)
    lines.insert(2, "camera=0.01 inference=0.02")
    with pytest.raises(InputError) as e:
        read_timing_log(_write(tmp_path / "b.jsonl", lines))
    assert "line 3" in str(e.value) and "not JSON" in str(e.value)
    assert "b.jsonl" in str(e.value)


def test_negative_duration(tmp_path: Path) -> None:
    lines = _good(3) + [_rec(0, 3, 0.3, camera=-0.002, inference=0.02)]
    with pytest.raises(InputError) as e:
        read_timing_log(_write(tmp_path / "n.jsonl", lines))
    msg = str(e.value)
    assert "line 4" in msg and "stages.camera" in msg and ">= 0" in msg
    assert "monotonic" in msg


def test_nan_duration_jsonl_and_parquet(tmp_path: Path) -> None:
    lines = _good(2) + ['{"episode": 0, "step": 2, "t": 0.2, "stages": {"camera": NaN}}']
    with pytest.raises(InputError, match=r"line 3: stages\.camera.*NaN"):
        read_timing_log(_write(tmp_path / "nan.jsonl", lines))
    table = pa.table(
        {"episode": [0, 0], "step": [0, 1], "t": [0.0, 0.1], "stages.camera": [0.01, float("nan")]}
    )
    pq.write_table(table, tmp_path / "nan.parquet")
    with pytest.raises(InputError, match=r"row 1: stages\.camera.*NaN"):
        read_timing_log(tmp_path / "nan.parquet")


def test_ticks_out_of_order_warn_with_count_and_sort(tmp_path: Path) -> None:
    lines = _good(5)
    lines[1], lines[3] = lines[3], lines[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log = read_timing_log(_write(tmp_path / "o.jsonl", lines))
    assert any(issubclass(w.category, TimingLogWarning) for w in caught)
    assert any("out of order" in w and "of 5 ticks" in w for w in log.warnings)
    np.testing.assert_array_equal(log.times.step, np.arange(5))
    np.testing.assert_allclose(log.times.t, 0.1 * np.arange(5))


def test_stages_missing_in_some_ticks_warn_with_counts(tmp_path: Path) -> None:
    lines = _good(6)
    lines[2] = _rec(0, 2, 0.2, camera=0.01)
    lines[4] = _rec(0, 4, 0.4, camera=0.01, inference=None)
    with pytest.warns(TimingLogWarning):
        log = read_timing_log(_write(tmp_path / "m.jsonl", lines))
    assert log.warnings == (
        "m.jsonl: stage 'inference' missing in 2 of 6 ticks; their totals omit it",
    )
    assert log.times.total()[2] == pytest.approx(0.01)


def test_repeated_tick_is_refused(tmp_path: Path) -> None:
    lines = _good(3) + [_good(3)[1]]
    with pytest.raises(InputError, match="lines 2 and 4.*each \\(episode, step\\) once"):
        read_timing_log(_write(tmp_path / "d.jsonl", lines))


@pytest.mark.parametrize(
    "line, field",
    [
        ('{"step": 0, "t": 0.0, "stages": {}}', "episode"),
        ('{"episode": 0, "step": 0.5, "t": 0.0, "stages": {}}', "step"),
        ('{"episode": 0, "step": 0, "stages": {}}', "t"),
        ('{"episode": 0, "step": 0, "t": 0.0, "stages": [0.1]}', "stages"),
        ('{"episode": 0, "step": 0, "t": 0.0, "stages": {"cam": "fast"}}', "stages.cam"),
        ("[1, 2]", "line 1"),
    ],
)
def test_bad_fields_are_named(tmp_path: Path, line: str, field: str) -> None:
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        read_timing_log(_write(tmp_path / "f.jsonl", [line]))


def test_missing_file_and_unknown_suffix(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_timing_log(tmp_path / "nope.jsonl")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="suffix"):
        read_timing_log(tmp_path / "x.csv")
    with pytest.raises(InputError, match="suffix"):
        read_latency_files([tmp_path / "x.csv"])


def test_several_files_keep_episodes_apart(tmp_path: Path) -> None:
    a = _write(tmp_path / "a.jsonl", _good(3))
    b = _write(tmp_path / "b.jsonl", _good(2))
    log = read_timing_logs([a, b])
    np.testing.assert_array_equal(log.times.episode, [0, 0, 0, 1, 1])
    assert log.files == (str(a), str(b))


def test_fast_and_line_by_line_readers_agree(tmp_path: Path) -> None:
    from simgap.demo.timing import write_timing_log
    from simgap.evidence.timing_check import check_ticks
    from simgap.evidence.timing_jsonl import parse_jsonl, read_jsonl_fast

    path = write_timing_log(tmp_path / "demo.jsonl", seed=3, n_episodes=3, steps=40)
    lines = path.read_text().splitlines()
    lines.insert(5, "")  # a blank line is skipped by both
    lines[7] = lines[7].replace('"network"', '"net_extra": 0.001, "network"')
    path.write_text("\n".join(lines) + "\n")
    fast = read_jsonl_fast(path)
    assert fast is not None
    slow = check_ticks(path, *parse_jsonl(path), "line")
    assert fast[1] == slow[1]
    assert fast[0].stage_names == slow[0].stage_names
    for name in slow[0].stage_names:
        np.testing.assert_array_equal(fast[0].stages[name], slow[0].stages[name])
    np.testing.assert_array_equal(fast[0].t, slow[0].t)
    np.testing.assert_array_equal(fast[0].episode, slow[0].episode)


def test_ticks_without_any_stage_are_refused(tmp_path: Path) -> None:
    lines = [json.dumps({"episode": 0, "step": i, "t": i, "stages": {}}) for i in range(3)]
    with pytest.raises(InputError, match="at least one stage duration"):
        read_timing_log(_write(tmp_path / "z.jsonl", lines))


def test_a_truncated_last_line_is_dropped_with_a_warning(tmp_path: Path) -> None:
    from simgap.demo.timing import write_timing_log

    path = write_timing_log(tmp_path / "killed.jsonl", seed=1, n_episodes=2, steps=30)
    lines = path.read_text().splitlines()
    whole = read_timing_log(path).times.n_ticks
    path.write_text("\n".join(lines) + "\n" + lines[-1][:23])  # the logger died mid-line
    with pytest.warns(TimingLogWarning, match=r"last line \(61\) is cut off.*dropped 1 line"):
        log = read_timing_log(path)
    assert log.times.n_ticks == whole
    bad = lines[:10] + ['{"episode": 0, "step": 10, "t": 1.0, "sta'] + lines[10:]
    path.write_text("\n".join(bad) + "\n")
    with pytest.raises(InputError, match=r"line 11.*--skip-bad-lines"):
        read_timing_log(path)
    with pytest.warns(
        TimingLogWarning,
        match=r"dropped 1 line\(s\) that are not JSON objects "
        r"\(lines 11\)",
    ):
        log = read_timing_log(path, skip_bad_lines=True)
    assert log.times.n_ticks == whole
