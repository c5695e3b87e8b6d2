"""Selftest scoring, table, plan and trial rig: crafted truths and findings, no simulation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from simgap.demo.faults import resolve_faults
from simgap.rig import Evidence, load_rig
from simgap.selftest.plan import FAMILIES, MIN_CHANGE, RANGES, plan_trials
from simgap.selftest.score import gap_closed, planted_parameters, score_cells
from simgap.selftest.table import markdown, recovery_table, sentence
from simgap.selftest.trial_rig import trial_rig_text

NOMINAL = {
    j: {
        "kp": 1000.0,
        "kv": 2.7,
        "damping": 0.6,
        "frictionloss": 0.05,
        "armature": 0.03,
        "force_limit": 3.0,
    }
    for j in ("a", "b")
}


def _truth(faults: dict) -> tuple:
    return resolve_faults(faults, 0, NOMINAL)


def _figures(**kw: object) -> dict:
    base = {
        "delay_interval_s": {"a": [0.0, 0.004], "b": [0.0, 0.004]},
        "params_interval": {"a": {}, "b": {}},
        "not_identifiable": {"a": {}, "b": {}},
    }
    base.update(kw)
    return base


def _by(cells: list, family: str, joint: str) -> str:
    return next(c.outcome for c in cells if c.family == family and c.joint == joint)


def test_a_parameter_stated_on_the_wrong_joint_is_missed_there_and_false_here() -> None:
    truth = _truth({"damping": {"a": 2.0}})  # a: 1.2 true, b nominal 0.6
    fig = _figures(
        params_interval={
            "a": {"damping": [0.5, 0.7]},  # holds nominal, not truth
            "b": {"damping": [1.1, 1.3]},
        }
    )  # the fault, on b
    cells = score_cells("t", truth, fig, ["damping"])
    assert _by(cells, "damping", "a") == "missed"
    assert _by(cells, "damping", "b") == "false"
    # the same statement about the right joint is inside and clean
    right = _figures(params_interval={"a": {"damping": [1.1, 1.3]}, "b": {"damping": [0.5, 0.7]}})
    cells = score_cells("t", truth, right, ["damping"])
    assert (_by(cells, "damping", "a"), _by(cells, "damping", "b")) == ("inside", "clean")


def test_wrong_scale_missed_declared_and_silent_are_told_apart() -> None:
    truth = _truth({"kp": {"a": 0.5, "b": 0.5}, "armature": {"a": 2.0}})
    fig = _figures(
        params_interval={"a": {"kp": [900.0, 1100.0]}, "b": {}},
        not_identifiable={"a": {"armature": "spans x30"}, "b": {"kp": "saturated"}},
    )
    cells = score_cells("t", truth, fig, ["kp", "armature"])
    assert _by(cells, "kp", "a") == "missed"  # stated at the nominal scale
    assert _by(cells, "kp", "b") == "declared"
    assert _by(cells, "armature", "a") == "declared"
    silent = score_cells("t", truth, _figures(), ["kp"])
    assert {c.outcome for c in silent} == {"missed"}
    assert all(c.note == "nothing stated" for c in silent)


def test_delay_inside_declared_and_false() -> None:
    truth = _truth({"delay_s": 0.05})
    fig = _figures(
        delay_interval_s={"a": [0.04, 0.06], "b": [0.01, 0.03]},
        not_identifiable={"a": {}, "b": {"delay": "ridge with the lag"}},
    )
    cells = score_cells("t", truth, fig, ["delay"])
    assert (_by(cells, "delay", "a"), _by(cells, "delay", "b")) == ("inside", "declared")
    null = score_cells(
        "null",
        _truth({}),
        _figures(delay_interval_s={"a": [0.0, 0.004], "b": [0.02, 0.03]}),
        ["delay"],
    )
    assert (_by(null, "delay", "a"), _by(null, "delay", "b")) == ("clean", "false")


def test_no_actuator_finding_misses_every_planted_cell() -> None:
    cells = score_cells("t", _truth({"damping": {"b": 0.5}}), None, FAMILIES)
    planted = [c for c in cells if c.planted]
    assert [(c.family, c.joint) for c in planted] == [("damping", "b")]
    assert planted[0].outcome == "missed"
    assert all(c.outcome == "clean" for c in cells if not c.planted)


def test_force_limit_cells_need_a_force_range() -> None:
    nominal = {"a": {**NOMINAL["a"], "force_limit": math.inf}}
    cells = score_cells("t", resolve_faults({}, 0, nominal), _figures(), ["force_limit"])
    assert cells == []


def test_planted_parameters_counts_as_the_benchmark_did() -> None:
    truth = _truth({"kp": {"a": 0.5, "b": 1.02}, "damping": {"a": 2.0, "b": 2.0}})
    js = {
        "params_interval": {
            "a": {"kp": [400.0, 600.0], "damping": [0.1, 0.2]},
            "b": {"kp": [1.0, 2.0]},
        }
    }
    # a kp inside, a damping outside, b damping declared (no interval), b kp not planted
    assert planted_parameters(js, truth, ["kp", "damping"]) == {
        "inside": 1,
        "outside": 1,
        "declared": 1,
    }


def test_gap_closed() -> None:
    assert gap_closed(10.0, 2.0, 2.0) == 1.0
    assert gap_closed(10.0, 2.0, 10.0) == 0.0
    assert gap_closed(10.0, 2.0, 6.0) == 0.5
    assert gap_closed(10.0, 2.0, 12.0) < 0
    assert math.isnan(gap_closed(2.0, 2.0, 1.0))


def test_table_and_sentence_come_from_the_numbers() -> None:
    truth = _truth({"delay_s": 0.05, "damping": {"a": 2.0}, "armature": {"a": 2.0, "b": 2.0}})
    fig = _figures(
        delay_interval_s={"a": [0.04, 0.06], "b": [0.045, 0.055]},
        params_interval={"a": {"damping": [1.1, 1.3]}, "b": {}},
        not_identifiable={"a": {"armature": "x"}, "b": {"armature": "y"}},
    )
    cells = score_cells("trial-01", truth, fig, FAMILIES)
    cells += score_cells(
        "null", _truth({}), _figures(params_interval={"a": {"kp": [10.0, 20.0]}, "b": {}}), FAMILIES
    )
    rows = {r.family: r for r in recovery_table(cells, FAMILIES)}
    assert rows["delay"].counts.inside == 2 and rows["delay"].seen
    assert rows["damping"].counts.planted == 1 and rows["damping"].joints["a"].inside == 1
    assert rows["damping"].joints["b"].planted == 0
    assert rows["armature"].counts.declared == 2 and not rows["armature"].seen
    assert rows["kp"].null_false == 1 and rows["kp"].counts.false == 0
    text = sentence(list(rows.values()), ["kp on a"])
    assert text.startswith(
        "On this rig simgap sees delay and damping, not armature "
        "(declared not identifiable in 2 of 2)"
    )
    assert "implicated kp on a" in text
    assert "implicated nothing" in sentence(list(rows.values()))
    md = markdown(list(rows.values()), text, not_planted={"camera": "no frames"})
    assert "| armature | 2 | 0 | 2 | 0 | 0 | 0 | no |" in md
    assert "| kp | 0 | 0 | 0 | 0 | 0 | 1 | not drawn |" in md


def test_plan_is_seeded_and_plants_within_its_ranges() -> None:
    ev = Evidence()
    a = plan_trials(NOMINAL, ev, trials=12, seed=5)
    assert a == plan_trials(NOMINAL, ev, trials=12, seed=5)
    assert a.trials != plan_trials(NOMINAL, ev, trials=12, seed=6).trials
    assert a.trials[0].null and not any(t.null for t in a.trials[1:])
    assert len({t.name for t in a.trials}) == 13
    for t in a.trials[1:]:
        assert t.faults
        for fam, v in t.faults.items():
            if fam == "delay_s":
                assert 0.015 <= v <= 0.080
                continue
            lo, hi = RANGES[fam]
            for f in v.values():
                assert lo <= f <= hi and abs(math.log(f)) >= math.log(MIN_CHANGE) - 1e-12
    assert set(a.not_planted) >= {"contact", "camera", "joint_zero_offsets"}
    nomax = {j: {**p, "force_limit": math.inf} for j, p in NOMINAL.items()}
    b = plan_trials(nomax, ev, trials=12, seed=5)
    assert "force_limit" not in b.families and "force_limit" in b.not_planted
    assert not any("force_limit" in t.faults for t in b.trials)


def test_trial_rig_keeps_the_users_rig_and_escapes_its_name(
    tmp_path: Path, demo_model: Path
) -> None:
    bad = 'arm"\n[evidence]\ntrace = "/etc/passwd'
    from simgap.safe_names import toml_string

    src = tmp_path / "user" / "rig.toml"
    src.parent.mkdir()
    src.write_text(
        f"name = {toml_string(bad)}\n[model]\npath = {toml_string(str(demo_model))}\n"
        "[control]\ndt_s = 0.0333333   # guessed: 1 / fps\n"
        '[joints.gripper]\nrecorded = "gripper.pos"\nunit = "pct"\n'
        "range_rad = [-0.17, 1.74]\ngripper = true\n"
        '[noise]\nencoder_rad = 0.0015339808\n[compute]\nbackend = "ray"\n'
        '[evidence]\ndataset = "data"\ntrace = "t.jsonl"\n',
        encoding="utf-8",
    )
    user = load_rig(src)
    out = tmp_path / "trial" / "rig.toml"
    out.parent.mkdir()
    out.write_text(trial_rig_text(user, name="selftest-null", seed=7), encoding="utf-8")
    rig = load_rig(out)
    assert rig.name == "selftest-null" and rig.seed == 7
    assert rig.model_path == user.model_path
    assert rig.evidence.dataset == out.parent / "dataset" and rig.evidence.trace is None
    assert rig.joints == user.joints and rig.encoder_rad == user.encoder_rad
    assert rig.control_dt_s == user.control_dt_s and not rig.stated("control.dt_s")
    assert rig.compute_backend == "local"
    # the user's name lands in the first comment alone, its line breaks removed
    hits = [ln for ln in out.read_text().splitlines() if "passwd" in ln]
    assert len(hits) == 1 and hits[0].startswith("# ")


@pytest.mark.parametrize("bad", [0, 1])
def test_too_few_episodes_or_no_dataset_is_an_input_error(
    tmp_path: Path, demo_model: Path, bad: int
) -> None:
    from simgap.demo.writers import write_lerobot_v3
    from simgap.errors import InputError
    from simgap.selftest.synthesise import rig_dataset

    rig = tmp_path / "rig.toml"
    text = (
        f'name = "r"\n[model]\npath = "{demo_model}"\n[control]\ndt_s = 0.05\n'
        '[joints.gripper]\nrecorded = "gripper.pos"\nunit = "pct"\n'
        "range_rad = [-0.17, 1.74]\ngripper = true\n"
    )
    if bad:
        import numpy as np

        write_lerobot_v3(
            tmp_path / "ds",
            [{"action": np.zeros((5, 1)), "observation.state": np.zeros((5, 1))}],
            fps=20,
            names=["gripper.pos"],
            task="x",
            robot_type="x",
        )
        text += '[evidence]\ndataset = "ds"\n'
    rig.write_text(text)
    with pytest.raises(InputError) as e:
        rig_dataset(load_rig(rig))
    msg = str(e.value)
    assert ("at least 2 episodes" in msg) if bad else ("evidence.dataset" in msg)
    assert "Fix:" in msg or "fix" in msg.lower()


def test_sentence_says_how_a_family_was_missed() -> None:
    truth = _truth({"kp": {"a": 0.5, "b": 0.5}, "force_limit": {"a": 0.6}})
    fig = _figures(params_interval={"a": {"kp": [900.0, 1100.0]}, "b": {"kp": [950.0, 1050.0]}})
    rows = recovery_table(score_cells("trial-01", truth, fig, FAMILIES), FAMILIES)
    text = sentence(rows)
    assert "kp (missed 2 of 2: the truth outside the stated interval)" in text
    assert "force_limit (missed 1 of 1: nothing stated)" in text
    assert "sees none of the planted families" in text


def test_the_page_shows_the_table_beside_the_real_diagnosis() -> None:
    from simgap.report.selftest import render_selftest
    from simgap.selftest.plan import Plan, Trial
    from simgap.selftest.run import real_beside

    truth = _truth({"delay_s": 0.05})
    rows = recovery_table(
        score_cells(
            "trial-01",
            truth,
            _figures(delay_interval_s={"a": [0.04, 0.06], "b": [0.04, 0.06]}),
            FAMILIES,
        ),
        FAMILIES,
    )
    real = {
        "findings": [
            {
                "branch": "actuator",
                "kind": "joint_dynamics",
                "figures": {
                    "delay_s": {"a": 0.031, "b": 0.03},
                    "delay_interval_s": {"a": [0.02, 0.04], "b": [0.02, 0.04]},
                    "params": {"a": {}, "b": {}},
                    "params_interval": {"a": {}, "b": {}},
                    "not_identifiable": {"a": {"damping": "spans x40"}, "b": {"delay": "ridge"}},
                },
            }
        ]
    }
    side = real_beside(real, rows)
    assert side["delay"] == {"a": "31 ms [20, 40]", "b": "declared not identifiable"}
    assert side["damping"]["a"] == "declared not identifiable"
    assert side["kp"]["b"] == "not stated"
    assert real_beside(None, rows) == {}
    plan = Plan(
        (Trial("null", 0), Trial("trial-01", 1, {"delay_s": 0.05})),
        FAMILIES,
        {},
        {"camera": "<b>no frames</b>"},
        0,
    )
    doc = {
        "rig": "<script>x</script>",
        "sentence": sentence(rows),
        "plan": plan.to_dict(),
        "families": [r.to_dict() for r in rows],
        "gap": {"text": "none"},
        "real_diagnosis": side,
        "seed": 0,
        "backend": "local",
        "wall_s": 1.0,
        "trials": [
            {"name": "null", "status": "done", "error": "", "implicated": [], "gap": None},
            {
                "name": "trial-01",
                "status": "done",
                "error": "",
                "implicated": ["actuator: Actuator dynamics"],
                "gap": {
                    "mae_nominal_rad": 0.01,
                    "mae_truth_rad": 0.001,
                    "mae_patch_rad": 0.002,
                    "closed": 0.9,
                    "patch_offered": True,
                },
            },
        ],
    }
    page = render_selftest(doc)
    assert "beside the real diagnosis" in page and "a: 31 ms [20, 40]" in page
    assert "<script>x" not in page and "&lt;b&gt;no frames" in page
    assert "delay 50 ms" in page and "90 %" in page
    assert "beside the real diagnosis" not in render_selftest({**doc, "real_diagnosis": {}})


def test_the_package_names_resolve_lazily() -> None:
    import simgap.selftest as st

    assert sorted(st.__all__) == sorted(st._WHERE)
    for name in st.__all__:
        assert getattr(st, name) is not None
    with pytest.raises(AttributeError, match="valid names: Cell"):
        st.nothing_here  # noqa: B018
