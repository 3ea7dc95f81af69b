"""What review text puts right after a verb or adjective: a particle ("rip off"), an adjective's "of"
("devoid of"), a verb's object ("loved it") or nothing (the clause ends: "everyone sucked.").

A replacement that keeps the part of speech can still break a phrasal verb, a complement or the verb's
transitivity: "ripped off" -> "loved off", "tired of" -> "clean of", "everyone sucked." -> "everyone
enjoyed.", "after he died, ..." -> "after he loved, ...". The shipped table ``resources/nlp/followers.tsv`` (made by
``tools/nlp/word_classes.py`` in the same tagging pass as the word-class table) counts, for each verb and
adjective lemma, how often it was seen in 229k review texts and how often each :func:`slot` came right after
it.

>>> slot("off", "VERB"), slot("the", "VERB"), slot(".", "ADJ"), slot("in", "ADJ"), slot("it", "ADJ")
('off', '<object>', '<end>', None, None)
>>> takes("rip", "VERB", "off"), takes("love", "VERB", "into"), takes("proud", "ADJ", "of")
(True, False, True)
>>> fits("ripped", "loved", "VERB", "off"), fits("sucked", "enjoyed", "VERB", "."), fits("loved", "hated", "VERB", "it")
(False, False, True)
"""

from __future__ import annotations

from functools import lru_cache

from cfaug.nlp.inflect import lemmas

#: the words judged one by one after each word class: verb particles, and the "of" of an adjective's
#: complement. Prepositions that begin adjuncts ("in", "on", "at", "for", "with", "to", "as") follow nearly
#: any verb or adjective and are not judged: requiring them would swap "beautiful in its way" for a worse word.
FOLLOWERS = {
    "VERB": frozenset(("across", "along", "apart", "around", "away", "back", "down", "into", "of", "off", "onto",
                       "out", "over", "through", "up", "upon")),
    "ADJ": frozenset(("of",)),
}

#: the slot of the words that begin a verb's noun-phrase object (a determiner or a pronoun; a noun or a name
#: may also be a complement of another kind, so they are not counted). Not judged after adjectives, where
#: such words begin a clause ("how creepy this guy is", "so convoluted it would take").
OBJECT = "<object>"
OBJECT_STARTERS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "my", "your", "his", "her", "its", "our", "their", "it",
    "me", "him", "us", "them", "every", "each", "some", "any", "no"))

#: the slot of a clause end: end of the sentence or text, or punctuation that closes a clause
END = "<end>"
END_MARKS = frozenset(("</s>", ".", ",", "!", "?", ";", ":", ")", "..."))

#: the ``follower`` column of a lemma's row that counts all its uses
TOTAL = "*"

#: a lemma seen fewer times than this is not judged
MIN_EVIDENCE = 30

#: a lemma followed by a slot at least this many times takes it (fewer count as 0 in the table)
MIN_PAIR = 2

#: a replacement must take the slot at least this share of the replaced word's rate ...
RELATIVE_SHARE = 0.2

#: ... where that rate counts as at least this much (the table may not have seen the replaced word)
FLOOR_SHARE = 0.03


def slot(next_word: str, upos: str) -> str | None:
    """The table's key for ``next_word`` (lower-cased; ``"</s>"`` for the end of the sentence) right after a
    word of class ``upos`` (ADJ or VERB): the word itself when it is one of :data:`FOLLOWERS`, :data:`OBJECT`
    (verbs only), :data:`END`, or None when the table does not judge it."""
    next_word = next_word.lower()
    if upos not in FOLLOWERS:
        return None
    if next_word in FOLLOWERS[upos]:
        return next_word
    if next_word in OBJECT_STARTERS and upos == "VERB":
        return OBJECT
    if next_word in END_MARKS:
        return END
    return None


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


@lru_cache(maxsize=65536)
def share(word: str, upos: str, next_word: str) -> float | None:
    """The share of ``word``'s uses (any form) as a ``upos`` that the :func:`slot` of ``next_word`` comes
    right after, or None when that cannot be judged: the table is missing, the slot is not judged, or the
    lemma was seen fewer than :data:`MIN_EVIDENCE` times."""
    key = slot(next_word, upos)
    if key is None:
        return None
    row = _table().get((lemma_of(word, upos), upos))
    if row is None or row.get(TOTAL, 0) < MIN_EVIDENCE:
        return None
    return row.get(key, 0) / row[TOTAL]


def takes(word: str, upos: str, next_word: str) -> bool | None:
    """Whether review text puts the slot of ``next_word`` right after ``word`` as a ``upos`` at least
    :data:`MIN_PAIR` times; None when :func:`share` cannot judge."""
    rate = share(word, upos, next_word)
    return None if rate is None else rate > 0


def fits(word: str, replacement: str, upos: str, next_word: str) -> bool:
    """Whether ``replacement`` can take the place of ``word`` (both ``upos``) before ``next_word``: the
    replacement must take its slot at least :data:`RELATIVE_SHARE` times as often as ``word`` does, and that
    rate counts as at least :data:`FLOOR_SHARE`, since ``word`` is followed by it here whatever the table
    says. So "ripped off" does not become "loved off", nor "tired of" "clean of", nor "ripped into" "loved
    into"; "devoid of" may become "worthy of". A replacement the table cannot judge always fits.

    >>> fits("tired", "clean", "ADJ", "of"), fits("devoid", "worthy", "ADJ", "of"), fits("great", "awful", "ADJ", "in")
    (False, True, True)

    "on" after one of the verbs of :data:`ON_PARTICLE` is a particle: only another of them fits there.

    >>> fits("drags", "rewards", "VERB", "on"), fits("drags", "moves", "VERB", "on"), fits("relies", "draws", "VERB", "on")
    (False, True, True)
    """
    if upos == "VERB" and next_word == "on" and _on_particle(word) and not _on_particle(replacement):
        return False  # "drags on and on" never becomes "rewards on and on"
    cand = share(replacement, upos, next_word)
    if cand is None:
        return True
    return cand >= RELATIVE_SHARE * max(share(word, upos, next_word) or 0.0, FLOOR_SHARE)


#: verbs whose "on" is a particle that means "continues" ("drags on", "goes on", "rambles on"): "on" is
#: not judged by the table (it begins adjuncts after nearly any verb), so these are judged by name
ON_PARTICLE = frozenset({"drag", "go", "carry", "keep", "ramble", "plod", "drone", "wear", "move", "hang"})


def _on_particle(word: str) -> bool:
    return bool(set(lemmas(word.lower()).get("VERB", ())) & ON_PARTICLE)
