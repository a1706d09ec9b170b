"""Strict JSON for everything ragbag prints or serves: ``--json``, MCP results, agent observations.

Python's ``json`` writes a float NaN as a bare ``NaN``, which JavaScript, jq and Go reject. A
pandas frame turns every missing score into NaN, so the leak is easy to reintroduce: every
JSON ragbag emits goes through ``dumps`` here, which maps NaN/±Infinity (and pandas' NaT/NA)
to ``null`` and then serialises with ``allow_nan=False``, so a stray non-finite value is a
loud error in tests rather than a silently invalid document for a user.

JSON printed to a terminal must not drive it either (``ragbag search --json`` of a document
whose title holds escape sequences): ``json`` escapes C0 controls itself but, with non-ASCII kept
readable, writes DEL, the C1 controls and the bidi overrides raw (``ragbag.core.controls``).
``dumps`` writes those as ``\\uXXXX`` too: the same string to every parser, no control byte on
the screen.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any

from ragbag.core import controls

# ``json`` escapes the C0 controls in strings itself (a raw newline is its indentation); the
# rest are only ever inside a string, where a \u escape means the same character.
_ESCAPES = {c: f"\\u{c:04x}" for c in controls.codes() if c > 0x1F}


def clean(value: Any) -> Any:
    """The value with every non-finite float and missing marker replaced by None, recursively;
    NumPy scalars and arrays become plain Python."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [clean(v) for v in value]
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    module = type(value).__module__
    if module.startswith("numpy"):
        if hasattr(value, "tolist"):
            return clean(value.tolist())
    if module.startswith("pandas"):
        import pandas as pd

        if value is pd.NaT or value is pd.NA:
            return None
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
        if isinstance(value, pd.DataFrame):
            return records(value)
    return str(value)


def records(frame) -> list[dict[str, Any]]:
    """A DataFrame's rows as strict-JSON-ready dicts (missing scores are None, not NaN)."""
    return [clean(r) for r in frame.to_dict("records")]


def dumps(value: Any, indent: int | None = None) -> str:
    """Strict JSON text (no NaN/Infinity ever), non-ASCII kept readable but no control character raw."""
    text = json.dumps(clean(value), indent=indent, ensure_ascii=False, allow_nan=False)
    return text.translate(_ESCAPES)
