"""Checks at the boundary: input files that can be read, text that decodes, trees that
parse, and numbers that are finite, in range and in the units asked for.

Every failure is an ``InputError`` naming the file, the field, what was expected, what
came and the fix. Readers call these at the top of their functions.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from simgap.errors import InputError
from simgap.outputs import note_input

MIN_PERIOD_S = 1e-3
"""Shortest plausible control period [s] (1 kHz)."""

MAX_PERIOD_S = 1.0
"""Longest plausible control period [s] (1 Hz)."""

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise InputError(
            file=path, expected=what, got="no such file", fix="check the path"
        ) from None
    except OSError as e:
        got = "a symlink loop" if e.errno == errno.ELOOP else (e.strerror or str(e))
        raise InputError(file=path, expected=what, got=got, fix="point at the real file") from None
    except ValueError as e:  # an embedded NUL byte
        raise InputError(file=repr(str(path)), expected=what, got=str(e)) from None


def check_input_file(path: str | Path, what: str = "a regular file") -> Path:
    """Refuse, before opening, what is not a regular file (a folder, FIFO, device, socket,
    symlink loop, missing path); note it as an input. Returns the path."""
    path = Path(path)
    st = _stat(path, what)
    if stat.S_ISDIR(st.st_mode):
        raise InputError(file=path, expected=what, got="a folder", fix="name the file inside it")
    for test, name in _KINDS:
        if test(st.st_mode):
            raise InputError(
                file=path,
                expected=what,
                got=name,
                fix="save the data to a regular file and pass that",
            )
    note_input(path)
    return path


def read_bytes(path: str | Path, what: str = "a regular file") -> bytes:
    """The bytes of a checked input file."""
    path = check_input_file(path, what)
    try:
        return path.read_bytes()
    except OSError as e:
        raise InputError(file=path, expected=what, got=e.strerror or str(e)) from None


def decode_text(data: bytes, path: str | Path, what: str = "UTF-8 text") -> str:
    """``data`` as UTF-8 (a UTF-8 byte-order mark is dropped); other encodings refused."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(
            file=path,
            expected=what,
            got="UTF-16 text (a byte-order mark)",
            fix="save the file as UTF-8",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            file=path,
            expected=what,
            got=f"a byte {data[e.start : e.start + 1]!r} at offset {e.start} "
            "that is not UTF-8 (Latin-1 or UTF-16?)",
            fix="save the file as UTF-8",
        ) from None
    if "\x00" in text:
        raise InputError(
            file=path, expected=what, got="NUL characters (binary data?)", fix="pass the text file"
        )
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path, what: str = "a UTF-8 text file") -> str:
    """A checked input file's text, UTF-8 only."""
    return decode_text(read_bytes(path, what), path, what)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def parse_json(text: str, path: str | Path, what: str = "JSON", *, allow_nan: bool = True) -> Any:
    """``json.loads`` with every failure (syntax, 50,000-deep nesting, an integer of
    thousands of digits, NaN when not allowed) as an InputError."""
    try:
        if allow_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise InputError(
            file=path,
            expected=what,
            got=f"{e.msg} at line {e.lineno} column {e.colno}",
            fix="correct the JSON",
        ) from None
    except RecursionError:
        raise InputError(
            file=path, expected=what, got="nesting too deep to read", fix="flatten the file"
        ) from None
    except ValueError as e:  # a 5,000-digit integer; NaN refused
        raise InputError(file=path, expected=what, got=str(e)[:200]) from None


def read_json(path: str | Path, what: str = "a JSON file", *, allow_nan: bool = True) -> Any:
    """A checked input file parsed as JSON."""
    return parse_json(read_text(path, what), path, what, allow_nan=allow_nan)


def parse_toml(text: str, path: str | Path, what: str = "TOML") -> dict[str, Any]:
    """``tomllib.loads`` with every failure as an InputError."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(file=path, expected=what, got=str(e), fix="correct the TOML") from None
    except RecursionError:
        raise InputError(
            file=path, expected=what, got="nesting too deep to read", fix="flatten the file"
        ) from None
    except ValueError as e:
        raise InputError(file=path, expected=what, got=str(e)[:200]) from None


def number(
    value: Any,
    *,
    file: str | Path | None = None,
    field: str,
    unit: str = "",
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    integer: bool = False,
    fix: str | None = None,
) -> float:
    """``value`` as a finite float (or a whole number with ``integer``) in ``[lo, hi]``
    (``(lo, hi]`` with ``lo_open``); bools, strings, NaN and Inf refused."""
    u = f" [{unit}]" if unit else ""
    rng = ""
    if lo is not None or hi is not None:
        rng = (
            f" in {'(' if lo_open else '['}{'-inf' if lo is None else f'{lo:g}'}, "
            f"{'inf' if hi is None else f'{hi:g}'}]"
        )
    expected = f"{'a whole number' if integer else 'a finite number'}{u}{rng}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(
            file=file,
            field=field,
            expected=expected,
            got=kind_of(value),
            fix=fix_for_kind(value, fix),
        )
    try:
        v = float(value)
    except OverflowError:
        raise InputError(
            file=file, field=field, expected=expected, got="a huge integer", fix=fix
        ) from None
    if not math.isfinite(v):
        raise InputError(file=file, field=field, expected=expected, got=v, fix=fix)
    if integer and v != int(v):
        raise InputError(
            file=file, field=field, expected=expected, got=value, fix=fix or "give a whole number"
        )
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and v > hi):
        raise InputError(file=file, field=field, expected=expected, got=value, fix=fix)
    return v


def kind_of(value: Any) -> str:
    """A value that should have been a number, named by its (JSON) type: ``the boolean
    true``, ``the string "15"``, ``null``, ``a list``, ``an object``."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, str):
        return f"the string {json.dumps(value[:60])} (quoted text, not a number)"
    if value is None:
        return "null"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return f"{type(value).__name__} {str(value)[:60]!r}"


def fix_for_kind(value: Any, fix: str | None) -> str | None:
    """The fix for a value of the wrong type: a number in quotes loses its quotes."""
    if isinstance(value, str):
        try:
            as_number = float(value)
        except ValueError:
            return fix
        if math.isfinite(as_number):
            return f"write it as a number, without quotes: {value.strip()}" + (
                f" ({fix})" if fix else ""
            )
    return fix


def plausible(
    value: Any,
    *,
    field: str,
    unit: str,
    lo: float,
    hi: float,
    what: str,
    file: str | Path | None = None,
    zero_ok: bool = False,
    typos: Mapping[str, float] | None = None,
) -> float:
    """A measured quantity at the boundary: a finite number (never a boolean or a string),
    above 0 (or 0 itself with ``zero_ok``) and within the plausible range ``[lo, hi]`` of
    ``what`` in ``unit``. A value outside that a unit slip would explain gets the fix "did
    you mean ...": ``typos`` maps a unit name to the factor that converts a value typed in
    it into ``unit`` (``{"metres": 1000}`` for a millimetre field).

    Raises:
        InputError: naming the field, the plausible range in ``unit`` and the fix.
    """
    v = number(
        value,
        file=file,
        field=field,
        unit=unit,
        lo=0.0,
        lo_open=not zero_ok,
        fix=f"give {field} as a number in {unit}: {what} is {lo:g} to {hi:g} {unit}",
    )
    if (zero_ok and v == 0.0) or lo <= v <= hi:
        return v
    expected = f"{what} in {unit}, {lo:g} to {hi:g} {unit}" + (" (or 0)" if zero_ok else "")
    for name, factor in (typos or {}).items():
        if lo <= v * factor <= hi:
            fix = (
                f"did you mean {v * factor:g} {unit}? {v:g} looks like {name}; give "
                f"{field} in {unit}"
            )
            break
    else:
        fix = f"give {field} in {unit}: {what} is {lo:g} to {hi:g} {unit}"
    raise InputError(file=file, field=field, expected=expected, got=f"{v:g} {unit}", fix=fix)


def control_period(
    value: Any, *, file: str | Path | None = None, field: str = "control.dt_s"
) -> float:
    """A control period [s] between 1 ms and 1 s; a value that looks like milliseconds
    gets the hint ``33 looks like milliseconds: pass 0.033``."""
    v = number(value, file=file, field=field, unit="s", lo=0.0, lo_open=True)
    if v > MAX_PERIOD_S:
        fix = (
            f"{value:g} looks like milliseconds: pass {v / 1000:g}"
            if v <= 1000
            else "give the control period in seconds"
        )
        raise InputError(
            file=file,
            field=field,
            expected=f"a control period in seconds, {MIN_PERIOD_S:g} to {MAX_PERIOD_S:g}",
            got=value,
            fix=fix,
        )
    if v < MIN_PERIOD_S:
        raise InputError(
            file=file,
            field=field,
            expected=f"a control period in seconds, {MIN_PERIOD_S:g} to {MAX_PERIOD_S:g}",
            got=value,
            fix="give the period in seconds (1/frequency), e.g. 0.033 for 30 Hz",
        )
    return v


def period_disagreement(a_s: float, b_s: float) -> float:
    """Relative disagreement |a - b| / b of two periods (inf when either is not positive)."""
    if not (a_s > 0 and b_s > 0 and math.isfinite(a_s) and math.isfinite(b_s)):
        return math.inf
    return abs(a_s - b_s) / b_s


def read_csv_rows(path: str | Path, what: str = "a CSV file") -> list[list[str]]:
    """The rows of a checked UTF-8 CSV file (blank lines dropped); a malformed file (a
    field of more than 1 MB, a NUL byte, an open quote) is an InputError."""
    import csv
    import io

    text = read_text(path, what)
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(max(limit, 1 << 20))
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as e:
        raise InputError(
            file=path,
            expected=what,
            got=f"malformed CSV ({e})",
            fix="save the table as plain comma-separated values",
        ) from None
    finally:
        csv.field_size_limit(limit)
    return rows


def csv_header(row: list[str], path: str | Path, what: str) -> list[str]:
    """Header names stripped of spaces; empty or repeated names refused."""
    cols = [c.strip() for c in row]
    for i, c in enumerate(cols):
        if not c:
            raise InputError(
                file=path,
                field=f"column {i + 1}",
                expected=f"{what} with a name for every column",
                got="an empty column name",
            )
        if c in cols[:i]:
            raise InputError(
                file=path, field=c, expected="each column named once", got=f"{c!r} twice"
            )
        if not c.isprintable():
            raise InputError(
                file=path,
                field=repr(c),
                expected="printable column names",
                got="a name with a newline or control character",
            )
    return cols


def _check_width(row: list[str], width: int, i: int, path: str | Path) -> None:
    """Refuse data row ``i`` (0-based; row ``i + 2`` of the file, after its header) unless it
    has ``width`` fields."""
    if len(row) != width:
        raise InputError(
            file=path,
            field=f"row {i + 2}",
            expected=f"{width} fields, as in the header",
            got=f"{len(row)} fields",
            fix="give every row one value per column",
        )


def csv_records(
    rows: list[list[str]],
    cols: list[str],
    path: str | Path,
) -> list[dict[str, str]]:
    """Data rows as dicts keyed by ``cols``; a row with more or fewer fields is refused."""
    out = []
    for i, r in enumerate(rows):
        _check_width(r, len(cols), i, path)
        out.append({c: v.strip() for c, v in zip(cols, r, strict=True)})
    return out


def numeric_rows(
    rows: list[list[str]], header: list[str], path: str | Path, *, empty_nan: bool = False
) -> Any:
    """Data rows of numbers as a (rows, columns) float array; a ragged row, a cell that is
    not a number, NaN or Inf is refused naming row and column (an empty cell is NaN with
    ``empty_nan``)."""
    import numpy as np

    out = np.empty((len(rows), len(header)))
    for i, r in enumerate(rows):
        _check_width(r, len(header), i, path)
        for j, cell in enumerate(r):
            text = cell.strip()
            if not text and empty_nan:
                out[i, j] = np.nan
                continue
            try:
                v = float(text)
            except ValueError:
                v = None
            if v is None or not math.isfinite(v):
                got = text[:40] or "an empty cell"
                if v is not None:
                    got = f"{'NaN' if math.isnan(v) else 'an infinity'} ({got})"
                raise InputError(
                    file=path,
                    field=f"row {i + 2}, column {header[j]!r}",
                    expected="a finite number",
                    got=got,
                    fix=f"replace it with the number recorded there (e.g. 0.125), or delete "
                    f"row {i + 2}",
                )
            out[i, j] = v
    return out


PERIOD_TOLERANCE = 0.05
"""Relative disagreement of two control periods above which a warning is named."""


def period_warnings(
    control_dt_s: float,
    *,
    tick_times_s: Any = None,
    episodes: Any = None,
    dataset_fps: float | None = None,
    source: str = "",
) -> list[str]:
    """Named warnings (``control_period_mismatch: ...``) when the control period disagrees
    by more than 5 % with the median tick interval of a timing log or with a dataset's
    fps."""
    import numpy as np

    out = []
    if tick_times_s is not None:
        t = np.asarray(tick_times_s, dtype=float)
        ep = np.zeros(t.shape, dtype=np.int64) if episodes is None else np.asarray(episodes)
        d = np.diff(t)
        d = d[(np.diff(ep) == 0) & np.isfinite(d) & (d > 0)]
        if d.size >= 3:
            med = float(np.median(d))
            if period_disagreement(control_dt_s, med) > PERIOD_TOLERANCE:
                out.append(
                    f"control_period_mismatch: the control period {control_dt_s:g} s "
                    f"differs by {period_disagreement(control_dt_s, med):.0%} from the "
                    f"median tick interval {med:.4g} s of the timing log {source}".strip()
                    + "; check control.dt_s (seconds) and the loop's rate"
                )
    if dataset_fps is not None and dataset_fps > 0:
        ds = 1.0 / dataset_fps
        if period_disagreement(control_dt_s, ds) > PERIOD_TOLERANCE:
            out.append(
                f"control_period_mismatch: the control period {control_dt_s:g} s "
                f"differs by {period_disagreement(control_dt_s, ds):.0%} from the "
                f"dataset's frame period 1/{dataset_fps:g} = {ds:.4g} s; check "
                "control.dt_s (seconds) against info.json's fps"
            )
    return out
