"""Metadata filters: LEANN's operators over document fields and metadata, plus a time window.

Filters are parsed and validated up front (bad JSON or an unknown operator is a one-line error
before any model loads) and evaluated in Python against each chunk's values, so user input is
never pasted into a query string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ragbag.core.errors import RagbagError

_BINARY: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a is not None and a < b,
    "<=": lambda a, b: a is not None and a <= b,
    ">": lambda a, b: a is not None and a > b,
    ">=": lambda a, b: a is not None and a >= b,
    "in": lambda a, b: bool(set(a) & set(b)) if isinstance(a, list) else a in b,
    "not_in": lambda a, b: not set(a) & set(b) if isinstance(a, list) else a not in b,
    "contains": lambda a, b: a is not None and (b in a if isinstance(a, list) else str(b).lower() in str(a).lower()),
    "starts_with": lambda a, b: isinstance(a, str) and a.startswith(b),
    "ends_with": lambda a, b: isinstance(a, str) and a.endswith(b),
}
_UNARY: dict[str, Callable[[Any], bool]] = {
    "is_true": lambda a: bool(a) is True,
    "is_false": lambda a: not a,
}
OPERATORS = tuple(_BINARY) + tuple(_UNARY)


@dataclass(frozen=True)
class Condition:
    field: str
    op: str
    value: Any

    def test(self, record_value: Any) -> bool:
        if self.op in _UNARY:
            return _UNARY[self.op](record_value)
        value = self.value
        if isinstance(record_value, datetime) and isinstance(value, str):
            value = parse_time(value)
        try:
            return _BINARY[self.op](record_value, value)
        except TypeError:
            return False  # incomparable types (a number field against a string) never match


def parse_where(where: str | dict | None) -> list[Condition]:
    """``{"field": {"op": value, ...}, ...}`` (a JSON string or a dict) → ANDed conditions."""
    if where is None or where == "":
        return []
    if isinstance(where, str):
        try:
            where = json.loads(where)
        except json.JSONDecodeError as e:
            raise RagbagError(f"--where is not valid JSON: {e.msg} at column {e.colno}") from None
    if not isinstance(where, dict):
        raise RagbagError('--where must be a JSON object like {"field": {"==": "value"}}')
    out = []
    for field, ops in where.items():
        if not isinstance(ops, dict):
            ops = {"==": ops}  # shorthand {"field": value}
        for op, value in ops.items():
            if op not in OPERATORS:
                raise RagbagError(f"unknown operator {op!r} for {field!r}; use one of: {' '.join(OPERATORS)}")
            if op in ("in", "not_in") and not isinstance(value, list):
                raise RagbagError(f"operator {op!r} for {field!r} needs a JSON list")
            out.append(Condition(str(field), op, value))
    return out


_RELATIVE = re.compile(r"^(\d+)([dwmy])$")
_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}
_FORMATS = "use YYYY-MM-DD, an ISO time, or 7d/2w/6m/1y"


def parse_time(value: str | datetime | date | None) -> datetime | None:
    """ISO dates/times (naive = UTC) or a relative age like ``7d``, ``2w``, ``6m``, ``1y``, as an
    aware UTC time. A moment outside years 1-9999 (``99999999999d``) is a one-line error, not
    an OverflowError from deep inside datetime."""
    if value is None or value == "":
        return None
    try:
        return _utc(value)
    except OverflowError:
        raise RagbagError(f"{value!r} is out of range: dates run from year 1 to 9999") from None


def _utc(value: str | datetime | date) -> datetime:
    if isinstance(value, datetime):
        return value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    m = _RELATIVE.match(value.strip())
    if m:
        return datetime.now(UTC) - timedelta(days=int(m.group(1)) * _DAYS[m.group(2)])
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise RagbagError(f"cannot read {value!r} as a date: {_FORMATS}") from None
    return dt.astimezone(UTC) if dt.tzinfo else dt.replace(tzinfo=UTC)


def matches(record: dict[str, Any], conditions: Iterable[Condition]) -> bool:
    """A record (document fields with metadata keys merged in) passes every condition."""
    return all(c.test(record.get(c.field)) for c in conditions)
