"""Reading a CSV with a header into its column names and rows, with the usual errors."""

from __future__ import annotations

from pathlib import Path

from simgap.errors import InputError
from simgap.validate import csv_header, csv_records, read_csv_rows


def read_csv_table(
    path: str | Path,
    *,
    what: str,
    fix: str,
) -> tuple[list[str], list[dict[str, str]]]:
    """The header's column names and the rows (as dicts) of a CSV file.

    Args:
        what: what the file should be, for the message (e.g. "a frames index (index.csv)").
        fix: how the user points at the right file.

    Raises:
        InputError: the file does not exist or is not UTF-8 text, a column name is
            empty or repeated, or a row has more or fewer fields than the header.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(file=path, expected=what, got="no such file", fix=fix)
    rows = read_csv_rows(path, what)
    if not rows:
        return [], []
    cols = csv_header(rows[0], path, what)
    return cols, csv_records(rows[1:], cols, path)
