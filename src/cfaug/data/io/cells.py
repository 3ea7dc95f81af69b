"""Reading one cell: its text or a missing value, what kind of non-text it holds, a numeric label's
spelling, and a row made safe to write as JSON."""

from __future__ import annotations

import math
from typing import Any

from cfaug.data.io.encoding import _clean_nested, _clean_unicode


def _cell_text(value: Any) -> str | None:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing values
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def _kind(value: Any) -> str | None:
    """How to name a cell that is not text (a JSON object, a number, ...), or None for a string or a missing
    value. Text columns must hold strings; ids and labels may also be numbers."""
    if value is None or isinstance(value, str):
        return None
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, (list, tuple)):
        return "a JSON array"
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "true/false"
    if isinstance(value, (int, float)) or type(value).__module__ == "numpy" and hasattr(value, "item"):
        if hasattr(value, "shape") and getattr(value, "shape", ()) != ():
            return "an array"
        return "a number"
    return f"a {type(value).__name__}"


def _number(value: str) -> str | None:
    """The integer spelling of a numeric label value (``"1.0"`` -> ``"1"``), or None for a non-number."""
    try:
        f = float(value)
    except ValueError:
        return None
    if f != f or f in (float("inf"), float("-inf")):
        return None
    return str(int(f)) if f.is_integer() else repr(f)


def _jsonable_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if isinstance(v, (str, dict, list)):
            v = _clean_nested(v)
        elif isinstance(v, float) and math.isnan(v):
            v = None
        elif hasattr(v, "item") and not isinstance(v, (list, dict, str)):
            try:
                v = v.item()
            except (ValueError, AttributeError):
                v = str(v)
        out[_clean_unicode(str(k))] = v
    return out
