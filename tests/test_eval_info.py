"""eval_info.json in each layout lerobot-eval writes, and what ``simgap compare`` says of it.

The real LeRobot 0.6.1 writes its file in tests/lerobot_real/; here ``lerobot_06_layout``
is a stand-in that copies the dict ``eval_policy_all`` returns and ``eval_main`` dumps
(lerobot/scripts/lerobot_eval.py, LeRobot 0.6.1; the same keys in 0.4.4).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from simgap.cli import app
from simgap.errors import InputError
from simgap.evaluation.protocol import compare
from simgap.evidence.eval_info import read_eval_info
from simgap.evidence.manifest import read_manifest


def lerobot_06_layout(tasks: dict[tuple[str, int], list[bool]]) -> dict:
    """The per_task / per_group / overall dict of LeRobot 0.6.1's ``eval_policy_all``."""
    per_task, groups, every = [], {}, []
    for (group, tid), succ in tasks.items():
        per_task.append(
            {
                "task_group": group,
                "task_id": tid,
                "metrics": {
                    "sum_rewards": [float(s) for s in succ],
                    "max_rewards": [float(s) for s in succ],
                    "successes": succ,
                    "video_paths": [],
                    "predicted_video_paths": [],
                },
            }
        )
        groups.setdefault(group, []).extend(succ)
        every.extend(succ)

    def agg(xs: list[bool]) -> dict:
        return {
            "avg_sum_reward": float(np.mean(xs)),
            "avg_max_reward": float(np.mean(xs)),
            "pc_success": float(np.mean(xs)) * 100,
            "n_episodes": len(xs),
            "video_paths": [],
        }

    return {
        "per_task": per_task,
        "per_group": {g: agg(x) for g, x in groups.items()},
        "overall": {**agg(every), "eval_s": 1.0, "eval_ep_s": 0.1, "predicted_video_paths": []},
    }


def manifest(tmp: Path, name: str, eval_info: dict, kind: str = "sim") -> Path:
    (tmp / f"{name}.json").write_text(json.dumps(eval_info, indent=2))
    env = 'model = "pusht"\ncommit = "abc123"' if kind == "sim" else 'rig = "bench-1"'
    p = tmp / f"{name}.toml"
    p.write_text(
        f'[policy]\ncheckpoint = "c"\nsha256 = "abcdef0123"\n[environment]\n'
        f'kind = "{kind}"\n{env}\n[initial_states]\ngenerator = "lerobot-env-seed"\n'
        f'seed = 1000\nhash = "seeds-1000"\n[success]\npredicate = "is_success"\n'
        f'judge = "automatic"\n[outcomes]\nlerobot_eval_info = "{name}.json"\n'
    )
    return p


def test_per_task_layout_counts_every_episode_and_says_it_cannot_pair(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    runs = {}
    for name, p in (("a", 0.8), ("b", 0.4)):
        tasks = {
            ("libero_10", i): [bool(v) for v in rng.random(int(rng.integers(3, 9))) < p]
            for i in range(3)
        }
        runs[name] = (tasks, manifest(tmp_path, name, lerobot_06_layout(tasks)))
    tasks_a, path_a = runs["a"]
    info = read_eval_info(tmp_path / "a.json")
    every = [s for v in tasks_a.values() for s in v]
    assert info.layout == "per_task" and info.n_trials == len(every)
    assert [o.success for o in info.outcomes] == every and info.successes == sum(every)
    assert info.tasks == ("libero_10/0", "libero_10/1", "libero_10/2")
    assert all(o.seed is None for o in info.outcomes)
    assert info.pairing_note is not None and "no environment seeds" in info.pairing_note
    m = read_manifest(path_a)
    assert (m.successes, m.n_trials) == (sum(every), len(every))
    result = compare(m, read_manifest(runs["b"][1]))
    assert result["paired"] == {"available": False, "reason": info.pairing_note}
    assert result["tests"]["mcnemar"] is None
    out = CliRunner().invoke(app, ["compare", str(path_a), str(runs["b"][1])])
    assert out.exit_code == 0, out.output
    assert "unpaired" in out.output and "McNemar" in out.output


def test_per_episode_layout_with_seeds_pairs(tmp_path: Path) -> None:
    def old(succ: list[bool]) -> dict:
        return {
            "per_episode": [
                {
                    "episode_ix": i,
                    "sum_reward": 0.0,
                    "max_reward": 0.0,
                    "success": s,
                    "seed": 1000 + i,
                }
                for i, s in enumerate(succ)
            ],
            "aggregated": {"pc_success": 100 * float(np.mean(succ))},
        }

    a = manifest(tmp_path, "a", old([True, True, False, True, False]))
    b = manifest(tmp_path, "b", old([True, False, False, False, False]), kind="real")
    result = compare(read_manifest(a), read_manifest(b))
    assert result["paired"] == {"available": True, "reason": None}
    assert result["tests"]["mcnemar"] == {"pairs": 5, "a_only": 2, "b_only": 0}
    unseeded = old([True, False])
    unseeded["per_episode"][1]["seed"] = None
    (tmp_path / "u.json").write_text(json.dumps(unseeded))
    note = read_eval_info(tmp_path / "u.json").pairing_note
    assert note is not None and note.startswith("1 of 2 per_episode rows")


def test_overall_only_gives_counts(tmp_path: Path) -> None:
    full = lerobot_06_layout({("pusht", 0): [True, False, True, True]})
    (tmp_path / "o.json").write_text(json.dumps({"overall": full["overall"]}))
    info = read_eval_info(tmp_path / "o.json")
    assert (info.layout, info.successes, info.n_trials, info.outcomes) == ("overall", 3, 4, ())
    m = read_manifest(manifest(tmp_path, "m", {"overall": full["overall"]}))
    assert (m.successes, m.n_trials, m.trials) == (3, 4, ())


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d["overall"].update(n_episodes=9), "'overall.n_episodes'"),
        (
            lambda d: d["per_task"][0]["metrics"].update(successes=["yes"]),
            r"'per_task\[0\].metrics.successes\[0\]'",
        ),
        (
            lambda d: d.pop("per_task") and d["overall"].update(pc_success=33.0),
            "'overall.pc_success'",
        ),
        (lambda d: [d.pop(k) for k in list(d)] and d.update(results=[]), "per_task/per_group"),
    ],
)
def test_malformed_files_name_the_field(tmp_path: Path, mutate, match: str) -> None:
    d = lerobot_06_layout({("pusht", 0): [True, False, True, True]})
    mutate(d)
    (tmp_path / "e.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match=match):
        read_eval_info(tmp_path / "e.json")
