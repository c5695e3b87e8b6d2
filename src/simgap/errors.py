"""Errors simgap raises: one root, and an input error that tells the user how to fix it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class SimgapError(Exception):
    """Root of every error simgap raises on purpose."""


class InputError(SimgapError):
    """Bad input: names the file, the field, what was expected, what came, and the fix.

    The CLI prints this message and exits with status 2; it never shows a traceback.
    """

    def __init__(
        self,
        *,
        file: str | Path | None = None,
        field: str | None = None,
        expected: str,
        got: object = None,
        fix: str | None = None,
    ) -> None:
        self.file = None if file is None else str(file)
        self.field = field
        self.expected = expected
        self.got = got
        self.fix = fix
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.field:
            where.append(_named(self.field))
        head = ": ".join(where) if where else "input"
        parts = [f"{head}: expected {self.expected}"]
        if self.got is not None:
            got = self.got if isinstance(self.got, str) else repr(self.got)
            parts.append(f"got {got}")
        msg = "; ".join(parts) + "."
        return f"{msg} Fix: {self.fix or self._default_fix()}"

    def _default_fix(self) -> str:
        """Where a raise site names no fix: what to change, and into what."""
        if self.got == "no such file":
            return "check the path"
        if self.got == "a folder, not a file":
            return "name the file inside the folder"
        if self.got == "a file, not a folder":
            return "name the folder that holds it"
        what = (
            f"{_named(self.field)} of {self.file}"
            if self.field and self.file
            else _named(self.field)
            if self.field
            else self.file or "the input"
        )
        return f"make {what} {self.expected}"


def _named(field: str) -> str:
    """A field as an error names it: ``field 'x'``; a place that quotes its own names
    (``row 2, column 'q'``) as it is, never quoted twice."""
    return field if "'" in field or '"' in field else f"field '{field}'"


def found_instead(path: str | Path, wanted: str = "file") -> str:
    """What stands at ``path``, said against the ``wanted`` kind ("file" or "folder"), as
    an error's ``got``: "a folder, not a file", "a file, not a folder", or "no such file"
    ("no such folder") where nothing is there. A reader that found no file of its kind
    says what it found instead of calling a folder missing."""
    p = Path(path)
    if wanted == "file" and p.is_dir():
        return "a folder, not a file"
    if wanted == "folder" and p.exists() and not p.is_dir():
        return "a file, not a folder"
    return f"no such {wanted}"


class NameNotFoundError(InputError, KeyError):
    """A name looked up among known names was not there; the message lists the valid ones."""

    def __init__(
        self,
        kind: str,
        name: str,
        valid: Iterable[str],
        *,
        file: str | Path | None = None,
        field: str | None = None,
        where: str | None = None,
    ) -> None:
        names = sorted(set(valid))
        shown = ", ".join(names[:40]) + (" ..." if len(names) > 40 else "")
        fix = f"use one of: {shown}" if names else f"the source defines no {kind} at all"
        super().__init__(
            file=file,
            field=field,
            expected=f"a known {kind} name",
            got=name,
            fix=f"{fix} (in {where})" if where and names else fix,
        )
        self.kind = kind
        self.name = name
        self.valid = names

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return Exception.__str__(self)


class MissingExtraError(SimgapError):
    """An optional dependency is needed; the message says which extra to install."""

    def __init__(self, extra: str, module: str, purpose: str, first: str = "") -> None:
        super().__init__(
            f"{purpose} needs the '{module}' package. "
            + (f"Install {first} first, then: " if first else "Install it with: ")
            + f"pip install 'simgap[{extra}]'"
        )
        self.extra = extra
        self.module = module


class OutputExistsError(SimgapError):
    """The output folder exists and is not empty; refused unless forced."""
