"""lerobot-eval's ``eval_info.json``, in every layout LeRobot writes, as trial outcomes.

Layouts (what ``eval_main`` dumps with ``json.dump(info, f, indent=2)``):

- ``per_task`` (LeRobot 0.4 to 0.6, ``eval_policy_all`` in lerobot/scripts/lerobot_eval.py)::

      {"per_task": [{"task_group", "task_id", "metrics": {"sum_rewards": [...],
                     "max_rewards": [...], "successes": [bool, ...], "video_paths": [...]}}],
       "per_group": {group: {"avg_sum_reward", "avg_max_reward", "pc_success",
                             "n_episodes", "video_paths"}},
       "overall": {"avg_sum_reward", ..., "pc_success", "n_episodes", "eval_s", "eval_ep_s"}}

  One trial per entry of ``successes``, tasks in file order. The per-episode rows with the
  environment seeds exist only inside ``eval_policy``'s return and are not written, so these
  trials cannot be paired by initial state.
- ``per_group`` / ``overall`` only (a trimmed file): counts from ``pc_success`` and
  ``n_episodes``; no per-trial outcomes at all.
- ``per_episode`` (older LeRobot, ``lerobot/scripts/eval.py``): rows ``{episode_ix,
  sum_reward, max_reward, success, seed}`` next to ``aggregated``; the seed identifies the
  initial state, so two runs with the same seeds pair trial by trial.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.validate import read_json

NO_SEEDS = (
    "{layout} layout of lerobot-eval's eval_info.json records no environment seeds, "
    "so its trials cannot be paired by initial state: paired tests (McNemar) are not "
    "available and the runs are compared as independent samples"
)


@dataclass(frozen=True)
class EvalOutcome:
    """One trial of an eval_info.json: ``success`` and the environment seed (None: unknown)."""

    success: bool
    seed: int | None = None


@dataclass(frozen=True)
class EvalInfo:
    """Outcomes of one lerobot-eval run.

    Attributes:
        source: the file.
        layout: ``"per_task"``, ``"overall"`` or ``"per_episode"`` (see the module docstring).
        outcomes: per-trial outcomes, in file order (empty for ``"overall"``).
        successes: number of successes.
        n_trials: number of episodes.
        tasks: ``"<task_group>/<task_id>"`` of each task, in file order (``per_task``).
        pairing_note: why the trials cannot be paired by initial state; None when every
            trial has a seed.
    """

    source: Path
    layout: str
    outcomes: tuple[EvalOutcome, ...]
    successes: int
    n_trials: int
    tasks: tuple[str, ...] = ()
    pairing_note: str | None = None


def read_eval_info(path: str | Path) -> EvalInfo:
    """Read an ``eval_info.json`` in any of LeRobot's layouts.

    Raises:
        InputError: not JSON, no known layout, a success that is not a boolean, or counts
            that disagree with the per-task lists.
    """
    path = Path(path)
    data = read_json(path, "lerobot-eval's eval_info.json")
    if not isinstance(data, Mapping):
        raise InputError(file=path, expected="a JSON object", got=type(data).__name__)
    if isinstance(data.get("per_episode"), list) and data["per_episode"]:
        return _per_episode(path, data["per_episode"])
    if isinstance(data.get("per_task"), list) and data["per_task"]:
        return _per_task(path, data["per_task"], data.get("overall"))
    if isinstance(data.get("overall"), Mapping):
        s, n = _counts(path, "overall", data["overall"])
        return EvalInfo(
            source=path,
            layout="overall",
            outcomes=(),
            successes=s,
            n_trials=n,
            pairing_note=NO_SEEDS.format(layout="the overall-only"),
        )
    raise InputError(
        file=path,
        field="per_task",
        expected="lerobot-eval's layout: per_task/per_group/overall (LeRobot "
        "0.4-0.6) or per_episode (older)",
        got="keys " + ", ".join(sorted(map(str, data))) if data else "{}",
        fix="pass the eval_info.json lerobot-eval wrote in its output_dir",
    )


def _success(path: Path, field: str, v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)) and v in (0, 1):  # numpy bools dumped as 0/1 by some tools
        return bool(v)
    raise InputError(file=path, field=field, expected="true or false", got=v)


def _per_episode(path: Path, rows: list[Any]) -> EvalInfo:
    out = []
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise InputError(file=path, field=f"per_episode[{i}]", expected="an object", got=r)
        ok = _success(path, f"per_episode[{i}].success", r.get("success"))
        seed = r.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise InputError(
                file=path, field=f"per_episode[{i}].seed", expected="an integer or null", got=seed
            )
        out.append(EvalOutcome(success=ok, seed=seed))
    note = None
    if any(o.seed is None for o in out):
        missing = sum(o.seed is None for o in out)
        note = (
            f"{missing} of {len(out)} per_episode rows of the eval_info.json have no seed, "
            "so the trials cannot be paired by initial state: paired tests (McNemar) are "
            "not available and the runs are compared as independent samples"
        )
    return EvalInfo(
        source=path,
        layout="per_episode",
        outcomes=tuple(out),
        successes=sum(o.success for o in out),
        n_trials=len(out),
        pairing_note=note,
    )


def _per_task(path: Path, rows: list[Any], overall: Any) -> EvalInfo:
    out: list[EvalOutcome] = []
    tasks = []
    for i, r in enumerate(rows):
        f = f"per_task[{i}]"
        metrics = r.get("metrics") if isinstance(r, Mapping) else None
        if not isinstance(metrics, Mapping) or "successes" not in metrics:
            raise InputError(
                file=path,
                field=f"{f}.metrics.successes",
                expected="the task's per-episode successes",
                got=r,
            )
        succ = metrics["successes"]
        items = succ if isinstance(succ, list) else [succ]
        out.extend(
            EvalOutcome(success=_success(path, f"{f}.metrics.successes[{j}]", v))
            for j, v in enumerate(items)
        )
        tasks.append(f"{r.get('task_group', '?')}/{r.get('task_id', '?')}")
    if isinstance(overall, Mapping) and "n_episodes" in overall:
        n = overall["n_episodes"]
        if n != len(out):
            raise InputError(
                file=path,
                field="overall.n_episodes",
                expected=f"{len(out)} (the per_task successes)",
                got=n,
            )
    return EvalInfo(
        source=path,
        layout="per_task",
        outcomes=tuple(out),
        successes=sum(o.success for o in out),
        n_trials=len(out),
        tasks=tuple(tasks),
        pairing_note=NO_SEEDS.format(layout="the per_task"),
    )


def _counts(path: Path, field: str, block: Mapping[str, Any]) -> tuple[int, int]:
    n, pc = block.get("n_episodes"), block.get("pc_success")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(
            file=path, field=f"{field}.n_episodes", expected="a positive integer", got=n
        )
    if isinstance(pc, bool) or not isinstance(pc, (int, float)) or not 0 <= pc <= 100:
        raise InputError(
            file=path, field=f"{field}.pc_success", expected="a percentage 0..100", got=pc
        )
    s = round(pc / 100 * n)
    if abs(s / n * 100 - pc) > 1e-6 * max(1.0, pc):
        raise InputError(
            file=path,
            field=f"{field}.pc_success",
            expected=f"a multiple of 100/{n} (successes out of {n} episodes)",
            got=pc,
        )
    return int(s), n
