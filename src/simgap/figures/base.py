"""Typed figures: the contract between a branch and everything that reads its Finding.

A branch's figures (and the data its report plots) are a frozen dataclass deriving from
:class:`Record`; each field is declared with :func:`figure`, which records its unit and one
line of meaning. The same declaration gives four things, so they cannot drift apart:

- ``to_dict``: the JSON form written into ``findings.json`` (non-finite floats become null);
- ``from_mapping``: that form read back into the type; an unknown name is refused with the list
  of valid names, a wrong JSON type is refused naming the field;
- ``units``: every figure's unit by dotted path (``stages.*.p50_s`` for a mapping's entries);
- ``json_schema``: the JSON Schema of the form, which ``simgap.figures.schema`` publishes.

Field types are limited to what JSON carries: ``float``, ``int``, ``bool``, ``str``, ``None``,
``Literal[...]``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``Mapping[str, X]``, another
:class:`Record`, unions of those, and ``JSONValue`` for free-form data a plot reads as a whole.
A ``float`` reads JSON null back as NaN: ``findings.json`` writes NaN and inf as null.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, Union

from simgap.errors import InputError

JSONValue = Any
"""A free-form JSON value (an object, a list, a number...): a plot's data read as a whole."""

UNITLESS = "1"
"""The unit of a ratio, a count or a fraction."""
TEXT = ""
"""The unit of a name, a flag or a sentence."""


def sig(v: float, digits: int = 3) -> str:
    """``v`` with ``digits`` significant digits and no exponent for everyday magnitudes."""
    if not math.isfinite(v):
        return str(v)
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e6 or a < 1e-4:
        return f"{v:.{digits - 1}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(a)))
    return f"{v:.{decimals}f}"


def finite(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a truth value), else None."""
    if (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    ):
        return float(value)
    return None


@dataclasses.dataclass(frozen=True)
class Headline:
    """One finding's key number in words, as the report's headline and cards print it.

    Attributes:
        text: e.g. "loop p95 91.7 ms against the control period 66.7 ms".
        value: the key number (its unit in ``text``), or None.
        threshold: what it was held against (same unit), or None when nothing was.
    """

    text: str
    value: float | None = None
    threshold: float | None = None


def figure(
    unit: str,
    doc: str,
    *,
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
) -> Any:
    """A dataclass field of a :class:`Record`, with its unit and meaning.

    Args:
        unit: the SI unit (``s``, ``rad``, ``rad/s``, ``m``, ``deg``, ``px``, ``Hz``, ``N m``,
            ``kg``), :data:`UNITLESS` for ratios, fractions and counts, :data:`TEXT` for names.
        doc: one line: what the number is.
        default: the value when a branch leaves the figure out.
        default_factory: as ``dataclasses.field``.
    """
    meta = {"unit": unit, "doc": doc}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


class Record:
    """Base of every typed figures and details type (subclasses are frozen dataclasses).

    Class attributes:
        branch: the branch whose Finding carries this record (``latency``, ``contact``...).
        kind: which of the branch's findings (a branch may write several kinds), ``""`` for one.
        kinds: the kinds a record serves where it serves several (the same details for
            several checks); ``kind`` is then ``""``. :meth:`serves` gives either.
    """

    branch: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    kinds: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def serves(cls) -> tuple[str, ...]:
        """Every kind of finding this record is the figures or details of."""
        return cls.kinds or (cls.kind,)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field by name, nested records and mappings converted."""
        return {f.name: _to_json(getattr(self, f.name)) for f in _fields(type(self))}

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, Any],
        source: str | Path | None = None,
        where: str = "figures",
        *,
        strict: bool = True,
    ) -> Self:
        """Read the JSON form back; errors name ``source``, the field's path and valid names.

        A figure left out reads as not measured (NaN, None, empty). ``strict``: refuse a name
        the type does not declare (off for files older than the schema, which used others).
        """
        return typing.cast(Self, _read_record(cls, data, source, where, strict))

    def headline(self) -> Headline | None:
        """The key number in words where the branch has its own way of saying it (the
        report falls back to the residual against its floor, then the key figure)."""
        return None

    @classmethod
    def units(cls) -> dict[str, str]:
        """Every numeric field's unit by dotted path (``*`` stands for a mapping's keys)."""
        return _units(cls)

    @classmethod
    def figure_names(cls) -> tuple[str, ...]:
        """Its figures' names, in declaration order."""
        return tuple(f.name for f in _fields(cls))

    @classmethod
    def unit_of(cls, name: str) -> str:
        """The unit of one top-level field; an unknown name lists the valid ones."""
        fields = {f.name: f for f in _fields(cls)}
        if name not in fields:
            raise InputError(
                field=name,
                expected=f"a figure of {cls.__name__}",
                got=name,
                fix=f"use one of: {', '.join(sorted(fields))}",
            )
        return str(fields[name].metadata.get("unit", TEXT))

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The JSON Schema of the JSON form (draft 2020-12 keywords)."""
        return _record_schema(cls)


# -- reading ---------------------------------------------------------------------------------


def _fields(cls: Any) -> tuple[dataclasses.Field[Any], ...]:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    return dataclasses.fields(cls)


def _hints(cls: Any) -> dict[str, Any]:
    """The resolved field types of a record class (resolved once per class)."""
    hints = cls.__dict__.get("_resolved_hints")
    if hints is None:
        hints = typing.get_type_hints(cls)
        type.__setattr__(cls, "_resolved_hints", hints)
    return typing.cast(dict[str, Any], hints)


def _is_record(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, Record)


def _to_json(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # numpy scalar
        return _to_json(value.item())
    if hasattr(value, "tolist"):
        return _to_json(value.tolist())
    return value


def _read_record(
    cls: type, data: Any, source: str | Path | None, where: str, strict: bool = True
) -> Any:
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise InputError(
            file=source,
            field=where,
            expected=f"an object ({cls.__name__})",
            got=type(data).__name__,
        )
    fields = _fields(cls)
    names = {f.name for f in fields}
    extra = sorted(set(map(str, data)) - names)
    if extra and strict:
        raise InputError(
            file=source,
            field=f"{where}.{extra[0]}",
            expected=f"a figure of {cls.__name__}",
            got=extra,
            fix=f"use only: {', '.join(sorted(names))}",
        )
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kwargs[f.name] = _absent(hints[f.name], source, f"{where}.{f.name}")
            continue
        kwargs[f.name] = _read(hints[f.name], data[f.name], source, f"{where}.{f.name}", strict)
    return cls(**kwargs)


def _absent(tp: Any, source: str | Path | None, where: str) -> Any:
    """A figure the mapping leaves out, as "not measured": NaN for a number, "" for a name,
    empty for a list or mapping, None for the rest (a whole number or a nested record that
    a hand-written or older file lacks: None, which no writer produces for those types)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType) and type(None) in args:
        return None
    empty = {float: math.nan, str: "", bool: False}
    if tp in empty:
        return empty[tp]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return ()
    if origin in (Mapping, dict) or tp in (dict, Mapping):
        return {}
    return None


def _read(tp: Any, value: Any, source: str | Path | None, where: str, strict: bool = True) -> Any:
    """One value of type ``tp`` from its JSON form (type-checked, not range-checked).

    NumPy scalars and arrays are taken as the Python numbers and lists they hold.
    """
    if tp is Any:
        return value
    if hasattr(value, "tolist") and not isinstance(value, Record):
        value = value.tolist()
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _read(arg, value, source, where, strict)
            except InputError as e:
                errors.append(e)
        raise (
            errors[-1]
            if errors
            else InputError(file=source, field=where, expected=_describe(tp), got=value)
        )
    if origin is Literal:
        if value in args:
            return value
        raise InputError(
            file=source, field=where, expected=f"one of {', '.join(map(repr, args))}", got=value
        )
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise InputError(
                file=source, field=where, expected=_describe(tp), got=type(value).__name__
            )
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(
                _read(args[0], v, source, f"{where}[{i}]", strict) for i, v in enumerate(value)
            )
        if len(value) != len(args):
            raise InputError(
                file=source, field=where, expected=_describe(tp), got=f"{len(value)} items"
            )
        return tuple(
            _read(a, v, source, f"{where}[{i}]", strict)
            for i, (a, v) in enumerate(zip(args, value, strict=True))
        )
    if origin in (Mapping, dict, typing.Mapping) or tp in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise InputError(
                file=source, field=where, expected=_describe(tp), got=type(value).__name__
            )
        inner = args[1] if len(args) == 2 else Any
        return {str(k): _read(inner, v, source, f"{where}.{k}", strict) for k, v in value.items()}
    if _is_record(tp):
        return _read_record(tp, value, source, where, strict)
    if tp is type(None):
        if value is None:
            return None
    elif tp is float:
        if value is None:
            return math.nan
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
    elif tp is bool:
        if isinstance(value, bool):
            return value
    elif tp is str:
        if isinstance(value, str):
            return value
    else:
        raise TypeError(f"{where}: the type {tp!r} has no JSON form")
    raise InputError(
        file=source,
        field=where,
        expected=_describe(tp),
        got=f"{type(value).__name__} {str(value)[:60]!r}",
    )


def _describe(tp: Any) -> str:
    """A reader's name for a type: 'a number', 'a list of numbers', ..."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of ({_describe(args[0])})"
        return f"a list of {len(args)} items"
    if origin in (Mapping, dict) or tp in (dict, Mapping):
        return "an object"
    if origin is Literal:
        return f"one of {', '.join(map(repr, args))}"
    if _is_record(tp):
        return f"an object ({tp.__name__})"
    return {
        float: "a number or null",
        int: "a whole number",
        bool: "true or false",
        str: "a string",
        type(None): "null",
    }.get(tp, "a JSON value")


# -- units and schema ------------------------------------------------------------------------


def _units(cls: type, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    hints = _hints(cls)
    for f in _fields(cls):
        path = f"{prefix}{f.name}"
        unit = f.metadata.get("unit", TEXT)
        nested = _nested_records(hints[f.name])
        if nested:
            for sub, star in nested:
                out.update(_units(sub, f"{path}{'.*' if star else ''}."))
        elif unit != TEXT:
            out[path] = unit
    return out


def _nested_records(tp: Any) -> list[tuple[type, bool]]:
    """The records inside ``tp``: (record type, whether it sits under a mapping's keys)."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if _is_record(tp):
        return [(tp, False)]
    if origin in (Union, types.UnionType):
        return [r for a in args for r in _nested_records(a)]
    if origin in (Mapping, dict) and len(args) == 2:
        return [(r, True) for r, _ in _nested_records(args[1])]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return [(r, True) for r, _ in _nested_records(args[0])]
    return []


def _record_schema(cls: type) -> dict[str, Any]:
    hints = _hints(cls)
    props: dict[str, Any] = {}
    for f in _fields(cls):
        s = dict(_type_schema(hints[f.name]))
        unit = f.metadata.get("unit", TEXT)
        doc = f.metadata.get("doc", "")
        if doc or unit:
            s["description"] = f"{doc} [{unit}]" if unit else doc
        if unit:
            s["x-unit"] = unit
        props[f.name] = s
    return {
        "type": "object",
        "title": cls.__name__,
        "description": (cls.__doc__ or "").strip().split("\n")[0],
        "properties": props,
        "required": [f.name for f in _fields(cls)],
        "additionalProperties": False,
    }


def _type_schema(tp: Any) -> dict[str, Any]:
    if tp is Any:
        return {}
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return {"anyOf": [_type_schema(a) for a in args]}
    if origin is Literal:
        return {"enum": list(args)}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _type_schema(args[0])}
        return {
            "type": "array",
            "prefixItems": [_type_schema(a) for a in args],
            "minItems": len(args),
            "maxItems": len(args),
        }
    if origin in (Mapping, dict) or tp in (dict, Mapping):
        inner = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": _type_schema(inner)}
    if _is_record(tp):
        return _record_schema(tp)
    simple: dict[Any, dict[str, Any]] = {
        float: {"type": ["number", "null"]},
        int: {"type": "integer"},
        bool: {"type": "boolean"},
        str: {"type": "string"},
        type(None): {"type": "null"},
    }
    return simple[tp]
