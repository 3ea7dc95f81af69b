"""Sentences of a text by punctuation, with no parser: split after ``.``, ``!`` or ``?`` followed by space,
at line breaks and, with ``html=True``, at HTML line-break tags (``<br />``, as in IMDB reviews)."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_HTML_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def split_sentences(text: str, *, html: bool = False) -> list[str]:
    """The non-empty sentences of ``text``, stripped. ``html``: ``<br />`` tags end a sentence too."""
    if html:
        text = _HTML_BREAK.sub("\n", text)
    return [x.strip() for x in _SENTENCE_END.split(text) if x and x.strip()]
