"""Unicode safety of what is read: undecodable bytes (kept as ``surrogateescape`` surrogates), lone
surrogates and control characters are named as a row's problem (the row is rejected, so no later step sees
them), or replaced by U+FFFD where the text is only reported."""

from __future__ import annotations

from typing import Any

from cfaug.quoting import quote


def _has_undecodable(value: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in value)


def _surrogate_problem(value: str, col: str) -> str | None:
    """Why ``value`` cannot be written as UTF-8, or None. Undecodable input bytes reach here as the
    surrogates of ``surrogateescape``; a JSON escape such as ``"\\ud800"`` gives a lone surrogate."""
    if not any("\ud800" <= ch <= "\udfff" for ch in value):
        return None
    if _has_undecodable(value):
        return f"undecodable bytes (not UTF-8) in column {quote(col)}"
    return f"a lone surrogate (not valid Unicode) in column {quote(col)}"


#: control characters a text may not hold: C0 other than tab, line feed and carriage return, and DEL. (C1
#: characters are left alone: text decoded from Windows-1252 as Latin-1 holds its dashes and quotes there.)
CONTROL_CHARACTERS = frozenset([*map(chr, range(0x00, 0x09)), "\x0b", "\x0c", *map(chr, range(0x0e, 0x20)), "\x7f"])


def _control_problem(value: str, col: str) -> str | None:
    """Why ``value`` is refused for holding a control character (NUL, escape...), or None. A prompt, a
    comparison and an output file would each treat such a character differently, so the row is rejected
    when it is read rather than cleaned by some steps and not others."""
    for pos, ch in enumerate(value):
        if ch in CONTROL_CHARACTERS:
            return f"a control character U+{ord(ch):04X} at character {pos + 1} of column {quote(col)}"
    return None


def _unicode_problem(value: str, col: str) -> str | None:
    """Why ``value`` cannot be used as read: undecodable bytes, a lone surrogate or a control character
    (see :func:`_control_problem`); None when it can."""
    return _surrogate_problem(value, col) or _control_problem(value, col)


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
