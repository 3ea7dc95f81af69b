"""Unicode safety of what is read: undecodable bytes (kept as ``surrogateescape`` surrogates) and lone
surrogates are named as a row's problem, or replaced by U+FFFD where the text is only reported."""

from __future__ import annotations

from typing import Any


def _has_undecodable(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def _unicode_problem(value: str, col: str) -> str | None:
    """Why ``value`` cannot be written as UTF-8, or None. Undecodable input bytes reach here as the
    surrogates of ``surrogateescape``; a JSON escape such as ``"\\ud800"`` gives a lone surrogate."""
    if not any("\ud800" <= ch <= "\udfff" for ch in value):
        return None
    if _has_undecodable(value):
        return f"undecodable bytes (not UTF-8) in column {col!r}"
    return f"a lone surrogate (not valid Unicode) in column {col!r}"


def _clean_unicode(value: str) -> str:
    """``value`` with undecodable bytes and lone surrogates replaced by U+FFFD, safe to write as UTF-8."""
    if not any("\ud800" <= ch <= "\udfff" for ch in value):
        return value
    value = "".join("\ufffd" if "\ud800" <= ch < "\udc80" or "\udcff" < ch <= "\udfff" else ch for ch in value)
    return value.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def _clean_nested(value: Any) -> Any:
    """:func:`_clean_unicode` applied to every string (and key) inside dicts and lists."""
    if isinstance(value, str):
        return _clean_unicode(value)
    if isinstance(value, dict):
        return {_clean_unicode(str(k)) if isinstance(k, str) else k: _clean_nested(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_nested(v) for v in value]
    return value
