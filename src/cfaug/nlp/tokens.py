"""Word and punctuation tokens, and the token edit distance every edit-rate figure is computed with."""

from __future__ import annotations

import re
from collections.abc import Sequence

try:  # C++ implementation when available; the pure-Python one below gives the same numbers
    from rapidfuzz.distance.Levenshtein import distance as _fast_levenshtein
except ImportError:  # pragma: no cover
    _fast_levenshtein = None

_TOKEN = re.compile(r"\w+(?:'\w+)?|[^\w\s]", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens (the tokenization every edit-rate figure uses)."""
    return _TOKEN.findall(text.lower())


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance between two token sequences (insert, delete, substitute cost 1)."""
    if _fast_levenshtein is not None:
        return int(_fast_levenshtein(list(a), list(b)))
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def token_edit_rate(original: str, new: str) -> float:
    """Token-level Levenshtein distance divided by the original's token count (0 = unchanged)."""
    a, b = tokenize(original), tokenize(new)
    if not a:
        return 0.0 if not b else 1.0
    return levenshtein(a, b) / len(a)
