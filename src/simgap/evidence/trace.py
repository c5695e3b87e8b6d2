"""Deployment trace reader (format item 8, documented in docs/plumbing.md).

JSON Lines, one object per control tick::

    {"tick": int, "episode": int, "t": float,
     "observation": {<feature>: number, ..., "image_t": float, "image_age_s": float,
                     "image_sha1": str},
     "action": {<feature>: number}, "sent": {<feature>: number},
     "writes": [{"motor": str, "register": str, "value": number}],
     "reads": [{"motor": str, "register": str, "value": number}],
     "events": [str | {"name": str, "t": float}],   # a bare string has no time
     "units": {<feature>: unit}}          # optional per-record unit declaration

The first record may carry ``meta``. The reader validates and returns values; it computes
nothing. Also here: ``probe_checkpoint``, which loads a checkpoint on the CPU (torch).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from simgap.errors import InputError, MissingExtraError, NameNotFoundError, found_instead
from simgap.rig import Rig
from simgap.validate import check_input_file, parse_json, read_text
from simgap.values.trace import (
    JOINT_FEATURES,
    TEMPERATURE_FEATURES,
    CheckpointProbe,
    RegisterEntry,
    Trace,
    TraceEvent,
)

IMAGE_STAMPS: tuple[str, ...] = ("image_t", "image_age_s", "image_sha1")
FEATURE_UNITS: tuple[str, ...] = ("deg", "m100", "pct", "rad", "ticks")


_FORMAT = "(docs/plumbing.md, 'The deployment trace')"
"""Where a trace's format is described, for an error's fix."""


def _num(v: Any, path: Path, line: int, key: str) -> float:
    if (
        isinstance(v, bool)
        or not isinstance(v, (int, float))
        or not math.isfinite(v)
        or abs(v) > 1e15
    ):
        raise InputError(
            file=path,
            field=f"line {line}: {key}",
            expected="a finite number (leave the key out when there is no value)",
            got="null" if v is None else v,
            fix=f"write the value as a JSON number on line {line}, or leave {key} out of "
            "that record where nothing was read",
        )
    return float(v)


def _field(
    rec: Mapping[str, Any],
    key: str,
    kind: type,
    path: Path,
    line: int | str,
) -> Any:
    """``rec[key]`` when it has the JSON type ``kind`` (list or dict), an empty one when
    absent or null; any other type is an InputError naming the line."""
    v = rec.get(key)
    if v is None:
        return kind()
    if not isinstance(v, kind):
        want = "a list" if kind is list else "an object"
        where = f"line {line}: {key}" if isinstance(line, int) else key
        raise InputError(
            file=path,
            field=where,
            expected=want,
            got=type(v).__name__,
            fix=f"write {key} as {want} (or leave it out) {_FORMAT}",
        )
    return v


def _entries(
    rec: Mapping[str, Any], key: str, row: int, path: Path, line: int
) -> list[RegisterEntry]:
    out = []
    for e in _field(rec, key, list, path, line):
        if not (isinstance(e, Mapping) and {"motor", "register", "value"} <= set(e)):
            raise InputError(
                file=path,
                field=f"line {line}: {key}",
                expected="objects with motor, register and value",
                got=e,
                fix=f'write each of {key} as {{"motor": ..., "register": ..., "value": ...}} '
                f"{_FORMAT}",
            )
        out.append(
            RegisterEntry(
                row,
                str(e["motor"]),
                str(e["register"]),
                _num(e["value"], path, line, f"{key}.value"),
            )
        )
    return out


def _default_unit(feature: str, meta: Mapping[str, Any]) -> str:
    if feature.startswith("gripper"):
        return "pct"
    return "deg" if meta.get("use_degrees", True) else "m100"


def read_trace(path: str | Path) -> Trace:
    """Read and validate a deployment trace.

    Raises:
        InputError: not JSON Lines; a record lacks ``tick``/``episode``/``t``; ticks are
            missing (a gap) or repeated; a feature name is unknown (the known ones are
            listed); one feature is declared in two units.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(
            file=path,
            expected="a deployment trace (JSON Lines)",
            got=found_instead(path),
            fix="name the trace file inside the folder"
            if path.is_dir()
            else "record one with the fake arm or your rig (docs/plumbing.md)",
        )
    recs: list[tuple[int, dict[str, Any]]] = []
    for i, text in enumerate(
        read_text(path, "a deployment trace (JSON Lines)").splitlines(), start=1
    ):
        if not text.strip():
            continue
        rec = parse_json(
            text,
            f"{path}: line {i}",
            "one JSON object per line (finite numbers; NaN and Infinity are not JSON)",
            allow_nan=False,
        )
        if not isinstance(rec, dict):
            raise InputError(
                file=path,
                field=f"line {i}",
                expected="a JSON object",
                got=type(rec).__name__,
                fix=f"write one JSON object per tick on each line {_FORMAT}",
            )
        for key in ("tick", "episode", "t"):
            if key not in rec:
                raise InputError(
                    file=path,
                    field=f"line {i}: {key}",
                    expected="tick, episode and t in every record",
                    got="nothing",
                    fix=f"add {key} to line {i} (the recorder writes all three) {_FORMAT}",
                )
        recs.append((i, rec))
    if not recs:
        raise InputError(
            file=path,
            expected="at least one tick record",
            got="an empty file",
            fix="run the deployment for at least one tick with the trace recorder on "
            "('simgap fake-arm SCRIPT --trace FILE', or simgap.fakearm.TraceRecorder in "
            "your own loop), and pass the file it wrote",
        )
    meta = recs[0][1].get("meta") or {}
    if not isinstance(meta, Mapping):
        raise InputError(
            file=path,
            field="meta",
            expected="an object",
            got=meta,
            fix=f'write meta on the first record as an object ({{"use_degrees": true, ...}}) '
            f"{_FORMAT}",
        )
    ticks = np.array([int(_num(r["tick"], path, i, "tick")) for i, r in recs])
    steps = np.diff(ticks)
    if np.any(steps != 1):
        k = int(np.flatnonzero(steps != 1)[0])
        a, b = int(ticks[k]), int(ticks[k + 1])
        missing = list(range(a + 1, b))
        raise InputError(
            file=path,
            field=f"line {recs[k + 1][0]}: tick",
            expected=f"consecutive ticks (tick {a} then {a + 1})",
            got=f"tick {b}"
            + (
                f"; missing ticks {missing[:10]}" + (" ..." if len(missing) > 10 else "")
                if missing
                else " (repeated or out of order)"
            ),
            fix="record every control tick; a dropped tick hides what was sent",
        )
    n = len(recs)
    known_obs = set(JOINT_FEATURES) | set(TEMPERATURE_FEATURES) | set(IMAGE_STAMPS)
    obs: dict[str, np.ndarray] = {}
    act: dict[str, np.ndarray] = {}
    sent: dict[str, np.ndarray] = {}
    img_t = np.full(n, np.nan)
    img_age = np.full(n, np.nan)
    sha: list[str | None] = [None] * n
    declared: dict[str, dict[str, int]] = {}
    meta_units = _field(meta, "units", dict, path, "meta")
    writes: list[RegisterEntry] = []
    reads: list[RegisterEntry] = []
    events: list[TraceEvent] = []
    for row, (line, rec) in enumerate(recs):
        units = {**meta_units, **_field(rec, "units", dict, path, line)}
        for section, store, known in (
            ("observation", obs, known_obs),
            ("action", act, set(JOINT_FEATURES)),
            ("sent", sent, set(JOINT_FEATURES)),
        ):
            d = rec.get(section) or {}
            if not isinstance(d, Mapping):
                raise InputError(
                    file=path,
                    field=f"line {line}: {section}",
                    expected="an object of feature values",
                    got=d,
                    fix=f'write {section} as {{"<feature>": value, ...}} {_FORMAT}',
                )
            for key, value in d.items():
                if key not in known:
                    raise NameNotFoundError(
                        f"{section} feature", key, known, file=path, field=f"line {line}: {section}"
                    )
                if key == "image_sha1":
                    sha[row] = None if value is None else str(value)
                    continue
                v = _num(value, path, line, f"{section}.{key}")
                if key == "image_t":
                    img_t[row] = v
                elif key == "image_age_s":
                    img_age[row] = v
                else:
                    store.setdefault(key, np.full(n, np.nan))[row] = v
                    if key in JOINT_FEATURES:
                        unit = str(units.get(key, _default_unit(key, meta)))
                        if unit not in FEATURE_UNITS:
                            raise InputError(
                                file=path,
                                field=f"line {line}: units.{key}",
                                expected=f"one of {', '.join(FEATURE_UNITS)}",
                                got=unit,
                                fix=f"declare {key}'s unit as one of "
                                f"{', '.join(FEATURE_UNITS)} in units (or meta.units)",
                            )
                        declared.setdefault(key, {}).setdefault(unit, int(ticks[row]))
        writes += _entries(rec, "writes", row, path, line)
        reads += _entries(rec, "reads", row, path, line)
        for ev in _field(rec, "events", list, path, line):
            if isinstance(ev, str):
                events.append(TraceEvent(row, ev, math.nan))  # a name without a time
            elif isinstance(ev, Mapping) and "name" in ev:
                events.append(
                    TraceEvent(
                        row, str(ev["name"]), _num(ev.get("t", rec["t"]), path, line, "events.t")
                    )
                )
            else:
                raise InputError(
                    file=path,
                    field=f"line {line}: events",
                    expected='strings or {"name": str, "t": float}',
                    got=ev,
                    fix=f'write each event as a name or {{"name": ..., "t": ...}} {_FORMAT}',
                )
    for key, seen in declared.items():
        if len(seen) > 1:
            where = ", ".join(f"{u} from tick {t}" for u, t in seen.items())
            raise InputError(
                file=path,
                field=f"units.{key}",
                expected="one unit per feature for the whole trace",
                got=f"mixed units: {where}",
                fix="convert every value of the feature to one unit before writing the trace",
            )
    unit_map = {k: next(iter(v)) for k, v in declared.items()}
    return Trace(
        source=path,
        meta=dict(meta),
        tick=ticks,
        episode=np.array([int(_num(r["episode"], path, i, "episode")) for i, r in recs]),
        t=np.array([_num(r["t"], path, i, "t") for i, r in recs]),
        observation=obs,
        action=act,
        sent=sent,
        units=unit_map,
        image_t=img_t,
        image_age_s=img_age,
        image_sha1=tuple(sha),
        writes=tuple(writes),
        reads=tuple(reads),
        events=tuple(events),
    )


def trace_from_rig(rig: Rig) -> Trace | None:
    """The rig's ``evidence.trace``, read; None when the rig names none."""
    if rig.evidence.trace is None:
        return None
    return read_trace(rig.evidence.trace)


def checkpoint_path(trace: Trace) -> Path | None:
    """The checkpoint named in the trace's meta, resolved against the trace's folder."""
    ck = trace.meta.get("checkpoint")
    if not ck:
        return None
    p = Path(str(ck))
    if not p.is_absolute() and trace.source is not None:
        p = trace.source.parent / p
    return p


def probe_for(trace: Trace) -> CheckpointProbe | None:
    """Probe the checkpoint the trace's meta names (None when it names none)."""
    path = checkpoint_path(trace)
    return None if path is None else probe_checkpoint(path)


def probe_checkpoint(path: str | Path) -> CheckpointProbe:
    """Load a checkpoint on the CPU, with and without a CPU map location.

    Raises:
        InputError: the file does not exist.
        MissingExtraError: torch is not installed.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(
            file=path,
            field="meta.checkpoint",
            expected="a checkpoint file",
            got=found_instead(path),
            fix="point meta.checkpoint at the file the "
            "deployment loads (relative paths are against the trace's folder)",
        )
    try:
        import torch
    except ImportError:
        raise MissingExtraError("net", "torch", "Checking that a checkpoint loads") from None
    seen: list[str] = []

    def spy(storage: Any, location: str) -> Any:
        seen.append(str(location))
        return storage

    def attempt(**kw: Any) -> str | None:
        try:
            torch.load(path, weights_only=True, **kw)
        except Exception as e:  # any failure to load is the finding
            return f"{type(e).__name__}: {e}".strip()[:300]
        return None

    check_input_file(path, "a checkpoint file")
    if not _looks_like_checkpoint(path):
        err = "neither a torch zip archive nor a pickle"
        return CheckpointProbe(
            path=path,
            locations=(),
            loads_plain=False,
            plain_error=err,
            loads_cpu=False,
            cpu_error=err,
            kind="not_a_checkpoint",
            cuda_available=bool(torch.cuda.is_available()),
        )
    plain = attempt()
    cpu = attempt(map_location="cpu")
    attempt(map_location=spy)
    locations = tuple(sorted(set(seen)))
    return CheckpointProbe(
        path=path,
        locations=locations,
        loads_plain=plain is None,
        plain_error=plain,
        loads_cpu=cpu is None,
        cpu_error=cpu,
        cuda_available=bool(torch.cuda.is_available()),
        kind=_probe_kind(locations, plain, cpu),
    )


_UNSAFE = (
    "weights only load failed",
    "unsupported global",
    "unpicklingerror",
    "unsupported operand",
)


def _looks_like_checkpoint(path: Path) -> bool:
    """A torch zip archive (``PK``) or a legacy pickle (protocol byte 0x80)."""
    with path.open("rb") as fh:
        head = fh.read(4)
    return head.startswith(b"PK\x03\x04") or head[:1] == b"\x80"


def _probe_kind(locations: tuple[str, ...], plain: str | None, cpu: str | None) -> str:
    errors = " ".join(e.lower() for e in (plain, cpu) if e)
    if any(loc.startswith("cuda") for loc in locations) or (
        plain is not None and cpu is None and "cuda" in plain.lower()
    ):
        return "cuda"
    if any(u in errors for u in _UNSAFE):
        return "unsafe_pickle"
    if plain is None and cpu is None:
        return "ok"
    return "cuda" if "cuda" in errors else "unreadable"
