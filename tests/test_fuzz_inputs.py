"""Property-based fuzzing of every input format simgap reads (hypothesis).

One strategy per format mutates a valid file (bytes, encodings, JSON/TOML trees, CSV rows,
Parquet columns, numbers at the edges). For every case: exit 0 or 2, never a traceback and
never exit 3; when exit 0, every number in the JSON output is finite; the inputs are
byte-identical afterwards. Cheap commands run the whole CLI in process (CliRunner); formats
whose command runs a long fit go through the same error wrapper at their reader.

The default profile is small and deterministic; ``--hypothesis-profile=long`` runs many
more cases with fresh randomness (see tests/conftest.py).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests import lerobot_log_lines as ll
from tests.fuzz_harness import (
    mutate_bytes,
    mutate_csv_text,
    mutate_json_text,
    mutate_jsonl_text,
    mutate_parquet,
    mutate_toml_text,
    run_cli,
    run_reader,
)

DT = "0.0666667"


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo bench (a valid file of nearly every format), built once; seeds are cut
    short so each case runs in milliseconds."""
    from simgap.demo import prepare_demo

    root = prepare_demo(tmp_path_factory.mktemp("fuzzcache"), seed=0).parent
    seeds = tmp_path_factory.mktemp("seeds")
    for name in ("timing.jsonl", "trace.jsonl"):
        lines = (root / name).read_text().splitlines()[:60]
        (seeds / name).write_text("\n".join(lines) + "\n")
    for sub in ("push", "servo"):
        (seeds / sub).mkdir()
        for f in sorted((root / sub).glob("*.csv"))[:1]:
            lines = f.read_text().splitlines()[: 300 if sub == "servo" else 60]
            (seeds / sub / f.name).write_text("\n".join(lines) + "\n")
    shutil.copy(root / "static_object_poses.csv", seeds)
    shutil.copytree(root / "frames", seeds / "frames")
    shutil.copytree(root / "eval", seeds / "eval")
    shutil.copytree(root / "recordings" / "real", seeds / "dataset")
    shutil.copy(root / "so101_demo.xml", seeds)
    shutil.copy(root / "rig.toml", seeds)
    _timing_parquet(seeds / "timing.jsonl", seeds / "timing.parquet")
    ll.server_log(seeds / "policy_server_1.log", [(1.0, 2.0, 20.0, 1.0)] * 12)
    ll.client_log(seeds / "robot_client_1.log", [5, 4, 3, 0, 6, 5, 4] * 2, [66.0] * 14)
    (seeds / "eval_info.json").write_text(
        json.dumps(
            {
                "per_episode": [
                    {
                        "episode_ix": i,
                        "sum_reward": 1.0,
                        "max_reward": 1.0,
                        "success": i % 3 != 0,
                        "seed": i,
                    }
                    for i in range(12)
                ],
                "aggregated": {"pc_success": 66.7},
            }
        )
    )
    (seeds / "rank.csv").write_text(
        "checkpoint,sim_success,real_success,sim_trials,real_trials,offline_metric\n"
        + "".join(
            f"ck{i},{0.2 + 0.1 * i:.2f},{0.1 + 0.09 * i:.2f},50,20,{1.0 - 0.1 * i:.2f}\n"
            for i in range(6)
        )
    )
    (seeds / "findings.json").write_text(json.dumps(_findings()))
    (seeds / "bam.json").write_text(json.dumps(_bam()))
    return seeds


def _timing_parquet(jsonl: Path, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    recs = [json.loads(x) for x in jsonl.read_text().splitlines()]
    cols = {
        "episode": [r["episode"] for r in recs],
        "step": [r["step"] for r in recs],
        "t": [r["t"] for r in recs],
    }
    for name in recs[0]["stages"]:
        cols[f"stages.{name}"] = [r["stages"].get(name) for r in recs]
    pq.write_table(pa.table(cols), out)


def _findings() -> dict:
    from simgap.finding import Diagnosis, Finding, Verdict

    f = Finding(
        branch="latency",
        verdict=Verdict.IMPLICATED,
        title="Latency",
        figures={"total_p95_s": 0.09, "control_dt_s": 0.0667},
        key_figure="total_p95_s",
        summary="slow",
        next_step="fix it",
    )
    return Diagnosis(
        rig="simgap-demo-so101", findings=(f,), stop={"verdict": "cause_found"}
    ).to_dict()


def _bam() -> dict:
    import numpy as np

    t = np.arange(0, 1.5, 0.005)
    return {
        "mass": 0.49,
        "length": 0.1,
        "kp": 200,
        "vin": 7.4,
        "motor": "xl330",
        "trajectory": "sin_sin",
        "entries": [
            {
                "timestamp": float(x),
                "position": float(0.9 * np.sin(x - 0.05)),
                "speed": 0.0,
                "goal_position": float(np.sin(x)),
                "torque_enable": True,
                "load": 10,
            }
            for x in t
        ],
    }


@contextmanager
def case(bench: Path, *names: str) -> Iterator[Path]:
    """A fresh folder holding copies of the named seeds (hypothesis reuses no tmp_path)."""
    d = Path(tempfile.mkdtemp(prefix="fuzz-"))
    try:
        inp = d / "in"
        inp.mkdir()
        for n in names:
            src = bench / n
            (inp / n).parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, inp / n)
            else:
                shutil.copy(src, inp / n)
        yield inp
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _rig(inp: Path):
    from simgap.rig import load_rig

    return load_rig(inp / "rig.toml")


# ------------------------------------------------------------------------------ formats


@given(st.data())
def test_rig_toml(bench: Path, data: st.DataObject) -> None:
    with case(bench, "rig.toml", "so101_demo.xml", "timing.jsonl") as inp:
        rig = inp / "rig.toml"
        _write(rig, mutate_toml_text(data, rig.read_text()))
        from simgap.rig import load_rig

        if run_reader(load_rig, rig, inputs=inp) == 0:
            out = inp.parent / "out.json"
            run_cli(["latency", str(inp / "timing.jsonl"), "--rig", rig, "--json", out], inp, out)


@given(st.data())
def test_timing_jsonl(bench: Path, data: st.DataObject) -> None:
    with case(bench, "timing.jsonl") as inp:
        f = inp / "timing.jsonl"
        _write(f, mutate_jsonl_text(data, f.read_text()))
        out = inp.parent / "out.json"
        run_cli(["latency", f, "--control-dt", DT, "--json", out], inp, out)


@given(st.data())
def test_timing_parquet(bench: Path, data: st.DataObject) -> None:
    with case(bench, "timing.parquet") as inp:
        f = inp / "timing.parquet"
        mutate_parquet(data, f)
        out = inp.parent / "out.json"
        run_cli(["latency", f, "--control-dt", DT, "--json", out], inp, out)


@given(st.data())
def test_lerobot_async_logs(bench: Path, data: st.DataObject) -> None:
    with case(bench, "policy_server_1.log", "robot_client_1.log") as inp:
        which = data.draw(st.sampled_from(["policy_server_1.log", "robot_client_1.log"]))
        f = inp / which
        text = f.read_text()
        if data.draw(st.booleans()):
            _write(f, mutate_bytes(data, text.encode()))
        else:
            lines = text.splitlines()
            i = data.draw(st.integers(0, len(lines) - 1))
            cell = data.draw(
                st.sampled_from(["nan", "inf", "1e30", "-1", "99999999999999999", "", "x" * 5000])
            )
            lines[i] = __import__("re").sub(r"\d+\.\d+", cell, lines[i], count=1)
            _write(f, ("\n".join(lines) + "\n").encode())
        out = inp.parent / "out.json"
        run_cli(
            [
                "latency",
                inp / "policy_server_1.log",
                inp / "robot_client_1.log",
                "--control-dt",
                DT,
                "--json",
                out,
            ],
            inp,
            out,
        )


@given(st.data())
def test_manifests(bench: Path, data: st.DataObject) -> None:
    with case(bench, "eval") as inp:
        f = inp / "eval" / data.draw(st.sampled_from(["real.toml", "sim.toml"]))
        _write(f, mutate_toml_text(data, f.read_text()))
        out = inp.parent / "out.json"
        run_cli(
            [
                "compare",
                inp / "eval" / "sim.toml",
                inp / "eval" / "real.toml",
                "--allow-mismatch",
                "--json",
                out,
            ],
            inp,
            out,
        )


@given(st.data())
def test_eval_info_json(bench: Path, data: st.DataObject) -> None:
    with case(bench, "eval_info.json", "eval") as inp:
        f = inp / "eval_info.json"
        _write(f, mutate_json_text(data, f.read_text()))
        m = inp / "eval" / "sim.toml"
        text = m.read_text().split("[[trials]]")[0]
        m.write_text(text + '\n[outcomes]\nlerobot_eval_info = "../eval_info.json"\n')
        out = inp.parent / "out.json"
        run_cli(
            ["compare", m, inp / "eval" / "real.toml", "--allow-mismatch", "--json", out], inp, out
        )


@given(st.data())
def test_rank_csv(bench: Path, data: st.DataObject) -> None:
    with case(bench, "rank.csv") as inp:
        f = inp / "rank.csv"
        _write(f, mutate_csv_text(data, f.read_text()))
        out = inp.parent / "out.json"
        run_cli(["rank", f, "--n-boot", "50", "--json", out], inp, out)


@given(st.data())
def test_trace(bench: Path, data: st.DataObject) -> None:
    with case(bench, "trace.jsonl") as inp:
        f = inp / "trace.jsonl"
        _write(f, mutate_jsonl_text(data, f.read_text()))
        out = inp.parent / "out.json"
        run_cli(["audit", f, "--json", out], inp, out)


@given(st.data())
def test_mjcf(bench: Path, data: st.DataObject) -> None:
    with case(bench, "so101_demo.xml") as inp:
        f = inp / "so101_demo.xml"
        text = f.read_text()
        if data.draw(st.booleans()):
            _write(f, mutate_bytes(data, text.encode()))
        else:
            import re

            nums = list(re.finditer(r'(?<=")-?\d[\d.e-]*', text))
            m = data.draw(st.sampled_from(nums))
            v = data.draw(st.sampled_from(["nan", "inf", "-1", "1e30", "0", "abc", "-0.5"]))
            _write(f, (text[: m.start()] + v + text[m.end() :]).encode())
        out = inp.parent / "out.json"
        run_cli(["contact", "lint", f, "--json", out], inp, out)


@given(st.data())
def test_bam_json(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.bam import read_bam_log

    with case(bench, "bam.json") as inp:
        f = inp / "bam.json"
        _write(f, mutate_json_text(data, f.read_text()))
        run_reader(read_bam_log, f, inputs=inp)


@given(st.data())
def test_servo_csv(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.servo_csv import read_servo_csv

    with case(bench, "servo", "rig.toml", "so101_demo.xml") as inp:
        f = next((inp / "servo").glob("*.csv"))
        _write(f, mutate_csv_text(data, f.read_text()))
        run_reader(lambda p: read_servo_csv(p, _rig(inp)), f, inputs=inp)


@given(st.data())
def test_findings_json(bench: Path, data: st.DataObject) -> None:
    with case(bench, "findings.json") as inp:
        f = inp / "findings.json"
        _write(f, mutate_json_text(data, f.read_text()))
        out = inp.parent / "spec.json"
        run_cli(["randomize", f, "--out", out], inp, out)


@given(st.data())
def test_lerobot_info_json(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.lerobot import read_lerobot_dataset

    with case(bench, "dataset") as inp:
        f = inp / "dataset" / "meta" / "info.json"
        _write(f, mutate_json_text(data, f.read_text()))
        run_reader(read_lerobot_dataset, inp / "dataset", inputs=inp)


@given(st.data())
def test_lerobot_parquet(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.lerobot import dataset_trajectories, read_lerobot_dataset

    with case(bench, "dataset", "rig.toml", "so101_demo.xml") as inp:
        files = sorted((inp / "dataset").rglob("*.parquet"))
        mutate_parquet(data, data.draw(st.sampled_from(files)))
        if data.draw(st.integers(0, 4)) == 0:  # a second data file with another schema
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(
                pa.table({"index": ["a"], "x": [1.0]}),
                inp / "dataset" / "data" / "chunk-000" / "file-001.parquet",
            )

        def read(root: Path) -> None:
            dataset_trajectories(read_lerobot_dataset(root), _rig(inp))

        run_reader(read, inp / "dataset", inputs=inp)


@given(st.data())
def test_frames_index(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.frames import read_frames_folder

    with case(bench, "frames", "rig.toml", "so101_demo.xml") as inp:
        f = inp / "frames" / "index.csv"
        _write(f, mutate_csv_text(data, f.read_text()))
        run_reader(lambda p: read_frames_folder(p, _rig(inp)), inp / "frames", inputs=inp)


@given(st.data())
def test_static_poses(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.static_poses import read_static_poses

    with case(bench, "static_object_poses.csv", "rig.toml", "so101_demo.xml") as inp:
        f = inp / "static_object_poses.csv"
        _write(f, mutate_csv_text(data, f.read_text()))
        run_reader(lambda p: read_static_poses(p, _rig(inp)), f, inputs=inp)


@given(st.data())
def test_push_logs(bench: Path, data: st.DataObject) -> None:
    from simgap.evidence.push_log import read_push_log

    with case(bench, "push", "rig.toml", "so101_demo.xml") as inp:
        f = next((inp / "push").glob("*.csv"))
        _write(f, mutate_csv_text(data, f.read_text()))
        run_reader(lambda p: read_push_log(p, _rig(inp)), f, inputs=inp)
