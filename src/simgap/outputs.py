"""Writing outputs: atomically, into a folder the user names, never over the inputs."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from simgap.errors import InputError, OutputExistsError


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write UTF-8 text atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    """Write pretty JSON atomically (NaN is refused: use None)."""
    return atomic_write_text(path, json.dumps(obj, indent=2, allow_nan=False) + "\n")


def prepare_out_dir(path: str | Path, *, force: bool = False) -> Path:
    """Make sure ``path`` is a usable output folder.

    Raises:
        OutputExistsError: it exists and is not empty, and ``force`` is False.
        InputError: it exists and is a file.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(file=path, expected="an output folder", got="an existing file",
                         fix="name a folder, not a file")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise OutputExistsError(
            f"{path}: the output folder exists and is not empty. "
            "Fix: name a new folder, or pass --force to write into it.")
    path.mkdir(parents=True, exist_ok=True)
    return path
