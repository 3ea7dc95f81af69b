"""Word and punctuation tokens, and the token edit distance every edit-rate figure is computed with."""

from __future__ import annotations

import html
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
    """The words of ``text`` as :func:`same_words` reads them: Unicode-normalised (NFKC), case-folded, curly
    and straight quotes alike, clitics a tokenizer split off joined back ("it 's" = "it's", "did n't" =
    "didn't"), apostrophes dropped inside words, and punctuation, spacing and underscores ignored.

    >>> word_sequence("It 's located, in a GREAT part!")
    ('its', 'located', 'in', 'a', 'great', 'part')
    """
    text = unicodedata.normalize("NFKC", text or "").translate(_QUOTE_FORMS).casefold()
    text = _SPLIT_CLITIC.sub(r"\1", text)
    text = re.sub(r"(?<=\w)'(?=\w)", "", text)
    return tuple(_WORD_CHARS.findall(text))


#: an HTML or XML tag (``<br />``, ``<p>``, ``</i>``, ``<a href="...">``): markup, not words
_MARKUP = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*?)?/?\s*>")
#: how many layers of HTML escaping are undone (``&amp;lt;`` is ``&lt;`` escaped once more)
_UNESCAPE_DEPTH = 3


def unescaped(text: str) -> str:
    """``text`` with HTML character references undone (``&#x27;`` is ``'``, ``&lt;br /&gt;`` is ``<br />``),
    up to three layers deep (an answer may escape text that was escaped already).

    >>> unescaped("haven&#x27;t &amp;lt;br /&amp;gt;")
    "haven't <br />"
    """
    text = text or ""
    for _ in range(_UNESCAPE_DEPTH):
        if "&" not in text:
            break
        plain = html.unescape(text)
        if plain == text:
            break
        text = plain
    return text


def word_forms(text: str) -> frozenset[str]:
    """The spellings :func:`same_words` compares ``text`` by: its words (:func:`word_sequence`) run together,
    after HTML escaping is undone (:func:`unescaped`), once with markup such as ``<br />`` dropped and once
    with the names of its tags read as words (so an answer that lost only the angle brackets, ``br br``, still
    matches). Running the words together ignores where spaces fall, so punctuation removed or replaced by a
    space ("haven t", "thisbr") makes no difference.

    >>> sorted(word_forms("Great.<br />Fun!"))
    ['greatbrfun', 'greatfun']
    """
    plain = unescaped(text)
    return frozenset("".join(word_sequence(t)) for t in (_MARKUP.sub(" ", plain), plain))


def same_words(a: str, b: str) -> bool:
    """Whether two texts hold the same words in the same order: a rewrite that differs from its source only in
    case, spacing, punctuation, quote style, tokenization, HTML escaping (``&#x27;``, ``&lt;br /&gt;``) or
    markup (``<br />`` dropped, or left as ``br``) is unchanged. Compared by :func:`word_forms`.

    >>> same_words("it 's located in a great part of scottsdale .", "It's located in a great part of Scottsdale")
    True
    >>> same_words("did n't like it", "didn\u2019t like it!"), same_words("good food", "bad food")
    (True, False)
    >>> same_words("i havent been there the food was good", "I haven&#x27;t been there.<br /><br />The food was good.")
    True
    """
    return not word_forms(a).isdisjoint(word_forms(b))


#: words whose insertion or removal can carry a label (a negation), never "function words only"
_LABEL_FUNCTION_WORDS = frozenset({"not", "no", "never", "nor", "neither", "nothing", "none", "nobody", "nowhere",
                                   "cannot", "without", "less", "least", "more", "most", "too", "very", "only",
                                   "but", "against", "many", "few", "much", "so", "enough", "all", "any", "some",
                                   "every", "everything", "anything", "something", "well", "hardly", "barely",
                                   "quite", "rather", "really", "always", "ever", "again"})


def near_copy(a: str, b: str) -> bool:
    """Whether ``b`` repeats ``a`` but for function words: the words that differ (read as :func:`same_words`
    reads them) are all common function words and none of them can carry a label (a negator, a degree word).
    "they also have lost sight of what good deli food is ." and "They have lost sight of what good deli food
    is." are near copies; "do n't go here" and "do go here" are not (a negation is removed).

    >>> near_copy("they also have lost sight of it .", "They have lost sight of it."), near_copy("do n't go", "do go")
    (True, False)
    """
    import difflib

    from spacy.lang.en.stop_words import STOP_WORDS

    x, y = _quantifiers(word_sequence(unescaped(a))), _quantifiers(word_sequence(unescaped(b)))
    if x == y:
        return True
    differ: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=x, b=y, autojunk=False).get_opcodes():
        if op != "equal":
            differ += [*x[i1:i2], *y[j1:j2]]
    return all(w in STOP_WORDS and w not in _LABEL_FUNCTION_WORDS and not w.endswith("nt") for w in differ)


def _quantifiers(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` with "a few" and "a little" read as one word each: "a few good songs" and "few good songs"
    say opposite things."""
    out: list[str] = []
    for w in words:
        if w in ("few", "little") and out and out[-1] == "a":
            out[-1] = f"a {w}"
        else:
            out.append(w)
    return tuple(out)


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
