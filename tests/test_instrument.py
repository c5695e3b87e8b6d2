import json
from pathlib import Path

import pytest

import simgap
from simgap import LoopTimer
from simgap.errors import InputError
from simgap.evidence.timing import read_timing_log


class FakeClock:
    """perf_counter_ns stand-in that advances by scripted steps [ns]."""

    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        return self.now

    def advance(self, ns: int) -> None:
        self.now += ns


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    c = FakeClock()
    monkeypatch.setattr("simgap.instrument.perf_counter_ns", c)
    return c


def test_marks_become_stage_durations(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "timing.jsonl"
    with LoopTimer(path) as timer:
        for ep in range(2):
            timer.start_episode(ep)
            for _ in range(3):
                timer.tick()
                clock.advance(18_000_000)
                timer.mark("camera")
                clock.advance(30_000_000)
                timer.mark("inference")
                clock.advance(2_000_000)
                timer.mark("command")
                clock.advance(17_000_000)  # sleep to the next tick, not a stage
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["episode"], r["step"]) for r in recs] == [(e, s) for e in range(2) for s in range(3)]
    for r in recs:
        assert r["stages"] == pytest.approx(
            {"camera": 0.018, "inference": 0.030, "command": 0.002}, abs=1e-12
        )
    # tick starts are 67 ms apart on the monotonic clock
    assert recs[1]["t"] - recs[0]["t"] == pytest.approx(0.067)
    log = read_timing_log(path)
    assert log.times.n_ticks == 6 and log.warnings == ()
    assert log.times.total() == pytest.approx([0.050] * 6)


def test_stage_marked_twice_adds_up_and_episodes_autoincrement(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "t.jsonl"
    timer = LoopTimer(path, episode=5)
    timer.tick()
    clock.advance(1_000)
    timer.mark("io")
    clock.advance(2_000)
    timer.mark("io")
    timer.start_episode()  # -> episode 6
    timer.tick()
    timer.mark("io")
    timer.close()
    timer.close()  # idempotent
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["episode"] for r in recs] == [5, 6]
    assert recs[0]["stages"]["io"] == pytest.approx(3e-6)


def test_flush_every_n_ticks_and_append(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "t.jsonl"
    timer = LoopTimer(path, flush_ticks=2)
    for _ in range(3):
        timer.tick()
        timer.mark("a")
    # two ticks are complete and flushed before close
    assert len(path.read_text().splitlines()) == 2
    timer.close()
    with LoopTimer(path, append=True, episode=1) as t2:
        t2.tick()
        t2.mark("a")
    assert len(path.read_text().splitlines()) == 4


def test_folder_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="folder"):
        LoopTimer(tmp_path)


def test_exported_from_package() -> None:
    assert "LoopTimer" in simgap.__all__ and simgap.LoopTimer is LoopTimer


def test_odd_stage_names_stay_valid_json(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "t.jsonl"
    with LoopTimer(path) as timer:
        for _ in range(3):
            timer.tick()
            clock.advance(5_000)
            timer.mark('cam "wrist" 100%')
            clock.advance(7_000)
            timer.mark("{x}")
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    assert recs[2]["stages"] == pytest.approx({'cam "wrist" 100%': 5e-6, "{x}": 7e-6})
