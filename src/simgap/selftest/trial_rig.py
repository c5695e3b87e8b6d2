"""A trial's rig.toml: the user's rig, pointing at the trial's synthetic recording.

Every section of the user's rig.toml is kept as written (the joint map, units, timing,
noise, training, deploy), with its ``# guessed`` marks, except: ``name`` is the trial's,
``seed`` the trial's, ``[model] path`` the user's model as an absolute path, ``[evidence]``
the synthetic dataset alone, and ``[camera] recorded`` and ``[compute]`` are left out (the
synthetic dataset has no frames; the selftest, not the rig, says where it runs). The
user's rig name reaches the file only inside a comment, escaped.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.rig import Rig
from simgap.safe_names import checked_toml, py_comment, toml_key, toml_string

DROPPED: tuple[str, ...] = ("evidence", "compute")


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InputError(field=where, expected="a finite number", got=v)
        return repr(v)  # the user's value to the last digit
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return toml_string(v, where)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x, where) for x in v) + "]"
    raise InputError(field=where, expected="a TOML value simgap reads", got=type(v).__name__)


def _table(
    lines: list[str], path: tuple[str, ...], body: Mapping[str, Any], guessed: frozenset[str]
) -> None:
    scalars = {k: v for k, v in body.items() if not isinstance(v, Mapping)}
    if path and scalars:
        lines.append("[" + ".".join(toml_key(p, "rig key") for p in path) + "]")
    for k, v in scalars.items():
        dotted = ".".join((*path, k))
        mark = "   # guessed (as the user's rig.toml marks it)" if dotted in guessed else ""
        lines.append(f"{toml_key(k, 'rig key')} = {_value(v, dotted)}{mark}")
    for k, v in body.items():
        if isinstance(v, Mapping):
            _table(lines, (*path, k), v, guessed)


def trial_rig_text(rig: Rig, *, name: str, seed: int, dataset: str = "dataset") -> str:
    """The trial's rig.toml text (module docstring), parsed back before it is returned.

    Raises:
        InputError: the user's rig has no source file to copy.
    """
    if rig.source is None:
        raise InputError(
            field="rig",
            expected="a rig loaded from a rig.toml",
            got="a rig built in code",
            fix="pass the rig's file",
        )
    raw: dict[str, Any] = tomllib.loads(Path(rig.source).read_text(encoding="utf-8"))
    for key in DROPPED:
        raw.pop(key, None)
    raw["name"], raw["seed"] = name, int(seed)
    raw["model"] = {**raw["model"], "path": str(rig.model_path)}
    if isinstance(raw.get("camera"), Mapping):
        raw["camera"] = {k: v for k, v in raw["camera"].items() if k != "recorded"}
    raw["evidence"] = {"dataset": dataset}
    top = {"name": raw.pop("name"), "seed": raw.pop("seed")}
    lines = [
        f"# simgap selftest {py_comment(name)}: the rig {py_comment(rig.name)} "
        "on a synthetic recording of its own commands (planted faults: truth.json).",
        f"name = {toml_string(top['name'])}",
        f"seed = {top['seed']}",
        "",
    ]
    _table(lines, (), {k: v for k, v in raw.items() if not isinstance(v, Mapping)}, rig.guessed)
    for k, v in raw.items():
        if isinstance(v, Mapping):
            _table(lines, (k,), v, rig.guessed)
            lines.append("")
    text = "\n".join(lines).rstrip() + "\n"
    checked_toml(text, "selftest trial rig.toml")
    return text
