"""Tolerant reading of stored trace JSON: a missing or mistyped value becomes the default, never an error, so
rows written by older versions still open."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


class AsDict:
    """For a dataclass whose stored JSON is its fields as they are."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(cast("DataclassInstance", self))


def read_str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def read_opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_num(data: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    number = _number(data.get(key))
    return default if number is None else number


def read_opt_num(data: Mapping[str, Any], key: str) -> float | None:
    return _number(data.get(key))


def read_int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    number = _number(data.get(key))
    return default if number is None else int(number)


def read_opt_int(data: Mapping[str, Any], key: str) -> int | None:
    number = _number(data.get(key))
    return None if number is None else int(number)


def read_list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    return list(value) if isinstance(value, list | tuple) else []


def read_dict(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return dict(value) if isinstance(value, Mapping) else {}


def read_maps(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return [item for item in read_list(data, key) if isinstance(item, Mapping)]


def read_map(data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = data.get(key)
    return value if isinstance(value, Mapping) else None
