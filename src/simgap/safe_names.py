"""Names from input files (joints, motors, stages, features) made safe for paths and code.

A file name derived from such a name is a short slug of its safe characters plus a hash
of the whole name, so ``x/../../ESCAPED`` cannot leave the output folder and two names that
slug alike still get different files. Generated Python quotes strings with ``repr`` (which
escapes newlines and every other non-printable character), so a name never becomes code.
"""

from __future__ import annotations

import hashlib
import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_slug(name: str, max_len: int = 40) -> str:
    """The name's safe characters (letters, digits, ``_ . -``), runs of others as ``_``;
    no leading dot; at most ``max_len`` characters; ``x`` when nothing is left."""
    slug = _UNSAFE.sub("_", str(name)).strip("._-")[:max_len]
    return slug or "x"


def safe_filename(name: str, suffix: str = "", prefix: str = "") -> str:
    """``prefix + slug + '-' + 8 hex digits of sha256(name) + suffix``: one path component
    that stays inside its folder, whatever ``name`` holds."""
    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{prefix}{safe_slug(name)}-{digest}{suffix}"


def py_literal(text: str) -> str:
    """A Python string literal of ``text`` (``repr``): safe inside generated code and in a
    ``#`` comment (no raw newline, carriage return or form feed survives)."""
    return repr(str(text))


def py_comment(text: str) -> str:
    """``text`` for a ``#`` comment in generated Python: ``repr``'s escaping without the
    quotes, so a newline arrives as the two characters ``\\n`` and no line can be added."""
    return repr(str(text))[1:-1]


def xml_comment(text: str) -> str:
    """``text`` for an XML comment: ``--`` (which would end it) split, control characters
    escaped as in ``repr``."""
    out = py_comment(text)
    while "--" in out:
        out = out.replace("--", "- -")
    return out
