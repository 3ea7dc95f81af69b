"""Word and punctuation tokens, and the token edit distance every edit-rate figure is computed with."""

from __future__ import annotations

import re
import unicodedata
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


#: quote and apostrophe spellings read as the plain ASCII ones when comparing words
_QUOTE_FORMS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u02bc": "'", "\u2032": "'",
                              "`": "'", "\u00b4": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"',
                              "\u00ab": '"', "\u00bb": '"'})
#: a clitic a tokenizer split off its word ("it 's", "did n't", "we 'll") joined back
_SPLIT_CLITIC = re.compile(r"(?<=\w)\s+(n't|'s|'re|'ve|'ll|'d|'m)(?!\w)", re.I)
_WORD_CHARS = re.compile(r"[^\W_]+", re.UNICODE)


def word_sequence(text: str) -> tuple[str, ...]:
    """The words of ``text`` as compared by :func:`same_words`: Unicode-normalised (NFKC), case-folded, curly
    and straight quotes alike, clitics a tokenizer split off joined back ("it 's" = "it's", "did n't" =
    "didn't"), apostrophes dropped inside words, and punctuation, spacing and underscores ignored.

    >>> word_sequence("It 's located, in a GREAT part!")
    ('its', 'located', 'in', 'a', 'great', 'part')
    """
    text = unicodedata.normalize("NFKC", text or "").translate(_QUOTE_FORMS).casefold()
    text = _SPLIT_CLITIC.sub(r"\1", text)
    text = re.sub(r"(?<=\w)'(?=\w)", "", text)
    return tuple(_WORD_CHARS.findall(text))


def same_words(a: str, b: str) -> bool:
    """Whether two texts hold the same words in the same order (see :func:`word_sequence`): a rewrite that
    differs from its source only in case, spacing, punctuation, quote style or tokenization is unchanged.

    >>> same_words("it 's located in a great part of scottsdale .", "It's located in a great part of Scottsdale")
    True
    >>> same_words("did n't like it", "didn\u2019t like it!"), same_words("good food", "bad food")
    (True, False)
    """
    return word_sequence(a) == word_sequence(b)


def has_form(word: str, words: set[str]) -> bool:
    """Whether ``words`` holds ``word`` or, for words of four letters or more, another form of its stem
    ("sleeps" and "sleeping", "taste" and "tasted"): prefixes of all but the last three letters, at least four.

    >>> has_form("sleeps", {"a", "man", "sleeping"}), has_form("man", {"woman"})
    (True, False)
    """
    if word in words:
        return True
    if len(word) < 4:
        return False
    stem = word[: max(4, len(word) - 3)]
    return any(len(w) >= 4 and (w.startswith(stem) or word.startswith(w[: max(4, len(w) - 3)])) for w in words)
