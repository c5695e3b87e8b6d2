"""Names from input files (joints, motors, stages, features) made safe where they land.

One module for every place a name taken from an input file reaches a generated file:

- file names (``safe_slug``, ``safe_filename``): a short slug of the name's safe characters
  plus a hash of the whole name, so ``x/../../ESCAPED`` cannot leave the output folder and
  two names that slug alike still get different files;
- Python (``py_literal``, ``py_comment``): string literals quoted with ``repr`` (which
  escapes newlines and every other non-printable character), comments without a raw line
  break, so a name never becomes code;
- TOML (``toml_key``, ``toml_string``, ``toml_value``): a bare key where the name is one,
  else a quoted basic string with TOML's own escapes (never JSON's surrogate pairs);
- XML/MJCF (``xml_attr``, ``xml_text``, ``xml_comment``);
- the parse-back checks (``checked_python``, ``checked_toml``, ``checked_xml``): every
  generated file is parsed before it is written, and a file that does not parse is a
  ``GeneratedFileError`` (a ``SimgapError``), never a written file.

A name that a format cannot hold (a lone surrogate anywhere; a NUL or other control
character in XML, which XML 1.0 forbids even escaped, where it lands in data) is refused
with an ``InputError`` naming where it came from.
"""

from __future__ import annotations

import ast
import hashlib
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape as _xml_escape
from xml.sax.saxutils import quoteattr as _quoteattr

from simgap.errors import InputError, SimgapError

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


class GeneratedFileError(SimgapError):
    """A generated file did not parse back (a bug in its writer, or a name that slipped
    through unescaped): nothing was written."""

    def __init__(self, what: str, why: str) -> None:
        super().__init__(
            f"the generated {what} does not parse ({why}); nothing was written. "
            "This is a bug in simgap: please report it with the input's names."
        )


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


def shown(name: str) -> str:
    """A name for a terminal or log line: as is when every character is printable, else its
    ``repr`` (no raw line break or escape sequence reaches the terminal)."""
    name = str(name)
    return name if name.isprintable() else repr(name)


# -- Python ---------------------------------------------------------------------------------


def py_literal(text: str) -> str:
    """A Python string literal of ``text`` (``repr``): safe inside generated code and in a
    ``#`` comment (no raw newline, carriage return or form feed survives)."""
    return repr(str(text))


def py_comment(text: str) -> str:
    """``text`` for a ``#`` comment in generated Python: ``repr``'s escaping without the
    quotes, so a newline arrives as the two characters ``\\n`` and no line can be added."""
    return repr(str(text))[1:-1]


def checked_python(
    source: str,
    what: str = "Python file",
    allowed: Sequence[type[ast.stmt]] = (ast.ImportFrom, ast.Import, ast.Assign, ast.Expr),
) -> str:
    """``source`` once it compiles and holds only statements of the ``allowed`` kinds at its
    top level (imports, assignments, the docstring: no call statement, no ``def``, no
    ``if``), every expression statement a string constant.

    Raises:
        GeneratedFileError: it does not compile, or holds another statement.
    """
    try:
        tree = ast.parse(source)
        compile(tree, f"<{what}>", "exec")
    except (SyntaxError, ValueError) as e:
        raise GeneratedFileError(what, str(e)) from None
    for node in tree.body:
        if not isinstance(node, tuple(allowed)) or (
            isinstance(node, ast.Expr)
            and not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str))
        ):
            raise GeneratedFileError(
                what, f"unexpected {type(node).__name__} statement at line {node.lineno}"
            )
    return source


# -- TOML -----------------------------------------------------------------------------------

_TOML_ESC = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _no_surrogate(text: str, where: str) -> None:
    if _SURROGATE.search(text):
        raise InputError(
            field=where,
            expected="text of Unicode characters",
            got=f"{text!r} (it holds a lone surrogate, which no UTF-8 file can hold)",
            fix="rename it in its source file",
        )


def toml_string(text: str, where: str = "name") -> str:
    """A TOML basic string of ``text``: ``"`` and ``\\`` escaped, every control character
    (C0, DEL) as ``\\uXXXX`` or its short escape; other Unicode kept as is.

    Raises:
        InputError: ``text`` holds a lone surrogate (``where`` names its source).
    """
    text = str(text)
    _no_surrogate(text, where)
    out = []
    for ch in text:
        if ch in _TOML_ESC:
            out.append(_TOML_ESC[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_key(name: str, where: str = "name") -> str:
    """One TOML key: bare (``A-Za-z0-9_-``) where the name is one, else a quoted key."""
    name = str(name)
    return name if _BARE_KEY.fullmatch(name) else toml_string(name, where)


def toml_value(v: Any, where: str = "value") -> str:
    """A TOML value: strings quoted (``toml_string``), booleans, finite numbers, lists."""
    if isinstance(v, str):
        return toml_string(v, where)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            raise InputError(field=where, expected="a finite number", got=v)
        return f"{v:.7g}" if "e" in f"{v:.7g}" or "." in f"{v:.7g}" else f"{v:.7g}.0"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, where) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def checked_toml(text: str, what: str = "TOML file") -> dict[str, Any]:
    """The parsed ``text``.

    Raises:
        GeneratedFileError: it does not parse.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise GeneratedFileError(what, str(e)) from None


# -- XML / MJCF / HTML ----------------------------------------------------------------------


def _xml_chars(text: str, where: str) -> str:
    text = str(text)
    bad = _XML_FORBIDDEN.search(text)
    if bad:
        raise InputError(
            field=where,
            expected="a name XML can hold (no control characters "
            "but tab, newline and carriage return)",
            got=f"{text!r} (holds {bad.group()!r})",
            fix="rename it in its source file",
        )
    return text


def xml_attr(text: str, where: str = "name") -> str:
    """A quoted XML attribute value (quotes included): ``& < > "`` and tab, newline and
    carriage return as character references, so the name reads back exactly.

    Raises:
        InputError: the name holds a character XML 1.0 forbids.
    """
    return _quoteattr(_xml_chars(text, where), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def xml_text(text: str, where: str = "name") -> str:
    """XML element text: ``& < >`` escaped, carriage returns as ``&#13;``."""
    return _xml_escape(_xml_chars(text, where), {"\r": "&#13;"})


def xml_comment(text: str) -> str:
    """``text`` for an XML comment: ``--`` (which would end it) split, control characters
    escaped as in ``repr``, no trailing ``-``."""
    out = py_comment(text)
    while "--" in out:
        out = out.replace("--", "- -")
    return out + " " if out.endswith("-") else out


_ATTR = re.compile(r'(\s[\w:.-]+=)"([^"]*)"')
_ATTR_WS = {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def xml_attr_whitespace(xml: str) -> str:
    """MuJoCo's XML writer (``MjSpec.to_xml``) leaves a tab, newline or carriage return raw
    inside an attribute, which every XML parser but MuJoCo's reads back as a space: write
    them as character references so a name reads back exactly everywhere."""

    def fix(m: re.Match[str]) -> str:
        val = m.group(2)
        for k, v in _ATTR_WS.items():
            val = val.replace(k, v)
        return f'{m.group(1)}"{val}"'

    return _ATTR.sub(fix, xml)


def checked_xml(
    text: str, what: str = "XML file", validate: Callable[[str], object] | None = None
) -> ET.Element:
    """The root element of ``text`` parsed by ElementTree, after ``validate(text)`` (e.g.
    MuJoCo's compiler) where given.

    Raises:
        GeneratedFileError: it does not parse, or ``validate`` raises.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise GeneratedFileError(what, str(e)) from None
    if validate is not None:
        try:
            validate(text)
        except Exception as e:  # noqa: BLE001 - any failure of the check means: do not write
            raise GeneratedFileError(what, f"{type(e).__name__}: {e}") from None
    return root


def names_round_trip(
    written: Mapping[str, Any] | Sequence[str], expected: Sequence[str], what: str
) -> None:
    """Check that the names read back from a generated file are exactly ``expected``.

    Raises:
        GeneratedFileError: they differ.
    """
    got = list(written)
    if got != list(expected):
        raise GeneratedFileError(what, f"names read back {got!r}, written {list(expected)!r}")
