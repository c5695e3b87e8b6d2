"""``simgap actuator DATASET --format lerobot --rig`` is diagnose's actuator finding: the same
identification (the rig's MJCF as the null), seed, episodes and numbers (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.demo.factory import make_so101_bench
from simgap.figures.controller import GainsFigures
from simgap.figures.joint_dynamics import JointDynamicsFigures
from simgap.finding import figures_of

runner = CliRunner()
CONTRACT = ("delay_s", "delay_interval_s", "params", "params_interval", "not_identifiable")
SHARED = (
    "shared_delay_s",
    "shared_delay_interval_s",
    "effective_delay_s",
    "effective_delay_interval_s",
    "joint_verdicts",
)


def _fig(finding: dict[str, Any]) -> JointDynamicsFigures:
    assert finding["kind"] == JointDynamicsFigures.kind
    return figures_of(finding, JointDynamicsFigures)


@pytest.fixture
def so101(shared_data: Path) -> Path:
    return shared_data / "so101" / "so101.xml"


def _cli(bench: Any, tmp: Path, *extra: str) -> tuple[dict[str, Any], str]:
    out_json = tmp / "standalone.json"
    res = runner.invoke(
        app,
        [
            "actuator",
            str(bench.dataset),
            "--format",
            "lerobot",
            "--rig",
            str(bench.rig),
            "--json",
            str(out_json),
            "--out",
            str(tmp / "standalone"),
            *extra,
        ],
    )
    assert res.exit_code == 0, res.output + repr(res.exception)
    return json.loads(out_json.read_text()), res.output


def _diagnose(bench: Any, tmp: Path) -> dict[str, dict[str, Any]]:
    from simgap.diagnose import diagnose_rig

    d = diagnose_rig(bench.rig, tmp / "diagnosis").to_dict()
    return {f["branch"]: f for f in d["findings"]}


def _fake_identify(calls: list[dict[str, Any]]) -> Any:
    """A stand-in for the identification that records what it was given and answers with
    numbers that depend on it (seed and episodes), so that a different seed or selection in
    one path gives different figures."""
    import numpy as np

    def identify_rig(
        rig: Any, ds: Any, *, seed: int = 0, options: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        from simgap.branches.joint_dynamics import _verdicts, dataset_logs

        logs, _, _ = dataset_logs(rig, ds, 8.0)
        calls.append(
            {
                "model": rig.model_path,
                "dataset": rig.evidence.dataset,
                "seed": seed,
                "options": dict(options or {}),
                "joints": rig.joint_names,
                "samples": [len(lg.t) for lg in logs],
            }
        )
        d = 1e-3 * (seed + sum(len(lg.t) for lg in logs) % 17)
        js: dict[str, Any] = {
            "delay_s": {},
            "delay_interval_s": {},
            "params": {},
            "params_interval": {},
            "not_identifiable": {},
            "nominal_rms_rad": {},
            "identified_rms_rad": {},
            "noise_floor_rad": {},
            "force_saturation": {},
            "params_nominal": {},
            "bounds_x_nominal": {"damping": [0.2, 5.0]},
            "shared_delay_s": d,
            "shared_delay_interval_s": [0.0, 2 * d],
            "effective_delay_s": {},
            "effective_delay_interval_s": {},
            "delay_ridge": {},
            "params_fitted": {},
            "clock": {"chosen": "exact", "source": "identified"},
        }
        for i, j in enumerate(rig.joint_names):
            js["delay_s"][j] = d + i * 1e-4
            js["delay_interval_s"][j] = [0.0, 2 * d + i * 1e-4]
            js["params"][j] = {"damping": 0.5 + i}
            js["params_fitted"][j] = {"damping": 0.5 + i}
            js["params_interval"][j] = {"damping": [0.4 + i, 0.6 + i]}
            js["not_identifiable"][j] = {"kp": "masked: force saturated in 90% of samples"}
            js["nominal_rms_rad"][j] = 1e-4
            js["identified_rms_rad"][j] = 1e-4
            js["noise_floor_rad"][j] = {"total_rad": float(np.float64(1e-3))}
            js["force_saturation"][j] = 0.9
            js["params_nominal"][j] = {"kp": 998.0, "kv": 0.0, "damping": 0.6}
            js["effective_delay_s"][j] = js["delay_s"][j]
            js["effective_delay_interval_s"][j] = js["delay_interval_s"][j]
        verdict, per, _ = _verdicts(js)
        js.update(
            {
                "verdict": verdict,
                "joint_verdicts": per,
                "seed": seed,
                "_held_out": [],
                "_proof": ([], []),
                "fitted_episodes": len(logs),
                "fit_seconds": 8.0,
            }
        )
        return js

    return identify_rig


def test_standalone_calls_diagnose_identification_with_its_seed_and_episodes(
    so101: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fast wiring check: both paths hand the identification the same rig, dataset, seed
    and options, and the CLI writes the finding diagnose writes."""
    import simgap.branches.joint_dynamics as jd

    bench = make_so101_bench(
        tmp_path / "bench", so101, 3, fps=30, n_episodes=2, duration_s=1.0, n_heldout=0
    )
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(jd, "identify_rig", _fake_identify(calls))
    crossed: list[float] = []
    monkeypatch.setattr(
        "simgap.branches.controller_record.cross_check",
        lambda ctx, d: crossed.append(d) or {"role": "cross-check"},
    )
    solo, printed = _cli(bench, tmp_path)
    diag = _diagnose(bench, tmp_path)
    # SIMPLER's pose fit is opt-in (--controller-cross-check): not on diagnose's path
    assert crossed == [] and "controller" in diag
    assert figures_of(diag["controller"], GainsFigures).simpler_cross_check is None
    assert len(calls) == 2, calls  # once per run: the controller reads the same one
    assert calls[0] == calls[1]
    assert calls[0]["seed"] == 3 and calls[0]["dataset"] == bench.dataset.resolve()
    assert solo["method"] == "joint_dynamics" and solo["branch"] == "actuator"
    one, two = _fig(solo), _fig(diag["actuator"])
    for k in CONTRACT + SHARED:
        assert getattr(one, k) == getattr(two, k), k
    assert solo["verdict"] == diag["actuator"]["verdict"] == "eliminated"
    assert "delay " in printed and "verdict: eliminated" in printed
    # another seed is another identification (the seed reaches it)
    other, _ = _cli(bench, tmp_path / "s", "--seed", "4")
    assert calls[-1]["seed"] == 4
    assert _fig(other).delay_s != one.delay_s


def test_lerobot_without_rig_or_with_two_datasets_is_a_clear_error(
    so101: Path, tmp_path: Path
) -> None:
    bench = make_so101_bench(
        tmp_path / "bench", so101, 3, fps=30, n_episodes=1, duration_s=0.5, n_heldout=0
    )
    res = runner.invoke(
        app,
        ["actuator", str(bench.dataset), "--format", "lerobot", "--json", str(tmp_path / "o.json")],
    )
    assert res.exit_code != 0 and "--rig" in res.output and "simgap init" in res.output
    assert str(bench.dataset) in res.output
    res = runner.invoke(
        app,
        [
            "actuator",
            str(bench.dataset),
            str(bench.dataset),
            "--format",
            "lerobot",
            "--rig",
            str(bench.rig),
            "--json",
            str(tmp_path / "o.json"),
        ],
    )
    assert res.exit_code != 0 and "one LeRobot dataset" in res.output
    assert not (tmp_path / "o.json").exists()


@pytest.mark.slow  # two identifications of 1 x 2 s on the SO-101: a few minutes on 2 cores
def test_standalone_equals_diagnose_on_a_faulty_bench(so101: Path, tmp_path: Path) -> None:
    """The real thing: a bench with random faults, the CLI and diagnose on the same rig,
    dataset and seed give identical actuator figures, and diagnose's controller reports
    the same gains (or the same reasons) as the standalone actuator finding."""
    bench = make_so101_bench(
        tmp_path / "bench",
        so101,
        7,
        fps=30,
        n_episodes=2,
        duration_s=2.0,
        faults="random",
        n_heldout=0,
    )
    solo, printed = _cli(bench, tmp_path)
    diag = _diagnose(bench, tmp_path)
    act, ctl = diag["actuator"], diag["controller"]
    assert solo["verdict"] == act["verdict"] == "implicated"  # the faults are planted
    one, two, gains = _fig(solo), _fig(act), figures_of(ctl, GainsFigures)
    for k in CONTRACT + SHARED:
        assert getattr(one, k) == getattr(two, k), k
    assert one.patch == two.patch
    assert set(solo["artifacts"]) == set(act["artifacts"])
    for j, v in one.params.items():
        for k in ("kp", "kv"):
            if k in v:
                assert gains.params[j][k] == v[k]
                assert gains.params_interval[j][k] == one.params_interval[j][k]
            else:
                assert gains.not_identifiable[j][k] == one.not_identifiable[j][k]
    assert gains.delay_interval_s == one.delay_interval_s
    assert "verdict: implicated" in printed
