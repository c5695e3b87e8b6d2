"""Protocol manifests, eval_info.json, the comparability check and the diagnose report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

from simgap.diagnose import comparability_from_rig
from simgap.errors import InputError
from simgap.evaluation.protocol import compare
from simgap.evidence.manifest import read_eval_info, read_manifest
from simgap.rig import load_rig
from tests.factories import write_rig

STATES = [[0.25, 0.0, 0.0], [0.22, 0.05, 0.0], [0.20, 0.0, 0.1], [0.24, -0.05, 0.0]]


def manifest_text(
    kind: str = "sim",
    outcomes: tuple[bool, ...] = (True, True, True, False),
    judge: str = "automatic",
    sha: str = "9f2c1a7e0b",
    extra: str = "",
    states: str | None = None,
) -> str:
    env = 'model = "so101_demo.xml"\ncommit = "abc123"' if kind == "sim" else 'rig = "bench-1"'
    st = states if states is not None else f"states = {json.dumps(STATES)}"
    trials = "".join(
        f"[[trials]]\nsuccess = {str(o).lower()}\ninitial_state = {i}\n"
        for i, o in enumerate(outcomes)
    )
    sha_line = f'sha256 = "{sha}"\n' if sha else ""
    return (
        f'[policy]\ncheckpoint = "ckpt/005000/model.safetensors"\n{sha_line}'
        f'[environment]\nkind = "{kind}"\n{env}\n[initial_states]\n{st}\n'
        f'[success]\npredicate = "cube_in_bin"\nthreshold = 0.02\njudge = "{judge}"\n'
        f"{extra}{trials}"
    )


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_toml_and_json_alike(tmp_path: Path) -> None:
    m = read_manifest(write(tmp_path, "sim.toml", manifest_text()))
    assert (m.kind, m.successes, m.n_trials, m.judge, m.threshold) == (
        "sim",
        3,
        4,
        "automatic",
        0.02,
    )
    assert m.states is not None and m.states[1] == (0.22, 0.05, 0.0)
    assert m.trials[3].initial_state == 3 and m.trials[3].success is False
    raw = {
        "policy": {"checkpoint": "c", "sha256": "abcdef0123"},
        "environment": {"kind": "real", "rig": "bench-1"},
        "initial_states": {"states": STATES},
        "success": {"predicate": "cube_in_bin", "judge": "human:ana"},
        "outcomes": {"successes": 2, "trials": 5},
    }
    j = read_manifest(write(tmp_path, "real.json", json.dumps(raw)))
    assert (j.kind, j.rig, j.successes, j.n_trials, j.trials) == ("real", "bench-1", 2, 5, ())


def test_missing_checkpoint_hash_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'policy.sha256'"):
        read_manifest(write(tmp_path, "m.toml", manifest_text(sha="")))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (manifest_text(judge="someone"), "'success.judge'"),
        (manifest_text(kind="lab"), "'environment.kind'"),
        (manifest_text().replace('commit = "abc123"\n', ""), "'environment.commit'"),
        (manifest_text(extra="[outcomes]\nsuccesses = 3\ntrials = 4\n"), "not both"),
        (
            manifest_text(outcomes=()) + "[outcomes]\nsuccesses = 7\ntrials = 4\n",
            "'outcomes.successes'.*trials fewer than successes",
        ),
        (manifest_text(outcomes=()), "'trials'"),
        (manifest_text() + '[[trials]]\nsuccess = false\nphase = "flying"\n', "phase"),
        (manifest_text() + "[[trials]]\nsuccess = true\ninitial_state = 9\n", "initial_state"),
        (manifest_text(states='generator = "uniform_square"\nseed = 3'), "'initial_states.hash'"),
        ("[policy]\ncheckpoint = 'c'\nsha256 = 'abcdef12'\n[lighting]\nlux = 3\n", "'lighting'"),
    ],
)
def test_bad_manifests(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        read_manifest(write(tmp_path, "m.toml", text))


def test_eval_info_reads_into_outcomes(tmp_path: Path) -> None:
    info = {
        "per_episode": [
            {
                "episode_ix": i,
                "sum_reward": float(i),
                "max_reward": 1.0,
                "success": i % 3 != 0,
                "seed": 1000 + i,
            }
            for i in range(6)
        ],
        "aggregated": {"avg_sum_reward": 2.5, "avg_max_reward": 1.0, "pc_success": 66.67},
    }
    p = write(tmp_path, "eval_info.json", json.dumps(info))
    trials = read_eval_info(p)
    assert [t.success for t in trials] == [False, True, True, False, True, True]
    assert [t.initial_state for t in trials] == list(range(1000, 1006))
    text = (
        manifest_text(
            outcomes=(),
            states='generator = "lerobot-env-seed"\nseed = 1000\nhash = "seeds-1000-1005"',
        )
        + "[outcomes]\nlerobot_eval_info = "
        '"eval_info.json"\n'
    )
    m = read_manifest(write(tmp_path, "m.toml", text))
    assert (m.successes, m.n_trials) == (4, 6)
    with pytest.raises(InputError, match="per_episode"):
        read_eval_info(write(tmp_path, "bad.json", json.dumps({"aggregated": {}})))


def test_comparable_runs_and_their_statistics(tmp_path: Path) -> None:
    sim = read_manifest(
        write(tmp_path, "sim.toml", manifest_text(outcomes=(True, True, True, False)))
    )
    real = read_manifest(
        write(
            tmp_path, "real.toml", manifest_text(kind="real", outcomes=(True, False, False, False))
        )
    )
    d = compare(sim, real)
    assert d["comparable"] is True and d["changed_variables"] == ["environment"]
    assert not d["more_than_one_variable"]
    assert {m["item"] for m in d["mismatches"]} == {
        "environment.kind",
        "environment.model",
        "environment.commit",
        "environment.rig",
    }
    assert d["rates"]["a"]["rate"] == 0.75 and d["rates"]["b"]["rate"] == 0.25
    t = d["tests"]
    assert t["fisher_p"] == pytest.approx(stats.fisher_exact([[3, 1], [1, 3]]).pvalue)
    assert t["barnard_p"] == pytest.approx(stats.barnard_exact([[3, 1], [1, 3]]).pvalue)
    # Paired by initial state: A only in states 1 and 2, B only in none.
    assert t["mcnemar"] == {"pairs": 4, "a_only": 2, "b_only": 0}
    assert t["mcnemar_p"] == pytest.approx(sm_mcnemar([[1, 2], [0, 1]], exact=True).pvalue)
    assert 0.5 < t["p_a_better"] < 1.0


def test_must_match_items_make_a_different_task(tmp_path: Path) -> None:
    sim = read_manifest(write(tmp_path, "sim.toml", manifest_text()))
    real = read_manifest(
        write(
            tmp_path,
            "real.toml",
            manifest_text(
                kind="real",
                judge="human:ana",
                sha="1234abcd99",
                outcomes=(True, False, False),
                states=f"states = {json.dumps(STATES[:3])}",
                extra='[conditions]\nlighting = "window"\n',
            ),
        )
    )
    d = compare(sim, real)
    assert d["comparable"] is False and d["verdict"] == "different task, not a gap"
    must = {m["item"] for m in d["mismatches"] if m["must_match"]}
    assert must == {"initial_states", "success.judge", "policy.sha256"}
    assert d["more_than_one_variable"] is True
    assert d["changed_variables"] == ["environment", "conditions.lighting"]
    assert "more than one variable" in d["message"]
    assert d["tests"]["mcnemar_p"] is None  # the runs do not share their states


def test_listed_states_match_a_generator_hash(tmp_path: Path) -> None:
    canon = json.dumps([[round(v, 6) for v in s] for s in STATES], separators=(",", ":"))
    digest = hashlib.sha256(canon.encode()).hexdigest()
    gen = f'generator = "uniform_square"\nseed = 3\nhash = "{digest}"'
    a = read_manifest(write(tmp_path, "a.toml", manifest_text(states=gen, outcomes=(True,))))
    b = read_manifest(write(tmp_path, "b.toml", manifest_text(kind="real", outcomes=(False,))))
    assert compare(a, b)["comparable"] is True
    wrong = gen.replace(digest, "0" * 64)
    c = read_manifest(write(tmp_path, "c.toml", manifest_text(states=wrong, outcomes=(True,))))
    assert compare(c, b)["comparable"] is False


def test_diagnose_report_opens_with_comparability(tmp_path: Path, demo_model: Path) -> None:
    from simgap.diagnose import diagnose_rig

    write(tmp_path, "sim.toml", manifest_text())
    write(
        tmp_path,
        "real.toml",
        manifest_text(kind="real", judge="human:ana", outcomes=(True, False, False, False)),
    )
    rig_path = write_rig(
        tmp_path, demo_model, '[evidence]\nsim_manifest = "sim.toml"\nreal_manifest = "real.toml"\n'
    )
    comp = comparability_from_rig(load_rig(rig_path))
    assert comp is not None and comp["comparable"] is False
    assert set(comp["rates"]) == {"simulated", "real"}
    assert comp["rates"]["real"]["wilson"][0] >= 0.0
    diagnose_rig(rig_path, tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "measure different tasks" in html and "success.judge" in html
    # Not comparable: the check is a banner above everything else, the headline included.
    assert html.index('id="comparability"') < html.index('id="headline"')
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert findings["comparability"]["comparable"] is False
    assert comparability_from_rig(load_rig(write_rig(tmp_path / "r2", demo_model))) is None


def test_compare_runs_the_sequential_test_on_paired_rounds(tmp_path: Path) -> None:
    n = 12
    states = f"states = {json.dumps([[0.2 + 0.01 * i, 0.0, 0.0] for i in range(n)])}"
    a = read_manifest(write(tmp_path, "a.toml", manifest_text(outcomes=(True,) * n, states=states)))
    b = read_manifest(
        write(tmp_path, "b.toml", manifest_text(kind="real", outcomes=(False,) * n, states=states))
    )
    seq = compare(a, b)["tests"]["sequential"]
    # Every round discordant for A: E after m rounds = 2^m / (m + 1) first >= 20 at m = 8.
    assert (seq["decision"], seq["stopped_at"]) == ("a_better", 8)
