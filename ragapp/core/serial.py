"""One serialiser for the engine's records: dataclasses to JSON-ready values and back, by their type hints.

``dump`` writes a dataclass as a dict of its fields; ``load`` reads one back tolerantly, so rows written by
older versions still open: a missing or mistyped value becomes the field's default (or its type's empty value:
"", 0, False, None, an empty list), a list item that cannot be read is skipped, and keys the class does not
know are dropped. Three field markers shape the stored form: ``SKIP`` keeps a field out of it (a clock),
``OMIT_DEFAULT`` leaves a field out while it holds its default (optional parts of a trace), and ``KEEP_UNKNOWN``
(a ``dict[str, Any]``) keeps the keys this version does not know. A field whose type is a union of dataclasses
is stored with its class's name under ``"type"``, to know which one to read back.

Written here because pydantic's TypeAdapter would validate strictly (an old row with one odd value would not
open at all) and dataclasses.asdict knows no way back.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, Union, cast

T = TypeVar("T")

OMIT_DEFAULT = {"omit_default": True}
KEEP_UNKNOWN = {"keep_unknown": True}
SKIP = {"skip": True}
TYPE_KEY = "type"
_MISSING = dataclasses.MISSING


class Unreadable(ValueError):
    """A stored value that does not fit its type (caught inside ``load``: the field takes its default)."""


def dump(value: Any) -> Any:
    """``value`` as plain JSON types: dataclasses as dicts, tuples and sets as lists, keys as strings, and
    anything else JSON does not know as its string."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _dump_fields(value)
    if isinstance(value, Mapping):
        return {str(k): dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [dump(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _dump_fields(value: Any) -> dict[str, Any]:
    cls = type(value)
    hints = _hints(cls)
    out: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for f in dataclasses.fields(value):
        if f.metadata.get("skip"):
            continue
        item = getattr(value, f.name)
        if f.metadata.get("keep_unknown"):
            extra = dict(item or {})
            continue
        if f.metadata.get("omit_default") and item == _default(f):
            continue
        stored = dump(item)
        if _tagged(hints[f.name]):
            stored = _tag(item, stored)
        out[f.name] = stored
    return {**extra, **out}


def _tag(item: Any, stored: Any) -> Any:
    """A union-of-dataclasses value (or a list of them) with each item's class name."""
    if isinstance(stored, dict) and dataclasses.is_dataclass(item):
        return {TYPE_KEY: type(item).__name__, **stored}
    if isinstance(stored, list) and isinstance(item, list | tuple):
        return [_tag(i, s) for i, s in zip(item, stored, strict=True)]
    return stored


def load(cls: type[T], data: Any) -> T:
    """A ``cls`` read from ``data`` as ``dump`` wrote it; never raises for odd values (see the module)."""
    if not isinstance(data, Mapping):
        data = {}
    hints = _hints(cls)
    values: dict[str, Any] = {}
    known = {f.name for f in dataclasses.fields(cast(Any, cls))}
    for f in dataclasses.fields(cast(Any, cls)):
        if f.metadata.get("keep_unknown"):
            values[f.name] = {k: v for k, v in data.items() if k not in known}
            continue
        if not f.init or f.metadata.get("skip"):
            continue
        try:
            if f.name not in data:
                raise Unreadable(f.name)
            values[f.name] = _read(hints[f.name], data[f.name])
        except Unreadable:
            values[f.name] = _fallback(f, hints[f.name])
    return cls(**values)


def _read(hint: Any, value: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) > 1 and all(dataclasses.is_dataclass(a) for a in options):
            name = value.get(TYPE_KEY) if isinstance(value, Mapping) else None
            chosen = next((a for a in options if a.__name__ == name), None)
            if chosen is None:
                raise Unreadable(f"no {name!r} among {options}")
            return load(chosen, value)
        for option in options:
            try:
                return _read(option, value)
            except Unreadable:
                continue
        raise Unreadable(repr(value))
    if origin is Literal:
        if value in args:
            return value
        raise Unreadable(repr(value))
    if origin in (list, tuple, set, frozenset):
        if not isinstance(value, list | tuple):
            raise Unreadable("not a list")
        item = args[0] if args else Any
        items = []
        for v in value:
            try:
                items.append(_read(item, v))
            except Unreadable:
                continue  # one bad item does not lose the others
        return items if origin is list else origin(items)
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping):
            raise Unreadable("not a mapping")
        inner = args[1] if len(args) == 2 else Any
        out = {}
        for k, v in value.items():
            try:
                out[str(k)] = _read(inner, v)
            except Unreadable:
                continue
        return out
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise Unreadable("not a mapping")
        return load(cast(type, hint), value)
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise Unreadable(repr(value))
    if hint in (int, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return hint(value)
        raise Unreadable(repr(value))
    if hint is str:
        if isinstance(value, str):
            return value
        raise Unreadable(repr(value))
    return value


def _fallback(f: dataclasses.Field[Any], hint: Any) -> Any:
    """A field's value when it is missing or unreadable: its default, else its type's empty value."""
    default = _default(f)
    if default is not _MISSING:
        return default
    return _empty(hint)


def _default(f: dataclasses.Field[Any]) -> Any:
    if f.default is not _MISSING:
        return f.default
    if f.default_factory is not _MISSING:
        return f.default_factory()
    return _MISSING


def _empty(hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return None if type(None) in args else _empty(args[0])
    if origin is Literal:
        return args[0]
    if origin in (list, tuple, set, frozenset):
        return origin()
    if origin is dict or hint is dict:
        return {}
    if hint in (str, int, float, bool):
        return hint()
    if dataclasses.is_dataclass(hint):
        return load(cast(type, hint), {})
    return None


def _tagged(hint: Any) -> bool:
    """Whether values of ``hint`` need their class named to be read back (a union of dataclasses, or a list
    of one)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (list, tuple) and args:
        return _tagged(args[0])
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        return len(options) > 1 and all(dataclasses.is_dataclass(a) for a in options)
    return False


def _hints(cls: Any) -> dict[str, Any]:
    return _cached_hints(cls)


@functools.cache
def _cached_hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


class Stored:
    """For a dataclass stored by this module: ``to_dict()`` and ``from_dict()`` as methods."""

    def to_dict(self) -> dict[str, Any]:
        return cast("dict[str, Any]", dump(self))

    @classmethod
    def from_dict(cls, data: Any) -> typing.Self:
        return load(cls, data)
