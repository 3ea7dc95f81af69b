"""Word forms: which parts of speech a word can have, the form of a lemma for a Penn Treebank tag, a
replacement word put into the form of the word it replaces, and the English indefinite article.

Lemmas and inflections come from ``lemminflect`` (its dictionary, with rules for unknown words).

>>> reinflect("hate", "VERB", "VBD")
'hated'
>>> reinflect("terrible", "NOUN", "NN") is None        # an adjective cannot replace a noun
True
>>> indefinite_article("awful"), indefinite_article("great"), indefinite_article("hour")
('an', 'a', 'an')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

#: universal parts of speech lemminflect knows, and the Penn tags of each
OPEN_CLASS = {"NOUN": ("NN", "NNS"), "VERB": ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ"),
              "ADJ": ("JJ", "JJR", "JJS"), "ADV": ("RB", "RBR", "RBS"), "PROPN": ("NNP", "NNPS"),
              "AUX": ("VB", "VBD", "VBG", "VBN", "VBP", "VBZ")}


_PENN_OPEN = {"JJ": "ADJ", "JJR": "ADJ", "JJS": "ADJ", "NN": "NOUN", "NNS": "NOUN", "RB": "ADV", "RBR": "ADV",
              "RBS": "ADV", "VB": "VERB", "VBD": "VERB", "VBG": "VERB", "VBN": "VERB", "VBP": "VERB", "VBZ": "VERB"}


def upos_of_tag(tag: str) -> str:
    """The open word class of a Penn Treebank tag (``"VBD"`` -> ``"VERB"``), or ``""`` for other tags."""
    return _PENN_OPEN.get(tag, "")


@lru_cache(maxsize=65536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """Universal part of speech -> lemmas that ``word`` can be a form of (empty for unknown words)."""
    import lemminflect

    return dict(lemminflect.getAllLemmas(word.lower()))


@lru_cache(maxsize=65536)
def inflect(lemma: str, tag: str) -> str | None:
    """The form of ``lemma`` for the Penn Treebank ``tag`` (``("hate", "VBD")`` -> ``"hated"``), or None."""
    import lemminflect

    forms = lemminflect.getInflection(lemma.lower(), tag=tag)
    return forms[0] if forms else None


#: a participle used as an adjective at least this share of the time reads as one (see plausible_tag)
ADJECTIVAL_SHARE = 0.3

#: word classes to try, in order, when a tag gives a word a class the dictionary says it cannot have
_FALLBACK = {"NOUN": ("ADJ", "VERB"), "ADJ": ("NOUN",), "VERB": ("ADJ", "NOUN")}


def plausible_tag(word: str, tag: str) -> str:
    """``tag``, unless it puts ``word`` in a word class the dictionary says the word cannot have: then the tag
    of the first class it can have (adjective, verb or noun; ``_FALLBACK`` gives the order). A statistical
    tagger often reads an attributive participle as a noun ("a stunning/NN performance"); "stunning" cannot be
    a noun, so it becomes ``JJ`` and its replacement an adjective. Words the dictionary does not know, tags
    of other classes and adjectival participles tagged ``JJ`` ("bored") are left as they are. A participle
    tagged ``VBG``/``VBN`` that review text mostly uses as an adjective ("an interesting/VBG story", "I
    was annoyed/VBN") becomes ``JJ`` (by :func:`usual_share`, at least ``ADJECTIVAL_SHARE`` of its uses).

    >>> plausible_tag("stunning", "NN"), plausible_tag("film", "NN"), plausible_tag("zorbly", "NN")
    ('JJ', 'NN', 'NN')
    >>> plausible_tag("annoyed", "VBN"), plausible_tag("killing", "VBG")
    ('JJ', 'VBG')
    """
    if tag in ("VBG", "VBN") and (usual_share(word, "ADJ") or 0.0) >= ADJECTIVAL_SHARE:
        return "JJ"
    upos = upos_of_tag(tag)
    known = lemmas(word)
    if upos not in _FALLBACK or not known or upos in known:
        return tag
    lower = word.lower()
    if upos == "ADJ" and lower.endswith(("ing", "ed")):
        return tag  # an adjectival participle ("bored"), which the dictionary may list as a verb only
    for other in _FALLBACK[upos]:
        if other not in known:
            continue
        if other == "ADJ":
            return "JJ"
        if other == "NOUN":
            return "NNS" if known["NOUN"][0] != lower and lower.endswith("s") else "NN"
        lemma = known["VERB"][0]
        # the verb form the word is ("beckons" -> VBZ); past participle before past tense for "-ed"
        return next((t for t in ("VBZ", "VBG", "VBN", "VBD") if inflect(lemma, t) == lower), "VB")
    return tag


#: Penn tags that open a noun phrase before its modifiers ("a", "this", "his")
_DETERMINER_TAGS = frozenset({"DT", "PDT", "PRP$", "WP$"})


def tags_in_context(words: Sequence[str], tags: Sequence[str]) -> list[str]:
    """The tags of a sentence's ``words`` with the misreadings that put a wrong word class on an opinion word
    mended, so that its replacement keeps the class it really has (other tags are left as they are;
    :func:`plausible_tag` mends a word's tag by the dictionary where a replacement is chosen):

    * a word tagged as a noun that review text seldom uses as one (under ``USUAL_SHARE`` of its uses) and
      mostly uses as an adjective is an adjective ("this brilliant/NN look" -> JJ);
    * a singular noun right after a determiner and coordinated with an adjective ("a tender/NN, eccentric
      chess player", "a tender/NN and eccentric man") is an adjective when it can be one.

    >>> tags_in_context(["a", "tender", ",", "eccentric", "man"], ["DT", "NN", ",", "JJ", "NN"])
    ['DT', 'JJ', ',', 'JJ', 'NN']
    >>> tags_in_context(["a", "chess", ",", "eccentric", "game"], ["DT", "NN", ",", "JJ", "NN"])[1]
    'NN'
    """
    out = list(tags)
    for i, (word, tag) in enumerate(zip(words, tags)):
        if tag not in ("NN", "NNS"):
            continue
        noun, adj = usual_share(word, "NOUN"), usual_share(word, "ADJ")
        if noun is not None and adj is not None and noun < USUAL_SHARE and adj >= ADJECTIVAL_SHARE:
            out[i] = "JJ"
            continue
        after = out[i + 2] if i + 2 < len(out) else ""
        coordinated = i + 1 < len(words) and words[i + 1] in (",", "and", "but", "yet") and after in ("JJ", "JJR", "JJS")
        if (tag == "NN" and i > 0 and out[i - 1] in _DETERMINER_TAGS and coordinated and usually(word, "ADJ")):
            out[i] = "JJ"
    return out


def doc_tags(doc: Iterable[Any]) -> dict[int, str]:
    """The Penn tag of every token of a parsed text (spaCy tokens: ``text``, ``tag_``, ``idx``), keyed by its
    start character, mended in context by :func:`tags_in_context`."""
    toks = list(doc)
    mended = tags_in_context([t.text for t in toks], [t.tag_ for t in toks])
    return {t.idx: tag for t, tag in zip(toks, mended)}


#: the columns of the shipped word-class table (``resources/nlp/word_classes.tsv``, made by
#: ``tools/nlp/word_classes.py``): how often the bundled tagger put each word in each class in review text
WORD_CLASS_COLUMNS = ("ADJ", "ADV", "NOUN", "VERB", "OTHER")
#: a word seen fewer times than this in the table's corpora is judged by the dictionary alone
MIN_CLASS_EVIDENCE = 10
#: the share of a word's uses that makes a class usual for it
USUAL_SHARE = 0.25


@lru_cache(maxsize=1)
def _word_class_table() -> dict[str, tuple[int, ...]]:
    from importlib import resources

    path = resources.files("cfaug.resources") / "nlp" / "word_classes.tsv"
    if not path.is_file():
        return {}
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        word, *counts = line.split("\t")
        table[word] = tuple(int(c) for c in counts)
    return table


def usual_share(word: str, upos: str) -> float | None:
    """The share of ``word``'s uses in review text that are of the class ``upos`` (ADJ, ADV, NOUN, VERB;
    AUX counts as VERB), by the shipped word-class table, or None when the table has seen the word fewer
    than ``MIN_CLASS_EVIDENCE`` times. A dictionary lists every class a word can have; this says which
    ones readers meet ("quiet" is almost always an adjective, "win" a verb and sometimes a noun).

    >>> usual_share("quiet", "NOUN") < 0.25 < usual_share("quiet", "ADJ")
    True
    """
    key = "VERB" if upos == "AUX" else upos
    counts = _word_class_table().get(word.lower())
    if key not in WORD_CLASS_COLUMNS or counts is None or sum(counts) < MIN_CLASS_EVIDENCE:
        return None
    return counts[WORD_CLASS_COLUMNS.index(key)] / sum(counts)


def usually(word: str, upos: str, min_share: float = USUAL_SHARE) -> bool:
    """Whether ``word`` is used as a ``upos`` at least ``min_share`` of the time in review text; words the
    table has too little evidence on fall back to the dictionary (:func:`can_be`)."""
    share = usual_share(word, upos)
    return can_be(word, upos) if share is None else share >= min_share


#: comparative and superlative tags, whose suffixed forms are checked against the table
_DEGREE_TAGS = frozenset({"JJR", "JJS", "RBR", "RBS"})


def attested(word: str, form: str, upos: str, tag: str) -> bool:
    """Whether review text would take ``form`` (``word`` put in the form of ``tag``) in a slot of the class
    ``upos``, by the shipped word-class table: ``word`` must usually be of that class (:func:`usually`; the
    dictionary lets "quiet" be a noun and "safe" a verb, but "a quiet" and "safes" are not English). A
    participle slot (``VBG``, ``VBN``) takes a word usually a verb, or an adjective that already is the
    participle ("boring", "annoyed"), and the form must be one the table has seen, mostly as a verb or
    adjective ("safed", "cleaned" for "wasted", "dimming" are refused). Without the table every form passes.

    >>> attested("hate", "hated", "VERB", "VBN"), attested("boring", "boring", "VERB", "VBG")
    (True, True)
    >>> attested("safe", "safed", "VERB", "VBD"), attested("quiet", "quiet", "NOUN", "NN")
    (False, False)

    A comparative or superlative made by a suffix must also be a form the table has seen: "nicer" is,
    "hilariouser" is not.
    """
    table = _word_class_table()
    if not table:
        return True
    if tag in _DEGREE_TAGS and form.lower() != word.lower() and form.lower() not in table:
        return False  # a comparative or superlative no review writes: "hilariouser", "boringest"
    if tag not in ("VBG", "VBN"):
        return usually(word, upos)
    if not (usually(word, "VERB") or (form.lower() == word.lower() and usually(word, "ADJ"))):
        return False
    if form.lower() not in table:
        return False
    verb, adjective = usual_share(form, "VERB"), usual_share(form, "ADJ")
    return verb is None or verb + (adjective or 0.0) >= USUAL_SHARE  # None: seen too rarely to judge


def can_be(word: str, upos: str) -> bool:
    """Whether ``word`` can be a ``upos`` (adjective, verb, noun, adverb) by the dictionary."""
    return upos in lemmas(word)


def reinflect(word: str, upos: str, tag: str) -> str | None:
    """``word`` (any form of it) in the form the tag ``tag`` of part of speech ``upos`` asks for, or None when
    ``word`` cannot be that part of speech. Words of closed classes and unknown tags come back as they are.
    Case follows ``word`` (lower, Title or UPPER)."""
    if upos not in OPEN_CLASS or tag not in OPEN_CLASS[upos]:
        return word
    options = lemmas(word).get(upos if upos != "AUX" else "VERB")
    if not options:
        return None
    form = inflect(options[0], tag)
    if form is None:
        return None
    return match_case(word, form)


def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template`` (lower, Title or UPPER)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# "an" before a vowel sound: letters decide, except for these beginnings
_AN_CONSONANT_LETTER = re.compile(r"^(hour|honest|honou?r|heir|herb)", re.IGNORECASE)
_A_VOWEL_LETTER = re.compile(r"^(uni|use|usu|ur[aeiou]|uti|eu|ewe|one|once|ubiq|u\b)", re.IGNORECASE)


def indefinite_article(word: str) -> str:
    """``"a"`` or ``"an"`` for the word that follows the article (by its spelling, with the common
    exceptions: "an hour", "a unique", "a one-time"; a digit by how it is read: "an 8", "a 9")."""
    w = word.strip("\"'([")
    if not w:
        return "a"
    if w[0].isdigit():
        return "an" if re.match(r"^(8|11|18|80|800)(\D|$)", w) else "a"
    if _AN_CONSONANT_LETTER.match(w):
        return "an"
    if _A_VOWEL_LETTER.match(w):
        return "a"
    return "an" if w[0].lower() in "aeiou" else "a"
