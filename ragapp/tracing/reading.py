"""Tolerant reading of stored trace JSON: a missing or mistyped value becomes the default, never an error, so
rows written by older versions still open."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def read_str(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return value if isinstance(value, str) else default


def read_opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def read_num(data: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    value = data.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def read_opt_num(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def read_int(data: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = data.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default


def read_opt_int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


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
