"""Comparability of two evaluation runs, and the statistics of their difference.

Two success rates measure the same task only when four things match: the initial states,
the success predicate (its reference and threshold), who judges it, and the policy
checkpoint (by content hash). A difference in any of these is a *different task, not a
gap*. Everything else that differs is a *variable* (the environment, sim vs real, is the
one a sim-to-real comparison means to change); more than one changed variable means the
difference cannot be put on any one of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from simgap.evaluation import stats
from simgap.evaluation.sequential import sequential_test
from simgap.values.manifest import Manifest

MUST_MATCH = (
    "initial_states",
    "success.predicate",
    "success.threshold",
    "success.judge",
    "policy.sha256",
)
DIFFERENT_TASK = "different task, not a gap"


def states_hash(states: Sequence[Sequence[float]]) -> str:
    """The canonical hash of a state list: sha256 of its compact JSON, values rounded to 1e-6.

    ``json.dumps([[round(v, 6) for v in s] for s in states], separators=(",", ":"))``,
    UTF-8, hex digest. Write this into ``initial_states.hash`` for a generated list.
    """
    canon = [[round(float(v), 6) for v in s] for s in states]
    return hashlib.sha256(json.dumps(canon, separators=(",", ":")).encode()).hexdigest()


def _states_key(m: Manifest) -> dict[str, Any]:
    if m.states is not None:
        return {"hash": states_hash(m.states), "n": len(m.states)}
    return {"generator": m.generator, "seed": m.generator_seed, "hash": m.states_hash}


def _states_equal(a: Manifest, b: Manifest) -> bool:
    ka, kb = _states_key(a), _states_key(b)
    if a.states is not None and b.states is not None:
        return ka["hash"] == kb["hash"]
    if a.states is None and b.states is None:
        return ka == kb
    return ka["hash"] == kb["hash"]  # a list against a declared generated-list hash


def _show_states(m: Manifest) -> str:
    if m.states is not None:
        return f"{len(m.states)} listed states (hash {states_hash(m.states)[:12]})"
    return f"generator {m.generator} seed {m.generator_seed} (hash {str(m.states_hash)[:12]})"


def differences(a: Manifest, b: Manifest) -> list[dict[str, Any]]:
    """Every difference between two manifests: ``[{"item", "a", "b", "must_match"}]``."""
    out: list[dict[str, Any]] = []

    def add(item: str, va: Any, vb: Any, must: bool) -> None:
        out.append({"item": item, "a": va, "b": vb, "must_match": must})

    if not _states_equal(a, b):
        add("initial_states", _show_states(a), _show_states(b), True)
    for item, va, vb in (
        ("success.predicate", a.predicate, b.predicate),
        ("success.threshold", a.threshold, b.threshold),
        ("success.judge", a.judge, b.judge),
        ("policy.sha256", a.sha256, b.sha256),
    ):
        if va != vb:
            add(item, va, vb, True)
    for item, va, vb in (
        ("policy.checkpoint", a.checkpoint, b.checkpoint),
        ("environment.kind", a.kind, b.kind),
        ("environment.model", a.model, b.model),
        ("environment.commit", a.commit, b.commit),
        ("environment.rig", a.rig, b.rig),
    ):
        if va != vb:
            add(item, va, vb, False)
    for key in sorted(set(a.conditions) | set(b.conditions)):
        va, vb = a.conditions.get(key), b.conditions.get(key)
        if va != vb:
            add(f"conditions.{key}", va, vb, False)
    return out


def changed_variables(mismatches: Sequence[dict[str, Any]]) -> list[str]:
    """The variables that changed (environment counted once), ignoring must-match items.

    ``policy.checkpoint`` (a path) is not a variable: the hash says whether the policy is
    the same.
    """
    names: list[str] = []
    for m in mismatches:
        if m["must_match"] or m["item"] == "policy.checkpoint":
            continue
        name = "environment" if m["item"].startswith("environment.") else m["item"]
        if name not in names:
            names.append(name)
    return names


def _paired(a: Manifest, b: Manifest) -> tuple[list[bool], list[bool]] | None:
    """Outcomes paired by initial state, when each state was run once in both runs."""
    ia = [t.initial_state for t in a.trials]
    ib = [t.initial_state for t in b.trials]
    if (
        not ia
        or None in ia
        or None in ib
        or len(set(ia)) != len(ia)
        or set(ia) != set(ib)
        or len(set(ib)) != len(ib)
    ):
        return None
    ob = {t.initial_state: t.success for t in b.trials}
    return [t.success for t in a.trials], [ob[t.initial_state] for t in a.trials]


def compare(
    a: Manifest, b: Manifest, names: tuple[str, str] = ("a", "b"), conf: float = 0.95
) -> dict[str, Any]:
    """The comparability check and the statistics, as the ``simgap compare`` JSON dict.

    Keys: ``comparable``, ``verdict``, ``mismatches``, ``changed_variables``,
    ``more_than_one_variable``, ``message``, ``rates`` {name: rate_summary},
    ``tests`` {fisher_p, barnard_p, boschloo_p, p_a_better, difference, newcombe,
    mcnemar_p, mcnemar, sequential}.
    """
    mism = differences(a, b)
    must = [m for m in mism if m["must_match"]]
    variables = changed_variables(mism)
    comparable = not must
    msgs = []
    if must:
        msgs.append(
            f"{DIFFERENT_TASK}: the runs differ in "
            + ", ".join(m["item"] for m in must)
            + "; the difference in success rate is not a sim-to-real gap"
        )
    if len(variables) > 1:
        msgs.append(
            "more than one variable changed ("
            + ", ".join(variables)
            + "); the difference cannot be put on any one of them"
        )
    if comparable and len(variables) <= 1:
        msgs.append(
            "comparable: initial states, success predicate, judge and checkpoint "
            "match" + (f"; one variable changed ({variables[0]})" if variables else "")
        )
    sa, na, sb, nb = a.successes, a.n_trials, b.successes, b.n_trials
    paired = _paired(a, b)
    mc = stats.mcnemar(*paired) if paired else None
    rounds = paired
    if rounds is None and a.trials and len(a.trials) == len(b.trials):
        rounds = ([t.success for t in a.trials], [t.success for t in b.trials])
    seq = sequential_test(*rounds) if rounds else None
    unpaired_why = (
        None
        if paired
        else (
            a.pairing_note
            or b.pairing_note
            or "the runs do not share initial states trial by trial: paired tests (McNemar) are "
            "not available"
        )
    )
    tests: dict[str, Any] = {
        "fisher_p": stats.fisher_p(sa, na, sb, nb),
        "barnard_p": stats.barnard_p(sa, na, sb, nb),
        "boschloo_p": stats.boschloo_p(sa, na, sb, nb),
        "p_a_better": stats.p_a_better(sa, na, sb, nb),
        "difference": sa / na - sb / nb,
        "newcombe": list(stats.newcombe(sa, na, sb, nb, conf)),
        "mcnemar_p": None if mc is None else mc.p_value,
        "mcnemar": None
        if mc is None
        else {"pairs": mc.pairs, "a_only": mc.a_only, "b_only": mc.b_only},
        "sequential": None if seq is None else seq.to_dict(),
    }
    return {
        "comparable": comparable,
        "verdict": "comparable" if comparable else DIFFERENT_TASK,
        "mismatches": mism,
        "changed_variables": variables,
        "more_than_one_variable": len(variables) > 1,
        "message": "; ".join(msgs),
        "runs": {
            names[0]: str(a.source) if a.source else a.name,
            names[1]: str(b.source) if b.source else b.name,
        },
        "rates": {
            names[0]: stats.rate_summary(sa, na, conf),
            names[1]: stats.rate_summary(sb, nb, conf),
        },
        "tests": tests,
        "paired": {"available": paired is not None, "reason": unpaired_why},
        "conventions": {
            "difference": f"{names[0]} - {names[1]}",
            "p_a_better": f"P(rate {names[0]} > rate {names[1]}) under "
            "independent uniform Beta(1, 1) priors",
            "tests": "two-sided; Barnard with the pooled Wald statistic",
            "mcnemar": "exact, on trials paired by initial state; null when the "
            "runs do not share initial states trial by trial",
            "sequential": "anytime-valid e-process over rounds (paired by initial "
            "state, else in recorded order when the runs have "
            "equally many trials); null otherwise",
        },
    }
