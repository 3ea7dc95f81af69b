"""Negating the predicate of an opinion word: the other way to flip it, next to replacing it.

"The film is worth seeing" -> "The film is not worth seeing"; "it's a great film" -> "it's not a great
film"; "I loved it" -> "I did not love it". A negator is inserted after the nearest auxiliary or copula
before the word in the same clause (up to four words back, across determiners, adverbs and adjectives
only), or a main verb in the simple past or present becomes do + not + its base form. Sentences that
already carry a negator before the word are left alone. The other way, :func:`negator_removal`, removes a
negator ("not good" -> "good", "won't" -> "will"): RM-CT's negation edit, shared with CoBA.
"""

from __future__ import annotations

from collections.abc import Sequence

from cfaug.methods.auto_cad.lexicon import AUX_AFTER_NT, NEGATORS
from cfaug.methods.auto_cad.text import Edit, Token, match_case
from cfaug.nlp.inflect import lemmas

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
    if any(t.lower in NEGATORS for t in tokens[max(0, i - 4): i] if t.sentence == tok.sentence):
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


def negator_removal(tokens: Sequence[Token], i: int) -> Edit:
    """Remove the negator ``tokens[i]`` ("not good" -> "good", "won't" -> "will")."""
    tok = tokens[i]
    if tok.lower == "n't" and i > 0:
        prev = tokens[i - 1]
        aux = AUX_AFTER_NT.get(prev.lower)
        if aux:
            return Edit(prev.start, tok.end, match_case(prev.text, aux), prev.text + tok.text, "negation")
    new = NEGATORS.get(tok.lower, "")
    return Edit(tok.start, tok.end, match_case(tok.text, new) if new else "", tok.text, "negation")
