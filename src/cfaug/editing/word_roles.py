"""Opinion words that are no opinion where they stand: a word in a name ("Great Expectations"), an adjective
naming a group of people ("the disabled and ..."), and the nouns and verbs whose lexicon words are as often
topical as evaluative ("murder", "warned"). Shared by auto-CAD and CoBA's offline edits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cfaug.editing.text import Token
from cfaug.nlp.inflect import plausible_tag, upos_of_tag, usually

PROPER_NOUN_TAGS = frozenset({"NNP", "NNPS"})  #: Penn tags of names (see :func:`in_name`)


def topical_class(word: str, tag: str) -> bool:
    """Whether the tag ``tag`` makes ``word`` a noun or verb, the classes whose opinion words are as often
    topical as evaluative (see ``content_words``). The tag is mended first (:func:`plausible_tag`), so
    participles usually read as adjectives ("I was annoyed/VBN") count as adjectives; an untagged word is
    not topical."""
    return bool(tag) and upos_of_tag(plausible_tag(word, tag)) in ("NOUN", "VERB")


#: Penn tags of the word after "the" + adjective when the adjective heads its noun phrase ("the poor are",
#: "the weak."): verbs, prepositions, sentence ends, relative pronouns ("and"/"but" are judged apart)
_AFTER_NOMINAL = frozenset({"VB", "VBD", "VBN", "VBP", "VBZ", "MD", "IN", "TO", ".", "WP", "WDT"})
#: tags of a word that may follow "the" + adjective + "and"/"but" inside one noun phrase
_MODIFIER_TAGS = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS", "VBN", "VBG"})


def nominal_adjective(tokens: Sequence[Token], i: int, tags: Mapping[int, str]) -> bool:
    """Whether token ``i`` is an adjective used as a noun for a group of people ("a message about the disabled
    and ...", "the poor are ..."): tagged ``JJ`` or ``VBN`` right after "the", and followed by the end of its
    sentence or a word that cannot continue a noun phrase (:data:`_AFTER_NOMINAL`; a comma may separate two
    adjectives, so it does not count, and "and"/"but" counts only when no adjective or adverb follows it).
    Superlatives ("the best of all") are opinions and never match."""
    tok = tokens[i]
    if tags.get(tok.start) not in ("JJ", "VBN") or i == 0:
        return False
    before = tokens[i - 1]
    if before.lower != "the" or before.sentence != tok.sentence:
        return False

    def tag_at(k: int) -> str:
        return tags.get(tokens[k].start, "") if k < len(tokens) and tokens[k].sentence == tok.sentence else "."

    after = tag_at(i + 1)
    if after == "CC":  # "the disabled and the rest", but not "the gentle but rebellious daughter"
        return tag_at(i + 2) not in _MODIFIER_TAGS
    return after in _AFTER_NOMINAL


def in_name(tokens: Sequence[Token], i: int, tags: Mapping[int, str]) -> bool:
    """Whether token ``i`` belongs to a name or title, which auto-CAD leaves alone: the tagger calls a
    capitalised word a proper noun (a lower-case word is none, whatever the tagger says: it reads
    "charming" as NNP), or it is capitalised (not all capitals, which is emphasis), not the first word of
    its sentence, and next to another capitalised word ("we saw Great Expectations", "in Hot Millions",
    "The Good Shepherd"), or it stands in a short quotation (:func:`in_short_quote`)."""
    if tags.get(tokens[i].start) in PROPER_NOUN_TAGS and tokens[i].text[:1].isupper():
        return True

    def titled(k: int) -> bool:
        w = tokens[k].text if 0 <= k < len(tokens) else ""
        return w[:1].isupper() and not (len(w) > 1 and w.isupper()) and tokens[k].sentence == tokens[i].sentence

    first = i == 0 or tokens[i - 1].sentence != tokens[i].sentence
    return (not first and titled(i) and (titled(i - 1) or titled(i + 1))) or in_short_quote(tokens, i)


QUOTES = frozenset({'"', "“", "”", "''", "``"})  #: tokens that open or close a quotation
#: a quotation of at most this many words is taken for a title or a term, not an opinion ("dark area")
SHORT_QUOTE_WORDS = 3


def in_short_quote(tokens: Sequence[Token], i: int) -> bool:
    """Whether token ``i`` stands inside quotation marks around at most :data:`SHORT_QUOTE_WORDS` words of its
    sentence ('Check out Wikipedia for "dark area"'): a title or a term someone used, which a rewrite keeps."""
    sentence = tokens[i].sentence
    words = 1
    left = i - 1
    while left >= 0 and tokens[left].sentence == sentence and tokens[left].text not in QUOTES:
        words += 1
        left -= 1
    right = i + 1
    while right < len(tokens) and tokens[right].sentence == sentence and tokens[right].text not in QUOTES:
        words += 1
        right += 1
    found = left >= 0 and right < len(tokens) and tokens[left].text in QUOTES and tokens[right].text in QUOTES
    return found and tokens[left].sentence == tokens[right].sentence == sentence and words <= SHORT_QUOTE_WORDS


#: tags of a word a degree adverb can grade ("incredibly nice", "really well", "extremely disappointed")
_GRADABLE_TAGS = frozenset({"JJ", "JJR", "JJS", "RB", "RBR", "RBS", "VBN"})


def degree_modifier(tokens: Sequence[Token], i: int, tags: Mapping[int, str], edited: set[int]) -> bool:
    """Whether token ``i`` is an adverb grading the next word, which is edited too (token indices ``edited``):
    "incredibly nice" becomes "incredibly nasty", not "badly nasty". Needs the Penn ``tags``: an adverb
    (``RB``) right before an adjective, adverb or participle of its sentence."""
    if i + 1 >= len(tokens) or tokens[i + 1].sentence != tokens[i].sentence or i + 1 not in edited:
        return False
    return tags.get(tokens[i].start, "") == "RB" and tags.get(tokens[i + 1].start, "") in _GRADABLE_TAGS


#: words before "to death" that make it a degree phrase ("bored to death", "loved it to death")
_DEATH_GRADED = frozenset({"JJ", "VBN", "VBD", "PRP"})


def intensifying_idiom(tokens: Sequence[Token], i: int, tags: Mapping[int, str]) -> bool:
    """Whether token ``i`` is the noun of an idiom that only grades the word before it, and is no opinion
    of its own: "death" in "bored to death", "scared to death", "loved it to death"."""
    if tokens[i].lower != "death" or i < 2 or tokens[i - 1].lower != "to":
        return False
    before = tokens[i - 2]
    return before.sentence == tokens[i].sentence and (tags.get(before.start, "") in _DEATH_GRADED
                                                      or before.lower in ("it", "them", "me", "him", "her"))


def graded_by_idiom(tokens: Sequence[Token], i: int) -> bool:
    """Whether "to death" follows token ``i`` in its sentence ("bored to death"): the idiom grades a
    feeling, so a replacement must be a participle too ("thrilled to death"; "fun to death" is no English)."""
    after = [t.lower for t in tokens[i + 1: i + 3] if t.sentence == tokens[i].sentence]
    return after == ["to", "death"]


def fits_idiom(word: str) -> bool:
    """Whether ``word`` can stand before "to death" (see :func:`graded_by_idiom`): a participle in -ed."""
    return word.lower().endswith("ed")


#: word pairs that name a thing, whose opinion word is no opinion ("happy hour", "fine dining", a film's "bad
#: guy"; not "good guys", which praises the staff as often as it names a film's heroes)
FIXED_COMPOUNDS = frozenset({("happy", "hour"), ("fine", "dining"), ("good", "luck"), ("good", "morning"),
                             ("good", "night"), ("good", "afternoon"), ("good", "evening"), ("free", "range"),
                             ("hot", "dog"), ("hot", "dogs"), ("sweet", "potato"), ("sweet", "potatoes"),
                             ("sweet", "tea"), ("sour", "cream"), ("best", "buy"), ("dollar", "store"),
                             ("thank", "you"), ("shame", "on"), ("bad", "guy"), ("bad", "guys")})


#: words before the noun "love" that make it the feeling of a story, not the writer's opinion ("fell in love",
#: "make love", "true love")
_LOVE_STORY = frozenset({"in", "make", "makes", "made", "making", "true", "first", "free", "lost", "young",
                         "childhood", "forbidden", "unrequited", "romantic", "sexual", "secret", "his", "her",
                         "their", "whose"})


def names_a_kind(tokens: Sequence[Token], i: int, tags: Mapping[int, str]) -> bool:
    """Whether token ``i``, an opinion word the tagger reads as a noun, names a kind of thing rather than
    judging one: it modifies the noun after it ("a love story", "her love interest", "the freedom struggle"), or
    it is the love of a story ("falls in love", "make love", "his true love"). Such a word is a fact of the
    text: replacing it wrote "a death story" and "falls in pain"."""
    tok = tokens[i]
    if not plausible_tag(tok.text, tags.get(tok.start, "")).startswith("NN") or tags.get(tok.start) in PROPER_NOUN_TAGS \
            or usually(tok.lower, "ADJ"):  # "a fun/NN time": "fun" is an adjective there
        return False
    nxt = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].sentence == tok.sentence else None
    if nxt is not None and nxt.is_word and tags.get(nxt.start) in ("NN", "NNS"):
        return True
    prev = tokens[i - 1] if i > 0 and tokens[i - 1].sentence == tok.sentence else None
    return tok.lower == "love" and prev is not None and prev.lower in _LOVE_STORY


def in_compound(tokens: Sequence[Token], i: int) -> bool:
    """Whether token ``i`` opens a fixed compound of :data:`FIXED_COMPOUNDS` ("happy hour")."""
    return (i + 1 < len(tokens) and tokens[i + 1].sentence == tokens[i].sentence
            and (tokens[i].lower, tokens[i + 1].lower) in FIXED_COMPOUNDS)
