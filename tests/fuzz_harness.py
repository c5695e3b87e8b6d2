"""Mutators of valid input files and the checks every fuzzed run must pass.

A mutation starts from a valid file and changes it the way a user's file goes wrong:
bytes (flipped, cut, NUL, another encoding), JSON/TOML trees (a value replaced by an edge
number or a wrong type, a key dropped, an unknown key, deep nesting), CSV rows (a cell
replaced, a ragged row, a space after a comma, a huge field), Parquet columns (NaN, a
wrong type, a column dropped, duplicated rows). Every run must exit 0 or 2 (never 3, never a
traceback), leave its inputs byte-identical, and write only finite numbers in its JSON.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import math
import os
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer
from hypothesis import strategies as st
from typer.testing import CliRunner

from simgap.cli import app
from simgap.cli._app import BUG_EXIT, handles_errors

EDGE_NUMBERS: list[Any] = [
    math.nan,
    math.inf,
    -math.inf,
    0,
    0.0,
    -0.0,
    -1,
    1,
    -1e-300,
    1e-300,
    1e30,
    -1e30,
    1e308,
    2**63,
    2**64 + 1,
    33,
    66.7,
    0.5,
]
EDGE_VALUES: list[Any] = [
    *EDGE_NUMBERS,
    True,
    False,
    None,
    "",
    "abc",
    "33",
    "nan",
    "../../../../ESCAPED",
    "a\nimport os  # injected",
    [],
    {},
    [1, 2],
    ["a", 16],
    [math.inf, 16],
    [16.7, 16],
    {"x": 1},
    "x" * 300,
]
EDGE_CELLS = [
    "",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e30",
    "1e308",
    "-1",
    "0",
    "abc",
    " 1",
    "1,5",
    "9" * 5000,
    "\x00",
    "é",
    "true",
    "x" * 200_000,
]


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (symlinks and special files skipped)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _strict_finite(text: str) -> Any:
    def bad(name: str) -> Any:
        raise AssertionError(f"non-finite number {name} in the JSON output")

    return json.loads(text, parse_constant=bad)


def check_json_finite(path: Path) -> None:
    """Every number in the JSON file at ``path`` is finite (NaN/Infinity are refused)."""

    def walk(v: Any) -> None:
        if isinstance(v, float):
            assert math.isfinite(v), v
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(_strict_finite(path.read_text(encoding="utf-8")))


_runner = CliRunner()
_SURVEY = os.environ.get("SIMGAP_FUZZ_SURVEY")  # a file: record crashes instead of failing


def _survey(message: str) -> bool:
    if _SURVEY:
        with open(_SURVEY, "a", encoding="utf-8") as fh:
            fh.write(message.replace("\n", " ")[:400] + "\n")
    return bool(_SURVEY)


def run_cli(
    args: Sequence[str],
    inputs: Path,
    json_out: Path | None = None,
    ok_codes: tuple[int, ...] = (0, 2),
) -> int:
    """Run ``simgap ARGS`` in process; assert the fuzz contract; return the exit code."""
    before = digest(inputs)
    res = _runner.invoke(app, [str(a) for a in args], catch_exceptions=True)
    text = res.output
    if res.exit_code == BUG_EXIT and _survey(text.strip().splitlines()[-1] if text else "?"):
        return res.exit_code
    assert "Traceback" not in text, text[-3000:]
    assert res.exit_code != BUG_EXIT, text[-3000:]
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in ok_codes, (res.exit_code, text[-3000:])
    assert digest(inputs) == before, "an input changed"
    if res.exit_code == 0 and json_out is not None and json_out.exists():
        check_json_finite(json_out)
    return res.exit_code


def run_reader(fn: Callable[..., Any], *args: Any, inputs: Path) -> int:
    """Call a reader through the CLI's error wrapper; the same contract as ``run_cli``."""
    before = digest(inputs)

    @handles_errors
    def command() -> None:
        fn(*args)

    try:
        command()
        code = 0
    except typer.Exit as e:
        code = e.exit_code
    if code == BUG_EXIT and _SURVEY:
        from simgap.cli._app import _crash_site

        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001  (the survey records what crashed)
            _survey(f"internal error: {type(e).__name__}: {str(e)[:120]} (at {_crash_site(e)})")
        return code
    assert code != BUG_EXIT, "a reader crashed (exit 3): see the message above"
    assert code in (0, 2), code
    assert digest(inputs) == before, "an input changed"
    return code


# ---------------------------------------------------------------- byte-level mutations


def mutate_bytes(data: st.DataObject, raw: bytes) -> bytes:
    """Flip, cut, insert NUL/high bytes, or re-encode the text."""
    kind = data.draw(
        st.sampled_from(
            ["flip", "cut", "insert", "utf16", "latin1", "bom", "empty", "crlf", "dup"]
        ),
        label="bytes",
    )
    if not raw:
        return raw
    if kind == "flip":
        i = data.draw(st.integers(0, len(raw) - 1))
        return raw[:i] + bytes([raw[i] ^ data.draw(st.integers(1, 255))]) + raw[i + 1 :]
    if kind == "cut":
        return raw[: data.draw(st.integers(0, len(raw) - 1))]
    if kind == "insert":
        i = data.draw(st.integers(0, len(raw)))
        return (
            raw[:i]
            + data.draw(
                st.sampled_from([b"\x00", b"\xff\xfe", b"\xe9", b"\n\n", b"{", b",", b'"', b"]]"])
            )
            + raw[i:]
        )
    if kind == "utf16":
        return raw.decode("utf-8", "replace").encode("utf-16")
    if kind == "latin1":
        return raw.decode("utf-8", "replace").replace("e", "é", 3).encode("latin-1", "replace")
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw
    if kind == "crlf":
        return raw.replace(b"\n", b"\r\n")
    if kind == "dup":
        return raw + raw
    return b""


# ---------------------------------------------------------------- tree mutations


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if len(prefix) > 12:  # do not walk into deep nesting a previous edit made
        return out
    if isinstance(tree, dict):
        for k, v in tree.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree[:8]):
            out += _paths(v, (*prefix, i))
    return out


def _deep(n: int) -> Any:
    v: Any = 1
    for _ in range(n):
        v = [v]
    return v


def mutate_tree(data: st.DataObject, tree: Any, n: int | None = None) -> Any:
    """Replace, drop or add values at random places in a JSON/TOML tree (1..3 edits)."""
    tree = json.loads(json.dumps(tree))  # a deep copy
    for _ in range(n or data.draw(st.integers(1, 3), label="edits")):
        paths = _paths(tree)
        path = data.draw(st.sampled_from(paths), label="path")
        kind = data.draw(
            st.sampled_from(["replace", "replace", "replace", "drop", "add", "deep"]), label="tree"
        )
        value = (
            _deep(data.draw(st.sampled_from([50, 3000])))
            if kind == "deep"
            else copy.deepcopy(data.draw(st.sampled_from(EDGE_VALUES), label="value"))
        )
        if not path:
            if kind in ("replace", "deep"):
                tree = value
            continue
        parent = tree
        for p in path[:-1]:
            parent = parent[p]
        key = path[-1]
        if kind == "drop":
            del parent[key]
        elif kind == "add" and isinstance(parent, dict):
            parent[f"unknown_{len(parent)}"] = value
        else:
            parent[key] = value
    return tree


def _toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return (
            "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        )
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return (
            "{"
            + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None)
            + "}"
        )
    return '""'


def to_toml(tree: Any) -> str:
    """A small TOML writer for mutated trees (None values are dropped: TOML has no null)."""
    if not isinstance(tree, dict):
        return f"value = {_toml_value(tree)}\n"
    lines = []
    tables = []
    for k, v in tree.items():
        if (
            isinstance(v, dict)
            and v
            and all(isinstance(x, dict) for x in v.values())
            and k == "joints"
        ):
            for jk, jv in v.items():
                tables.append((f"{k}.{_toml_key(jk)}", jv))
        elif isinstance(v, dict):
            tables.append((_toml_key(k), v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for x in v:
                tables.append((f"[{_toml_key(k)}]", x))
        elif v is not None:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    for name, t in tables:
        lines.append(f"[{name}]")
        lines.extend(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in t.items() if x is not None)
    return "\n".join(lines) + "\n"


def mutate_toml_text(data: st.DataObject, text: str) -> bytes:
    """A TOML file mutated as a tree (most often) or as bytes."""
    if data.draw(st.integers(0, 3), label="toml-or-bytes") == 0:
        return mutate_bytes(data, text.encode())
    tree = tomllib.loads(text)
    try:
        return to_toml(mutate_tree(data, tree)).encode()
    except RecursionError:
        return ("deep = " + "[" * 50_000 + "]" * 50_000 + "\n" + text).encode()


def mutate_json_text(data: st.DataObject, text: str) -> bytes:
    """A JSON file mutated as a tree (most often) or as bytes."""
    if data.draw(st.integers(0, 3), label="json-or-bytes") == 0:
        return mutate_bytes(data, text.encode())
    tree = mutate_tree(data, json.loads(text))
    try:
        return json.dumps(tree).encode()
    except RecursionError:
        return b"[" * 50_000 + b"]" * 50_000


def mutate_jsonl_text(data: st.DataObject, text: str) -> bytes:
    """JSON Lines: one line's tree mutated, a line dropped/duplicated/cut, or bytes."""
    lines = text.splitlines()
    kind = data.draw(
        st.sampled_from(["tree", "tree", "tree", "drop", "dup", "cut", "bytes", "swap"]),
        label="jsonl",
    )
    if kind == "bytes" or not lines:
        return mutate_bytes(data, text.encode())
    i = data.draw(st.integers(0, len(lines) - 1), label="line")
    if kind == "tree":
        tree = mutate_tree(data, json.loads(lines[i]))
        try:
            lines[i] = json.dumps(tree)
        except RecursionError:
            lines[i] = "[" * 50_000 + "]" * 50_000
    elif kind == "drop":
        del lines[i]
    elif kind == "dup":
        lines.insert(i, lines[i])
    elif kind == "swap" and len(lines) > 1:
        j = data.draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = lines[i][: len(lines[i]) // 2]
    return ("\n".join(lines) + "\n").encode()


def mutate_csv_text(data: st.DataObject, text: str) -> bytes:
    """CSV: a cell replaced, a ragged row, a space after the header's commas, a header cell
    with a newline, a column dropped, rows cut, or bytes."""
    rows = list(csv.reader(io.StringIO(text)))
    kind = data.draw(
        st.sampled_from(
            [
                "cell",
                "cell",
                "cell",
                "ragged",
                "short",
                "space",
                "newline",
                "dropcol",
                "norows",
                "dupcol",
                "bytes",
            ]
        ),
        label="csv",
    )
    if kind == "bytes" or not rows:
        return mutate_bytes(data, text.encode())
    r = data.draw(st.integers(0, len(rows) - 1), label="row")
    if kind == "cell" and rows[r]:
        c = data.draw(st.integers(0, len(rows[r]) - 1), label="col")
        rows[r][c] = data.draw(st.sampled_from(EDGE_CELLS), label="cell value")
    elif kind == "ragged":
        rows[r] = rows[r] + ["1", "2"]
    elif kind == "short":
        rows[r] = rows[r][: max(0, len(rows[r]) - 2)]
    elif kind == "space":
        return (
            ", ".join(rows[0]) + "\n" + "\n".join(",".join(x) for x in rows[1:]) + "\n"
        ).encode()
    elif kind == "newline" and rows[0]:
        rows[0][-1] = rows[0][-1] + "\nimport os"
    elif kind == "dropcol":
        c = data.draw(st.integers(0, max(0, len(rows[0]) - 1)))
        rows = [x[:c] + x[c + 1 :] for x in rows]
    elif kind == "norows":
        rows = rows[:1]
    elif kind == "dupcol" and rows[0]:
        rows[0][-1] = rows[0][0]
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().encode()


def mutate_parquet(data: st.DataObject, path: Path) -> None:
    """Parquet: a column replaced by NaN/Inf/strings/nulls, dropped, cast, or rows
    duplicated; or the file's bytes cut."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    kind = data.draw(
        st.sampled_from(["values", "values", "strings", "drop", "dup", "cut", "nulls", "cast"]),
        label="parquet",
    )
    if kind == "cut":
        raw = path.read_bytes()
        path.write_bytes(raw[: data.draw(st.integers(0, len(raw) - 1))])
        return
    table = pq.read_table(path)
    names = table.column_names
    c = data.draw(st.sampled_from(names), label="column")
    i = names.index(c)
    col = table.column(c)
    n = table.num_rows
    if kind == "values":
        v = data.draw(st.sampled_from([math.nan, math.inf, -math.inf, 1e30, -1.0, 0.0]))
        if pa.types.is_list(col.type) or pa.types.is_fixed_size_list(col.type):
            width = len(col[0].as_py()) if n else 1
            arr = pa.array([[v] * width] * n, type=pa.list_(pa.float32()))
        elif pa.types.is_floating(col.type):
            arr = pa.array(np.full(n, v), type=col.type)
        else:
            arr = pa.array([0] * n, type=col.type) if pa.types.is_integer(col.type) else col
        table = table.set_column(i, c, arr)
    elif kind == "strings":
        table = table.set_column(i, c, pa.array(["x"] * n))
    elif kind == "nulls":
        table = table.set_column(i, c, pa.nulls(n, type=col.type))
    elif kind == "drop":
        table = table.remove_column(i)
    elif kind == "dup" and n:
        table = pa.concat_tables([table, table.slice(0, min(n, 5))])
    elif kind == "cast" and pa.types.is_integer(col.type):
        table = table.set_column(i, c, pc.cast(col, pa.float64()))
    pq.write_table(table, path)
