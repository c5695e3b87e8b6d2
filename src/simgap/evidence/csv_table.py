"""Reading a CSV with a header into its column names and rows, with the usual errors."""

from __future__ import annotations

import csv
from pathlib import Path

from simgap.errors import InputError


def read_csv_table(path: str | Path, *, what: str, fix: str,
                   ) -> tuple[list[str], list[dict[str, str]]]:
    """The header's column names and the rows (as dicts) of a CSV file.

    Args:
        what: what the file should be, for the message (e.g. "a frames index (index.csv)").
        fix: how the user points at the right file.

    Raises:
        InputError: the file does not exist or is not UTF-8 text.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(file=path, expected=what, got="no such file", fix=fix)
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            cols = [c.strip() for c in (reader.fieldnames or [])]
            rows = list(reader)
    except UnicodeDecodeError as e:
        raise InputError(file=path, expected=f"{what} as UTF-8 text", got=str(e)) from e
    return cols, rows
