"""Protocol manifest reader: one evaluation run (TOML or JSON) -> a frozen ``Manifest``.

The format is documented in docs/evaluation.md. Outcomes come from ``[[trials]]`` tables,
from a ``[outcomes]`` summary (``successes``, ``trials``), or from a lerobot-eval
``eval_info.json`` named by ``[outcomes] lerobot_eval_info``. The reader validates and
converts; it never compares or computes statistics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.evidence import eval_info as _eval_info
from simgap.validate import parse_json, parse_toml, read_text
from simgap.values.manifest import PHASES, Manifest, Trial

_JUDGE = re.compile(r"^(automatic|human:.+|model:.+)$")
_SECTIONS: dict[str, tuple[str, ...]] = {
    "policy": ("checkpoint", "sha256"),
    "environment": ("kind", "model", "commit", "rig"),
    "initial_states": ("states", "generator", "seed", "hash"),
    "success": ("predicate", "threshold", "judge"),
    "outcomes": ("successes", "trials", "lerobot_eval_info"),
    "conditions": (),
    "trials": (),
    "name": (),
}


def read_manifest(path: str | Path) -> Manifest:
    """Read a ``.toml`` or ``.json`` protocol manifest.

    Raises:
        InputError: unreadable file, unknown section or key, a missing required field
            (e.g. ``policy.sha256``), or a malformed value; the message names the field.
    """
    path = Path(path)
    text = read_text(path, "a TOML or JSON manifest")
    if path.suffix.lower() == ".json":
        raw = parse_json(text, path, "a TOML or JSON manifest")
    else:
        raw = parse_toml(text, path, "a TOML or JSON manifest")
    if not isinstance(raw, dict):
        raise InputError(file=path, expected="a table at the top level", got=type(raw).__name__)
    return manifest_from_dict(raw, source=path)


def _get(
    raw: Mapping[str, Any],
    section: str,
    key: str,
    types: tuple[type, ...],
    source: Path | None,
    required: bool,
    fix: str | None = None,
) -> Any:
    sec = raw.get(section, {})
    if key not in sec:
        if required:
            raise InputError(
                file=source,
                field=f"{section}.{key}",
                expected=f"a {section}.{key} entry",
                got="nothing",
                fix=fix or f"add {key} under [{section}]",
            )
        return None
    v = sec[key]
    if isinstance(v, bool) and bool not in types or not isinstance(v, types):
        names = " or ".join(t.__name__ for t in types)
        raise InputError(file=source, field=f"{section}.{key}", expected=names, got=v)
    return v


def manifest_from_dict(raw: Mapping[str, Any], source: Path | None = None) -> Manifest:
    """Validate a parsed manifest mapping and build the ``Manifest``."""
    for sec, val in raw.items():
        if sec not in _SECTIONS:
            raise InputError(
                file=source,
                field=sec,
                expected="a known manifest section",
                got=sec,
                fix="use: " + ", ".join(k for k in _SECTIONS if k),
            )
        if sec in ("trials", "name"):
            continue
        if not isinstance(val, dict):
            raise InputError(
                file=source, field=sec, expected=f"a [{sec}] table", got=type(val).__name__
            )
        for key in val:
            if _SECTIONS[sec] and key not in _SECTIONS[sec]:
                raise InputError(
                    file=source,
                    field=f"{sec}.{key}",
                    expected=f"a key of [{sec}]",
                    got=key,
                    fix="use one of: " + ", ".join(_SECTIONS[sec]),
                )
    s = str
    checkpoint = _get(raw, "policy", "checkpoint", (s,), source, True)
    sha = _get(
        raw,
        "policy",
        "sha256",
        (s,),
        source,
        True,
        fix="add the checkpoint's content hash, e.g. sha256 = \"<sha256sum of the "
        'weights file>"; without it two runs cannot be shown to use one policy',
    )
    if not re.fullmatch(r"[0-9a-fA-F]{8,128}", sha):
        raise InputError(file=source, field="policy.sha256", expected="a hex content hash", got=sha)
    kind = _get(raw, "environment", "kind", (s,), source, True)
    if kind not in ("sim", "real"):
        raise InputError(
            file=source, field="environment.kind", expected="'sim' or 'real'", got=kind
        )
    model = _get(raw, "environment", "model", (s,), source, kind == "sim")
    commit = _get(
        raw,
        "environment",
        "commit",
        (s,),
        source,
        kind == "sim",
        fix="pin the simulation: the commit or content hash of the model/env",
    )
    rig = _get(raw, "environment", "rig", (s,), source, kind == "real")
    states, gen, gen_seed, shash = _initial_states(raw, source)
    predicate = _get(raw, "success", "predicate", (s,), source, True)
    thr = _get(raw, "success", "threshold", (int, float), source, False)
    judge = _get(raw, "success", "judge", (s,), source, True)
    if not _JUDGE.match(judge):
        raise InputError(
            file=source,
            field="success.judge",
            expected="'automatic', 'human:<name>' or 'model:<id>'",
            got=judge,
        )
    trials = _trials(raw.get("trials", []), source)
    successes, n = _outcomes(raw, trials, source)
    pairing_note = None
    if not trials and (ev := _get(raw, "outcomes", "lerobot_eval_info", (s,), source, False)):
        base = source.parent if source is not None else Path.cwd()
        info = _eval_info.read_eval_info(base / ev)
        trials = tuple(Trial(success=o.success, initial_state=o.seed) for o in info.outcomes)
        successes, n, pairing_note = info.successes, info.n_trials, info.pairing_note
    if n == 0:
        raise InputError(
            file=source,
            field="trials",
            expected="at least one trial outcome",
            got="none",
            fix="add [[trials]] tables, an [outcomes] summary, or "
            '[outcomes] lerobot_eval_info = "eval_info.json"',
        )
    if states is not None:
        for i, t in enumerate(trials):
            if t.initial_state is not None and not 0 <= t.initial_state < len(states):
                raise InputError(
                    file=source,
                    field=f"trials[{i}].initial_state",
                    expected=f"an index into initial_states.states (0..{len(states) - 1})",
                    got=t.initial_state,
                )
    cond = raw.get("conditions", {})
    name = raw.get("name") or (source.stem if source is not None else "run")
    return Manifest(
        source=source,
        name=str(name),
        checkpoint=checkpoint,
        sha256=sha.lower(),
        kind=kind,
        model=model,
        commit=commit,
        rig=rig,
        states=states,
        generator=gen,
        generator_seed=gen_seed,
        states_hash=shash,
        predicate=predicate,
        threshold=None if thr is None else float(thr),
        judge=judge,
        trials=trials,
        successes=successes,
        n_trials=n,
        conditions=dict(cond),
        pairing_note=pairing_note,
    )


def _initial_states(
    raw: Mapping[str, Any],
    source: Path | None,
) -> tuple[tuple[tuple[float, ...], ...] | None, str | None, int | None, str | None]:
    if "initial_states" not in raw:
        raise InputError(
            file=source,
            field="initial_states",
            expected="an [initial_states] table",
            got="nothing",
            fix="list the states (states = [[x, y, yaw], "
            "...]) or name a seeded generator with its seed and hash",
        )
    states_raw = _get(raw, "initial_states", "states", (list,), source, False)
    gen = _get(raw, "initial_states", "generator", (str,), source, False)
    seed = _get(raw, "initial_states", "seed", (int,), source, False)
    shash = _get(raw, "initial_states", "hash", (str,), source, False)
    states = None
    if states_raw is not None:
        ok = all(
            isinstance(r, list)
            and r
            and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in r
            )
            for r in states_raw
        )
        if not ok or not states_raw:
            raise InputError(
                file=source,
                field="initial_states.states",
                expected="a non-empty list of number lists, e.g. [[x, y, yaw]]",
                got=states_raw,
            )
        states = tuple(tuple(float(v) for v in r) for r in states_raw)
    elif gen is None:
        raise InputError(
            file=source,
            field="initial_states.states",
            expected="a state list or a generator",
            got="neither",
        )
    elif seed is None or shash is None:
        missing = "initial_states.seed" if seed is None else "initial_states.hash"
        raise InputError(
            file=source,
            field=missing,
            expected="the generator's seed and the hash of the list it generates",
            got="nothing",
        )
    return states, gen, seed, shash


def _trials(rows: Any, source: Path | None) -> tuple[Trial, ...]:
    if not isinstance(rows, list):
        raise InputError(
            file=source,
            field="trials",
            expected="a list of [[trials]] tables",
            got=type(rows).__name__,
        )
    out = []
    for i, r in enumerate(rows):
        f = f"trials[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("success"), bool):
            raise InputError(
                file=source,
                field=f"{f}.success",
                expected="true or false",
                got=r.get("success") if isinstance(r, dict) else r,
            )
        unknown = set(r) - {"success", "initial_state", "phase", "note"}
        if unknown:
            raise InputError(
                file=source,
                field=f"{f}.{sorted(unknown)[0]}",
                expected="success, initial_state, phase or note",
                got=sorted(unknown)[0],
            )
        st = r.get("initial_state")
        if st is not None and (isinstance(st, bool) or not isinstance(st, int)):
            raise InputError(file=source, field=f"{f}.initial_state", expected="an integer", got=st)
        phase = r.get("phase")
        if phase is not None and phase not in PHASES:
            raise InputError(
                file=source,
                field=f"{f}.phase",
                expected="a failure phase",
                got=phase,
                fix="use one of: " + ", ".join(PHASES),
            )
        note = r.get("note")
        out.append(
            Trial(
                success=r["success"],
                initial_state=st,
                phase=phase,
                note=None if note is None else str(note),
            )
        )
    return tuple(out)


def _outcomes(
    raw: Mapping[str, Any],
    trials: tuple[Trial, ...],
    source: Path | None,
) -> tuple[int, int]:
    s = _get(raw, "outcomes", "successes", (int,), source, False)
    n = _get(raw, "outcomes", "trials", (int,), source, False)
    if trials:
        if s is not None or n is not None:
            raise InputError(
                file=source,
                field="outcomes",
                expected="either [[trials]] or an [outcomes] summary, not both",
                got="both",
            )
        return sum(t.success for t in trials), len(trials)
    if s is None and n is None:
        return 0, 0
    if s is None or n is None:
        raise InputError(
            file=source,
            field="outcomes.successes" if s is None else "outcomes.trials",
            expected="both successes and trials",
            got="one",
        )
    if n < 1 or s < 0:
        raise InputError(
            file=source,
            field="outcomes.trials" if n < 1 else "outcomes.successes",
            expected="non-negative counts, trials >= 1",
            got=n if n < 1 else s,
        )
    if s > n:
        raise InputError(
            file=source,
            field="outcomes.successes",
            expected=f"at most outcomes.trials = {n} (trials fewer than successes)",
            got=s,
        )
    return s, n


def read_eval_info(path: str | Path) -> tuple[Trial, ...]:
    """lerobot-eval's ``eval_info.json`` (any layout, ``simgap.evidence.eval_info``) as
    trials, one per episode, ``initial_state`` = the environment seed where it was written.

    Raises:
        InputError: unreadable, no per-trial outcomes (an overall-only file), or malformed.
    """
    info = _eval_info.read_eval_info(path)
    if not info.outcomes:
        raise InputError(
            file=info.source,
            field="per_task",
            expected="per-trial outcomes",
            got=f"only the {info.layout} summary",
            fix="pass the eval_info.json lerobot-eval wrote in its output_dir",
        )
    return tuple(Trial(success=o.success, initial_state=o.seed) for o in info.outcomes)
