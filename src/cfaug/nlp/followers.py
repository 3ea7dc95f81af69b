"""Which prepositions and particles review text puts right after a verb or adjective ("rip into", "proud of").

A replacement that keeps the part of speech can still break a phrasal verb or a fixed complement:
"ripped into him" -> "loved into him", "proud of" -> "glad of". The shipped table
``resources/nlp/followers.tsv`` (made by ``tools/nlp/word_classes.py`` in the same tagging pass as the
word-class table) counts, for each verb and adjective lemma, the words of :data:`FOLLOWERS` that come
right after it in 229k review texts, and how often the lemma was seen at all.

>>> takes("rip", "VERB", "off"), takes("love", "VERB", "into"), takes("proud", "ADJ", "of")
(True, False, True)
>>> takes("glad", "ADJ", "of"), takes("beautiful", "ADJ", "in")   # "in" begins adjuncts: not judged
(False, None)
>>> fits("ripped", "loved", "VERB", "off"), fits("ripped", "loved", "VERB", "into")
(False, False)
"""

from __future__ import annotations

from functools import lru_cache

from cfaug.nlp.inflect import lemmas

#: the words judged after each word class: verb particles, and the "of" of an adjective's complement.
#: Prepositions that begin adjuncts ("in", "on", "at", "for", "with", "to", "as") follow nearly any verb or
#: adjective and are not judged: requiring them would swap "beautiful in its way" for a worse word.
FOLLOWERS = {
    "VERB": frozenset(("across", "along", "apart", "around", "away", "back", "down", "into", "of", "off", "onto",
                       "out", "over", "through", "up", "upon")),
    "ADJ": frozenset(("of",)),
}

#: the ``follower`` column of a lemma's row that counts all its uses
TOTAL = "*"

#: a lemma seen fewer times than this is not judged
MIN_EVIDENCE = 30

#: a lemma followed by a word at least this many times takes it
MIN_PAIR = 2

#: a replacement must take the follower at least this share of the replaced word's rate ...
RELATIVE_SHARE = 0.1

#: ... where that rate counts as at least this much (the table may not have seen the replaced word)
FLOOR_SHARE = 0.03


def lemma_of(word: str, upos: str) -> str:
    """The dictionary lemma of ``word`` as a ``upos`` (lower case), or the word itself when the dictionary
    does not know it in that class."""
    options = lemmas(word).get(upos)
    return options[0] if options else word.lower()


@lru_cache(maxsize=1)
def _table() -> dict[tuple[str, str], dict[str, int]]:
    from importlib import resources

    path = resources.files("cfaug.resources") / "nlp" / "followers.tsv"
    if not path.is_file():
        return {}
    table: dict[tuple[str, str], dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        lemma, upos, follower, count = line.split("\t")
        table.setdefault((lemma, upos), {})[follower] = int(count)
    return table


def takes(word: str, upos: str, follower: str) -> bool | None:
    """Whether review text puts ``follower`` right after ``word`` (any form) used as a ``upos`` (ADJ or VERB),
    at least :data:`MIN_PAIR` times; None when that cannot be judged (the table is missing, ``follower`` is
    not in :data:`FOLLOWERS` for ``upos``, or the lemma was seen fewer than :data:`MIN_EVIDENCE` times)."""
    follower = follower.lower()
    if follower not in FOLLOWERS.get(upos, ()):
        return None
    row = _table().get((lemma_of(word, upos), upos))
    if row is None or row.get(TOTAL, 0) < MIN_EVIDENCE:
        return None
    return row.get(follower, 0) >= MIN_PAIR


def share(word: str, upos: str, follower: str) -> float | None:
    """The share of ``word``'s uses as a ``upos`` that ``follower`` comes right after (pairs seen fewer than
    :data:`MIN_PAIR` times count as 0), or None when :func:`takes` cannot judge."""
    if takes(word, upos, follower) is None:
        return None
    row = _table()[(lemma_of(word, upos), upos)]
    return row.get(follower.lower(), 0) / row[TOTAL]


def fits(word: str, replacement: str, upos: str, follower: str) -> bool:
    """Whether ``replacement`` can take the place of ``word`` (both ``upos``) before ``follower``: the
    replacement must take the follower at least :data:`RELATIVE_SHARE` times as often as ``word`` does, and
    that rate counts as at least :data:`FLOOR_SHARE`, since ``word`` is followed by it here whatever the table
    says. So "ripped off" does not become "loved off", nor "tired of" "clean of", nor "ripped into" "loved
    into"; "devoid of" may become "worthy of". A replacement the table cannot judge always fits.

    >>> fits("tired", "clean", "ADJ", "of"), fits("devoid", "worthy", "ADJ", "of"), fits("great", "awful", "ADJ", "in")
    (False, True, True)
    """
    cand = share(replacement, upos, follower)
    if cand is None:
        return True
    return cand >= RELATIVE_SHARE * max(share(word, upos, follower) or 0.0, FLOOR_SHARE)
