"""Manner adverbs that grade a participle: "well written", "superbly-crafted", "ill-conceived".

"well" says nothing on its own ("well, ...", "as well"), so the opinion lexicon's "well" is not an opinion
word; before a past participle it is the review's verdict on how something was done. A hyphenated compound
("superbly-crafted", "poorly-written") is one token that no lexicon lists, though its first part is an
opinion adverb. Both are flipped on their adverb alone, by the one opposite that reads with any participle:
"well written" -> "poorly written", "superbly-crafted" -> "poorly-crafted", "ill-conceived" ->
"well-conceived". Hyphenated words the lexicon lists whole ("well-made") take the same edit, rather than a
proposer's adjective for the whole word.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfaug.editing.lexicon import Lexicon
from cfaug.editing.negation import negate_complement_taker, negate_recommendation
from cfaug.editing.text import Edit, Token, agree_article, match_case
from cfaug.nlp.inflect import inflect, lemmas

#: the adverb that replaces a manner adverb of each polarity
OPPOSITE = {"positive": "poorly", "negative": "well"}
#: first parts of a compound with a fixed polarity whatever the lexicon says
FIXED = {"well": "positive", "ill": "negative"}
#: participles after which "well" is not a verdict on quality ("well known", "well-meant") or whose
#: opposite is not "poorly" ("well-deserved" -> "undeserved")
NOT_GRADED = frozenset({
    "known", "worn", "meant", "intended", "intentioned", "deserved", "heeled", "versed", "established",
    "informed", "connected", "bred", "off", "founded", "fated", "merited",
})


def is_participle(word: str) -> bool:
    """Whether ``word`` is a past participle of some verb ("written", "crafted", "done")."""
    w = word.lower()
    return any(inflect(lemma, "VBN") == w for lemma in lemmas(w).get("VERB", ()))


def manner_polarity(tokens: Sequence[Token], i: int, tags: Mapping[int, str], lexicon: Lexicon) -> str | None:
    """The polarity of ``tokens[i]`` as a manner adverb grading a participle, or None when it is none.

    ``tags``: Penn Treebank tags by token start; without them a separate "well" is never read as one.
    """
    tok = tokens[i]
    parts = tok.text.split("-")
    if len(parts) == 2 and all(parts):
        first, rest = parts[0].lower(), parts[1]
        if rest.lower() in NOT_GRADED or not is_participle(rest):
            return None
        if first in FIXED:
            return FIXED[first]
        return lexicon.polarity(first) if first.endswith("ly") else None
    if tok.lower != "well" or tags.get(tok.start) != "RB" or i + 1 >= len(tokens):
        return None
    nxt = tokens[i + 1]
    if nxt.sentence != tok.sentence or nxt.lower in NOT_GRADED:
        return None
    if i > 0 and tokens[i - 1].lower == "as" and tokens[i - 1].sentence == tok.sentence:
        return None  # "as well done as ..." compares; "as well" closes a clause
    if tags.get(nxt.start) == "VBN" or (tags.get(nxt.start) == "JJ" and is_participle(nxt.text)):
        return "positive"
    return None


def manner_edit(tokens: Sequence[Token], i: int, tags: Mapping[int, str], lexicon: Lexicon) -> Edit | None:
    """The edit that flips ``tokens[i]``'s manner adverb ("well written" -> "poorly written",
    "superbly-crafted" -> "poorly-crafted"), or None when it is not one."""
    polarity = manner_polarity(tokens, i, tags, lexicon)
    return None if polarity is None else _swap_adverb(tokens[i], polarity)


def _swap_adverb(tok: Token, polarity: str) -> Edit:
    """The edit that puts the opposite adverb in place of ``tok``'s manner adverb of ``polarity`` (the part
    before a hyphen)."""
    first = tok.text.split("-")[0]
    return Edit(tok.start, tok.start + len(first), match_case(first, OPPOSITE[polarity]), first, "replace")


#: opinion words whose opposite no single lexicon word gives, by the class their tag must start with: "my
#: favorite films" -> "my least favorite films" (not "my bad films"), "the service sucked" -> "the service
#: rocked" (not "the service won")
FIXED_FLIPS = {"favorite": ("JJ", "least favorite"), "favourite": ("JJ", "least favourite"),
               "sucked": ("VB", "rocked"), "sucks": ("VB", "rocks"), "suck": ("VB", "rock")}


def _fixed_flip(tok: Token, tags: Mapping[int, str]) -> Edit | None:
    fixed = FIXED_FLIPS.get(tok.lower)
    if fixed is None or not tags.get(tok.start, "").startswith(fixed[0]):
        return None
    return Edit(tok.start, tok.end, match_case(tok.text, fixed[1]), tok.text, "replace")


def own_flip(text: str, tokens: Sequence[Token], i: int, tags: Mapping[int, str], lexicon: Lexicon, polarity: str,
             manner: bool = True) -> Edit | None:
    """The edit that flips ``tokens[i]``, an opinion word of ``polarity``, by itself rather than by a proposer's
    replacement: "worth" before its complement is negated
    (:func:`~cfaug.editing.negation.negate_complement_taker`), so is a recommendation ("Highly recommended"
    -> "Not recommended", :func:`~cfaug.editing.negation.negate_recommendation`), a word of
    :data:`FIXED_FLIPS` takes its fixed opposite ("favorite" -> "least favorite"), and, with ``manner``, a manner adverb
    takes its opposite (:func:`manner_edit`); the indefinite article before it agrees ("an ill-conceived" ->
    "a well-conceived"). None for any other word. Shared by auto-CAD's REP-CT and CoBA's offline edits."""
    edit = None
    if lexicon.polarity(tokens[i].text) == polarity:
        edit = (negate_complement_taker(tokens, i, tags) or negate_recommendation(tokens, i, dict(tags), lexicon)
                or _fixed_flip(tokens[i], tags))
    if edit is None and manner and manner_polarity(tokens, i, tags, lexicon) == polarity:
        edit = _swap_adverb(tokens[i], polarity)
    return None if edit is None else agree_article(text, tokens, i, edit)
