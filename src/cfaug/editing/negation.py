"""Negating the predicate of an opinion word: the other way to flip it, next to replacing it.

"The film is worth seeing" -> "The film is not worth seeing"; "it's a great film" -> "it's not a great
film"; "I loved it" -> "I did not love it". A negator is inserted after the nearest auxiliary or copula
before the word in the same clause (up to four words back, across determiners, adverbs and adjectives
only), or a main verb in the simple past or present becomes do + not + its base form. Sentences that
already carry a negator before the word are left alone. The other way, :func:`negator_removal`, removes a
negator ("not good" -> "good", "won't" -> "will"): RM-CT's negation edit, shared with CoBA. Given the
text, it also undoes do-support ("didn't like it" -> "liked it", not "did like it") and turns the
negative-polarity word the negator licensed into its positive form ("never saw anything" -> "saw
something", "not any better" -> "better").
"""

from __future__ import annotations

from collections.abc import Sequence

from cfaug.editing.lexicon import AUX_AFTER_NT, NEGATED_ONLY, NEGATORS, Lexicon
from cfaug.editing.text import Edit, Token, match_case
from cfaug.nlp.inflect import indefinite_article, inflect, lemmas

#: auxiliaries and copulas after which "not" goes
AUXILIARIES = {"is", "was", "are", "were", "am", "be", "been", "'s", "'re", "'m", "has", "have", "had", "will",
               "would", "can", "could", "should", "may", "might", "must", "do", "does", "did"}
#: pronoun contractions the tokenizer keeps whole ("it's"), which end in an auxiliary
CONTRACTED = {"it's", "that's", "he's", "she's", "there's", "here's", "what's", "who's", "you're", "we're",
              "they're", "i'm", "i've", "we've", "you've", "they've"}
#: words that may stand between the auxiliary and the opinion word ("is really a great")
_BETWEEN_TAGS = {"DT", "RB", "RBR", "RBS", "JJ", "JJR", "JJS", "PDT", "PRP$", "CD"}
_DO = {"VBD": "did", "VBZ": "does", "VBP": "do"}


def negate_predicate(tokens: Sequence[Token], i: int, tags: dict[int, str]) -> Edit | None:
    """An edit that negates the predicate of ``tokens[i]``, or None when there is no auxiliary to negate
    and the word is not a finite main verb (``tags``: Penn tags by token start)."""
    tok = tokens[i]
    if negated_before(tokens, i):
        return None
    tag = tags.get(tok.start, "")
    prev = tokens[i - 1] if i > 0 and tokens[i - 1].sentence == tok.sentence else None
    if tag in _DO and (prev is None or prev.lower not in AUXILIARIES):
        base = (lemmas(tok.text).get("VERB") or (None,))[0]
        if base is None or tok.lower in AUXILIARIES:
            return None
        return Edit(tok.start, tok.end, f"{match_case(tok.text, _DO[tag])} not {base}", tok.text, "negation-insert")
    for j in range(i - 1, max(-1, i - 5), -1):
        cand = tokens[j]
        if cand.sentence != tok.sentence or not cand.is_word:
            return None
        if cand.lower in AUXILIARIES or cand.lower.replace("’", "'") in CONTRACTED:
            nxt = tokens[j + 1]
            if nxt.lower in NEGATORS:
                return None
            return Edit(cand.end, cand.end, " not", "", "negation-insert")
        if tags.get(cand.start, "") not in _BETWEEN_TAGS:
            return None
    return None


def negate_complement_taker(tokens: Sequence[Token], i: int, tags: dict[int, str]) -> Edit | None:
    """The negation of a word of :data:`NEGATED_ONLY` before its complement: "is worth seeing" -> "is not worth
    seeing", "well worth it" -> "not worth it", "Worth seeing!" -> "Not worth seeing!". None when the word is
    not one of them, is a noun by its tag (``tags``: Penn tags by token start; "the worth of"), ends its
    clause, or a negator already stands up to four words before it."""
    tok = tokens[i]
    if tok.lower not in NEGATED_ONLY or tags.get(tok.start, "").startswith("NN"):
        return None
    after = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].sentence == tok.sentence else None
    if after is None or not after.is_word or after.lower in _NO_COMPLEMENT or negated_before(tokens, i):
        return None
    prev = tokens[i - 1] if i > 0 and tokens[i - 1].sentence == tok.sentence else None
    owner = tokens[i - 2] if prev is not None and prev.lower in ("'s", "'", "’s", "’") and i > 1 else prev
    if owner is not None and _without_possessive(owner.lower) in _OWNERS:
        return None  # "your money's worth", "get your monies worth for two hours": a noun
    # "well worth it": the degree goes with the negation
    first = prev if prev is not None and prev.lower == "well" else tok
    word = tok.text if tok.text.isupper() else tok.text.lower()
    old = tok.text if first is tok else f"{first.text} {tok.text}"
    return Edit(first.start, tok.end, f"{match_case(first.text, 'not')} {word}", old, "negation-insert")


#: words that never begin the complement of "worth" ("your monies worth for two hours": a noun there)
_NO_COMPLEMENT = frozenset({"for", "of", "to", "and", "or", "but", "in", "on", "at", "with", "from", "by", "as"})
#: money before "worth" makes it a noun, possessive or not ("your money's worth", "your monies worth")
_OWNERS = frozenset({"money", "monies", "moneys", "dollar", "dollars", "penny", "pennies"})


def _without_possessive(word: str) -> str:
    word = word.replace("’", "'")
    return word[:-2] if word.endswith("'s") else word[:-1] if word.endswith("'") else word


#: degree adverbs of a recommendation ("highly recommended"), which the negation replaces
_RECOMMEND_DEGREE = frozenset({"highly", "strongly", "definitely", "heartily", "wholeheartedly", "totally",
                               "really", "absolutely", "thoroughly", "certainly", "very", "hugely"})


def negate_recommendation(tokens: Sequence[Token], i: int, tags: dict[int, str],
                          lexicon: Lexicon | None = None) -> Edit | None:
    """The negation of a recommendation, which has no opposite word ("recommended" -> "broken" is none):
    "Highly recommended!" -> "Not recommended!", "it is highly recommended" -> "it is not recommended". A
    degree adverb just before the word gives way to the negation. With the opinion ``lexicon``, a finite
    verb takes do-support ("I highly recommend it" -> "I do not recommend it") unless its clause holds an
    opinion word ("I recommend this wonderful film": that word flips the clause, and a negated verb would
    flip it back). None for another word, one already negated, or a base form ("would recommend" is a
    promise, taken back elsewhere; "to recommend")."""
    tok = tokens[i]
    if not tok.lower.startswith("recommend") or tok.lower not in ("recommend", "recommends", "recommended"):
        return None
    if negated_before(tokens, i):
        return None
    tag = tags.get(tok.start, "")
    prev = tokens[i - 1] if i > 0 and tokens[i - 1].sentence == tok.sentence else None
    degree = prev if prev is not None and prev.lower in _RECOMMEND_DEGREE else None
    if tag in _DO:
        # "I recommend this wonderful film": its object's opinion word flips the clause already ("this awful
        # film"); negating the verb too would flip it back. Without the lexicon to tell, the verb stays.
        rest = [t for t in tokens[i + 1:] if t.sentence == tok.sentence]
        clause = next((k for k, t in enumerate(rest) if t.lower in _CLAUSE_END), len(rest))
        if lexicon is None or any(lexicon.polarity(t.lower) for t in rest[:clause]):
            return None
        subject = tokens[i - 2] if degree is not None and i > 1 else prev
        if subject is None or subject.sentence != tok.sentence or subject.lower in AUXILIARIES:
            return None
        first = degree or tok
        return Edit(first.start, tok.end, f"{match_case(first.text, _DO[tag])} not recommend",
                    f"{degree.text} {tok.text}" if degree is not None else tok.text, "negation-insert")
    if tag not in ("VBN", "JJ") and tok.lower == "recommended":
        tag = "VBN"
    if tag not in ("VBN", "JJ"):
        return None
    if degree is not None:  # "highly recommended" -> "not recommended"; "Highly, hugely" go together
        k = i - 1
        while k >= 2 and tokens[k - 1].text == "," and tokens[k - 2].lower in _RECOMMEND_DEGREE \
                and tokens[k - 2].sentence == tok.sentence:
            k -= 2
        first = tokens[k]
        old = "".join(t.text + " " * (tokens[j + 1].start - t.end) for j, t in enumerate(tokens[k:i - 1], k))
        return Edit(first.start, degree.end, match_case(first.text, "not"), old + degree.text, "negation-insert")
    before = prev.lower if prev is not None else ""
    if before in AUXILIARIES or before.replace("’", "'") in CONTRACTED:
        return Edit(prev.end, prev.end, " not", "", "negation-insert")
    if prev is None or not prev.is_word:  # "Recommended!" -> "Not recommended!"
        return Edit(tok.start, tok.end, f"{match_case(tok.text, 'not')} {tok.lower}", tok.text, "negation-insert")
    return None


#: auxiliaries of a promise or a plan ("we will be back", "I would recommend it")
_INTENT_AUX = {"will", "'ll", "would", "shall"}
#: the progressive future ("we are going back", "I'm coming again")
_PROGRESSIVE_AUX = {"am", "are", "is", "'m", "'re", "'s"}
_PROGRESSIVE_VERBS = {"going", "coming", "heading"}
#: certainty adverbs "never" replaces ("will definitely be back" -> "will never be back")
CERTAINTY = {"definitely", "certainly", "surely", "absolutely", "undoubtedly", "totally", "sure"}
#: pronoun contractions ending in an intent auxiliary, as a tokenizer may keep them ("we'll", "I'd")
_CONTRACTED_INTENT = ("'ll", "’ll", "'d", "’d")
#: subjects whose promise or plan is the writer's verdict ("we will be back", "you 're going to love it",
#: "people will enjoy it"); a plural noun subject counts too (by its tag). Not "he", "it" or a relative
#: pronoun: "he'll take him back if ...", "feelings that would allow us" tell the story.
_INTENT_SUBJECTS = frozenset({"i", "we", "you", "they", "u", "everyone", "everybody", "anyone", "anybody",
                              "people", "folks", "kids", "families", "fans"})
#: words that, earlier in the sentence, make the plan doubted or conditional ("I doubt we'll see it again",
#: "if you will ..."): "never" there would say the opposite twice or nothing at all
_INTENT_CANCELLERS = frozenset({"doubt", "doubted", "if", "unless", "whether", "wonder", "why", "how", "hope",
                                "wish", "whoever", "whatever"})
#: verbs after which "would" is a wish or a past conditional, not a promise ("I'd love to buy the CD",
#: "would have been"), and "have" after any future ("will have to")
_NOT_INTENT_VERBS = frozenset({"love", "like", "prefer", "rather", "have", "want", "hate", "wish", "say", "think",
                               "guess", "imagine", "expect", "bet"})


def intent_negation(tokens: Sequence[Token], i: int, tags: dict[int, str]) -> tuple[tuple[int, ...], Edit] | None:
    """A promise or plan at ``tokens[i]`` (a future or conditional auxiliary, or "are going"), and the edit
    that takes it back: its certainty adverb becomes "never" ("we will definitely be back" -> "we will never be
    back"), or "never" goes after the auxiliary ("I would recommend it" -> "I would never recommend it", "we're
    going back" -> "we're never going back"). The auxiliary must be followed, after at most one certainty
    adverb, by a verb in its base form (``tags``: Penn tags by token start; untagged, any word) or, for the
    progressive, by "going"/"coming"; a negator there means it is already negated. Returns (the phrase's token
    indices, the edit), or None."""
    tok = tokens[i]
    low = tok.lower.replace("’", "'")
    after_apostrophe = i > 0 and tokens[i - 1].text in ("'", "’")  # "we 'll" read as "we ' ll"
    progressive = (low in _PROGRESSIVE_AUX or low.endswith(("'re", "'m")) or (after_apostrophe and low in ("re", "m")))
    split_ll = low == "ll" and after_apostrophe
    if not (low in _INTENT_AUX or progressive or split_ll or (low.endswith(_CONTRACTED_INTENT) and len(low) > 2)):
        return None
    j, adverb = i + 1, None
    if j < len(tokens) and tokens[j].lower in CERTAINTY and tokens[j].sentence == tok.sentence:
        adverb, j = j, j + 1
    if j >= len(tokens) or tokens[j].sentence != tok.sentence or not tokens[j].is_word:
        return None
    verb = tokens[j]
    if verb.lower in NEGATORS or verb.lower == "n't":
        return None
    if progressive:
        if verb.lower not in _PROGRESSIVE_VERBS:
            return None
    elif (tags and tags.get(verb.start, "") != "VB") or verb.lower in _NOT_INTENT_VERBS:
        return None
    if not _intent_subject(tokens, i, tags) or any(
            t.lower in _INTENT_CANCELLERS for t in tokens[:i] if t.sentence == tok.sentence):
        return None
    if adverb is not None:
        word = tokens[adverb]
        edit = Edit(word.start, word.end, match_case(word.text, "never"), word.text, "replace")
        return (i, adverb, j), edit
    return (i, j), Edit(tok.end, tok.end, " never", "", "negation-insert")


def _intent_subject(tokens: Sequence[Token], i: int, tags: dict[int, str]) -> bool:
    """Whether the auxiliary ``tokens[i]`` has a subject of :data:`_INTENT_SUBJECTS` (inside its own
    contraction, "we'll", or the word before it, across a split "we ' ll") or a plural noun (``NNS``)."""
    tok = tokens[i]
    low = tok.lower.replace("’", "'")
    for suffix in ("'ll", "'d", "'re", "'m", "'s"):
        if low.endswith(suffix) and len(low) > len(suffix):
            return low[: -len(suffix)] in _INTENT_SUBJECTS
    k = i - 1
    if k >= 0 and tokens[k].text in ("'", "’"):
        k -= 1
    if k < 0 or tokens[k].sentence != tok.sentence:
        return False
    subject = tokens[k]
    return subject.lower in _INTENT_SUBJECTS or tags.get(subject.start, "") == "NNS"


def negated_before(tokens: Sequence[Token], i: int) -> bool:
    """Whether a negator stands up to four words before ``tokens[i]`` in its sentence."""
    return any(t.lower in NEGATORS for t in tokens[max(0, i - 4): i] if t.sentence == tokens[i].sentence)


#: negative-polarity words and their forms once the negator is gone ("not ... anything" -> "something")
NPI = {"any": "some", "anyone": "someone", "anybody": "somebody", "anything": "something",
       "anywhere": "somewhere"}
#: words after which "any" is a degree word to drop, not a determiner ("not any better" -> "better")
_DEGREE_AFTER_ANY = {"better", "worse", "more", "less", "different", "longer", "easier", "smarter", "funnier"}
#: after a copula, "any good" is a degree too ("isn't any good" -> "is good"; "have any good scenes" keeps "some")
_COPULAS = {"is", "was", "are", "were", "be", "been", "'s", "'re", "'m", "am", "not", "n't"}
#: tags of do-support: the finite verb the collapsed "do + not + verb" becomes
_DO_TAG = {"do": "VBP", "does": "VBZ", "did": "VBD"}
#: adverbs that may sit between the negated auxiliary and its verb ("didn't really like")
_INNER_ADVERBS = {"really", "even", "actually", "quite", "exactly", "particularly", "always", "ever", "much",
                  "entirely", "fully", "totally", "completely", "necessarily", "just", "truly"}
_CLAUSE_END = {",", ";", ":", ".", "!", "?", "but", "and", "or", "because", "though", "although", "which", "that",
               "-", "(", ")"}


def negator_removal(tokens: Sequence[Token], i: int, text: str = "", lexicon: Lexicon | None = None,
                    tags: dict[int, str] | None = None) -> Edit:
    """Remove the negator ``tokens[i]`` ("not good" -> "good", "won't" -> "will").

    With ``text`` (the text the tokens index), the sentence stays idiomatic: do-support collapses into the
    finite verb ("didn't like" -> "liked", "doesn't work" -> "works"; not at the start of a sentence or in a
    question, where "do" is an imperative or an inversion), and the first negative-polarity word of the
    clause takes its positive form ("never saw anything" -> "saw something"; "isn't any better" -> "is
    better"). Words between the negator and that word stay as they are; ``lexicon`` (an opinion lexicon)
    keeps the edit from spanning an opinion word, which another edit may need. With ``text`` and ``tags``
    (Penn tags by token start), the determiner "no" becomes the article its noun needs
    (:func:`determiner_no`): "there is no edge to it" -> "there is an edge to it"."""
    if text and tags and tokens[i].lower == "no":
        edit = determiner_no(tokens, i, text, tags)
        if edit is not None:
            return edit
    if text:
        edit = _never_again_inverted(tokens, i, text)
        if edit is not None:
            return edit
    bare = _bare_removal(tokens, i)
    if not text:
        return bare
    collapsed = _collapse_do(tokens, i, text)
    start, end, new = collapsed if collapsed is not None else (bare.start, bare.end, bare.new)
    npi = _npi_after(tokens, i, lexicon)
    if npi is None or tokens[npi].start < end:
        return bare if collapsed is None else Edit(start, end, new, text[start:end], "negation")
    word = tokens[npi]
    nxt = tokens[npi + 1] if npi + 1 < len(tokens) and tokens[npi + 1].sentence == word.sentence else None
    degree = nxt is not None and (nxt.lower in _DEGREE_AFTER_ANY or (
        nxt.lower in ("good", "bad") and tokens[npi - 1].lower in _COPULAS))
    if word.lower == "any" and degree:
        replacement, npi_end = "", nxt.start  # "any better" -> "better"
    else:
        replacement, npi_end = match_case(word.text, NPI[word.lower]), word.end
    middle = text[end:word.start]
    if not new:  # the negator goes with one space next to it
        middle = middle.lstrip() if start == 0 or text[start - 1].isspace() else middle
    return Edit(start, npi_end, new + middle + replacement, text[start:npi_end], "negation")


#: auxiliaries that "never again" inverts with its subject ("never again will I go")
_INVERTING_AUX = frozenset({"will", "would", "shall", "should", "do", "does", "did", "can", "could", "am", "are",
                            "is", "was", "were", "have", "has", "had", "must", "might"})
_SUBJECT_PRONOUNS = frozenset({"i", "we", "you", "they", "he", "she", "it"})
_CLAUSE_PUNCTUATION = frozenset({".", "!", "?", ",", ";", ":"})


def _never_again_inverted(tokens: Sequence[Token], i: int, text: str) -> Edit | None:
    """"Never again will I go there." -> "Once again will I go there.": without its negator the inversion is
    no English ("again will I go there"), and putting subject and auxiliary back in order ("I will go there
    again") rewrites the whole clause, which the edit-rate filter rejects in a short text. "Never again!"
    alone becomes "Again and again!" ("Again!" says nothing). None unless ``tokens[i]`` is "never" opening
    its clause before "again" and either the clause's end or an auxiliary and a subject pronoun."""
    sentence = tokens[i].sentence
    if tokens[i].lower != "never" or i + 1 >= len(tokens) or tokens[i + 1].lower != "again" \
            or tokens[i + 1].sentence != sentence or not _opens_clause(tokens, i):
        return None
    nxt = [t for t in tokens[i + 2:i + 4] if t.sentence == sentence]
    if not nxt or nxt[0].lower in _CLAUSE_PUNCTUATION:
        return Edit(tokens[i].start, tokens[i + 1].end, match_case(tokens[i].text, "again and again"),
                    text[tokens[i].start:tokens[i + 1].end], "negation")
    if len(nxt) == 2 and nxt[0].lower in _INVERTING_AUX and nxt[1].lower in _SUBJECT_PRONOUNS:
        return Edit(tokens[i].start, tokens[i].end, match_case(tokens[i].text, "once"), tokens[i].text, "negation")
    return None  # "Never again did the film ...": other inversions keep the minimal edit


def _opens_clause(tokens: Sequence[Token], i: int) -> bool:
    return i == 0 or tokens[i - 1].sentence != tokens[i].sentence or tokens[i - 1].lower in _CLAUSE_PUNCTUATION


#: nouns read as mass nouns in reviews: "no X" becomes "some X", not "a X" ("no chemistry" -> "some chemistry")
MASS_NOUNS = frozenset({
    "time", "money", "sense", "chemistry", "tension", "suspense", "humor", "humour", "talent", "effort", "logic",
    "acting", "dialogue", "dialog", "music", "action", "substance", "depth", "emotion", "fun", "help", "interest",
    "energy", "information", "advice", "service", "food", "flavor", "flavour", "taste", "seasoning", "salt",
    "meat", "parking", "room", "space", "respect", "class", "charm", "style", "wit", "development", "continuity",
    "originality", "creativity", "imagination", "intelligence", "suspense", "violence", "gore", "nudity", "sex",
    "romance", "drama", "comedy", "plot", "character", "direction", "editing", "pacing", "atmosphere", "value",
    "attention", "care", "customer", "patience", "communication", "water", "sauce", "cheese", "butter", "rice",
    "coffee", "beer", "wine", "air", "light", "noise", "evidence", "progress", "knowledge", "experience",
})
#: degree words of "no" that go with it ("absolutely no idea" -> "an idea", not "absolutely an idea")
_DEGREE_OF_NO = frozenset({"absolutely", "virtually", "almost", "literally", "simply", "practically", "nearly",
                           "basically", "just", "really"})
#: tags of the words of the noun phrase after "no"
_NOUN_PHRASE_TAGS = frozenset({"JJ", "JJR", "JJS", "NN", "NNS", "VBG", "VBN"})


def determiner_no(tokens: Sequence[Token], i: int, text: str, tags: dict[int, str]) -> Edit | None:
    """The removal of the determiner "no" (``tokens[i]``) that keeps its noun phrase English: the article a
    singular count noun needs ("there was no look at" -> "there was a look at", "no interesting idea" -> "an
    interesting idea"), "some" before a mass noun of :data:`MASS_NOUNS` ("no chemistry" -> "some
    chemistry"), nothing before a plural ("no redeeming qualities" -> "redeeming qualities"). A degree word
    before it goes too ("absolutely no idea" -> "an idea"). "no one" becomes "everyone". None when no noun
    (by ``tags``) heads the words after it within three tokens ("no longer", "No, ..."): the plain removal
    applies."""
    tok = tokens[i]
    nxt = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].sentence == tok.sentence else None
    if nxt is not None and nxt.lower == "one":  # "No one cares" -> "Everyone cares"
        return Edit(tok.start, nxt.end, match_case(tok.text, "everyone"), text[tok.start:nxt.end], "negation")
    head = None
    for j in range(i + 1, min(len(tokens), i + 4)):
        t = tokens[j]
        tag = tags.get(t.start, "")
        if t.sentence != tok.sentence or not t.is_word or tag not in _NOUN_PHRASE_TAGS:
            break
        if tag.startswith("NN"):
            head = j
        elif head is not None:
            break
    if head is None or tokens[i + 1].lower in ("longer", "more", "less", "matter", "doubt", "way", "wonder"):
        return None
    start = tok.start
    prev = tokens[i - 1] if i > 0 and tokens[i - 1].sentence == tok.sentence else None
    if prev is not None and prev.lower in _DEGREE_OF_NO:
        start = prev.start
    first = text[start:tok.end]
    following = tokens[i + 1]
    if tags.get(tokens[head].start) == "NNS":  # the plural stands alone
        return Edit(start, tok.end, "", first, "negation")
    word = "some" if tokens[head].lower in MASS_NOUNS else indefinite_article(following.text)
    return Edit(start, tok.end, match_case(first, word), first, "negation")


def _bare_removal(tokens: Sequence[Token], i: int) -> Edit:
    tok = tokens[i]
    if tok.lower == "n't" and i > 0:
        prev = tokens[i - 1]
        aux = AUX_AFTER_NT.get(prev.lower)
        if aux:
            return Edit(prev.start, tok.end, match_case(prev.text, aux), prev.text + tok.text, "negation")
    new = NEGATORS.get(tok.lower, "")
    return Edit(tok.start, tok.end, match_case(tok.text, new) if new else "", tok.text, "negation")


def _collapse_do(tokens: Sequence[Token], i: int, text: str) -> tuple[int, int, str] | None:
    """``(start, end, new)`` rewriting "do/does/did + not/n't [adverb] verb" as the finite verb, or None."""
    tok = tokens[i]
    if i == 0 or tokens[i - 1].sentence != tok.sentence:
        return None
    prev = tokens[i - 1]
    if prev.lower not in _DO_TAG or tok.lower not in ("not", "n't"):
        return None
    if i == 1 or tokens[i - 2].sentence != tok.sentence:
        return None  # "Don't go", "Didn't they?": an imperative or an inversion
    if any(t.text == "?" for t in tokens[i:] if t.sentence == tok.sentence):
        return None
    j = i + 1
    adverbs = []  # at most one ("didn't really like")
    if j < len(tokens) and tokens[j].sentence == tok.sentence and tokens[j].lower in _INNER_ADVERBS:
        adverbs.append(tokens[j])
        j += 1
    if j >= len(tokens) or tokens[j].sentence != tok.sentence or not tokens[j].is_word:
        return None
    verb = tokens[j]
    if (verb.lower in AUXILIARIES and verb.lower != "have") or verb.lower in NEGATORS \
            or verb.lower not in lemmas(verb.lower).get("VERB", ()):  # after do, "have" is a main verb
        return None
    form = inflect(verb.lower, _DO_TAG[prev.lower])
    if not form:
        return None
    adverb = "".join(a.text + " " for a in adverbs if a.lower != "ever")
    return prev.start, verb.end, match_case(prev.text, adverb + form)


def _npi_after(tokens: Sequence[Token], i: int, lexicon: Lexicon | None) -> int | None:
    """Index of the first negative-polarity word in the clause after the negator ``tokens[i]`` (within six
    tokens, no opinion word of ``lexicon`` before it), or None."""
    tok = tokens[i]
    for j in range(i + 1, min(len(tokens), i + 7)):
        t = tokens[j]
        if t.sentence != tok.sentence or t.lower in _CLAUSE_END or t.lower in NEGATORS:
            return None
        if t.lower in NPI:
            return j
        if lexicon is not None and lexicon.polarity(t.lower):
            return None
    return None
