"""Quoting user data in messages: a cell, a column name, an option's value or a server's answer is quoted
through :func:`quote` (or :func:`quote_list` for names), never more than :data:`QUOTE_CHARS` characters of
it, so that a one-line megabyte file or a huge answer gives a short error."""

from __future__ import annotations


#: The most characters of user data (a cell, a column name, an option's value, a server's answer) that one
#: quotation in a message holds; longer data is cut there and its full length is said instead.
QUOTE_CHARS = 200


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` as it is when at most ``limit`` characters long, else its first ``limit`` characters
    followed by ``… (N characters)``, N being its whole length."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"


def quote(value: object, limit: int = QUOTE_CHARS) -> str:
    """``value`` quoted for a message, as ``repr`` quotes it, but never more than ``limit`` characters of
    it: a longer value shows its start, then ``… (N characters)``. Every message that quotes user data
    quotes it through this function (or :func:`quote_list`), so that a one-line megabyte file gives a
    short error."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return repr(value)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def quote_list(values: object, limit: int = QUOTE_CHARS, *, sep: str = ", ", empty: str = "none") -> str:
    """Names (columns, labels) joined by ``sep`` for a message, each one cut to ``limit`` characters
    and the whole list to about ``limit`` characters: the names that do not fit are counted
    (``…, and 950 more``). ``empty`` when there are none."""
    names = [str(v) for v in values]  # type: ignore[attr-defined]
    if not names:
        return empty
    shown: list[str] = []
    used = 0
    for name in names:
        item = shorten(name, limit)
        if shown and used + len(sep) + len(item) > limit:
            break
        shown.append(item)
        used += len(item) + (len(sep) if len(shown) > 1 else 0)
    rest = len(names) - len(shown)
    return sep.join(shown) + (f"{sep}… and {rest:,} more" if rest else "")
