"""CoBA's LLM path between its requests: what it does with the triples the extract step returns. Which
words are principal and spurious (the ensemble's votes, the extra spurious words, and with
``lexicon_principal`` the opinion words of the source label), each triple's category and the triples the
modify step is asked to edit, which of them its answer changed, the gender swap of their parts, the
triples as the reconstruct step and ``meta`` show them, and whether a rebuilt text holds the edit. No request
is made here.

What an answer must show before the next step uses it:

- a triple from the extract step is kept only when its words come from the text (:func:`from_text`): an
  answer that echoes the prompt, or invents content, gives no triple;
- a triple from the modify step counts as edited only when it changes a word that carries the label: a
  principal word of the triple is gone, or a negation is added or removed (:func:`apply_modified`); case,
  spacing and punctuation are no edit;
- a rebuilt text is kept only when it holds, for each edited triple, a word the edit brought in
  (:func:`missing_edits`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cfaug.editing.lexicon import NEGATORS
from cfaug.methods.coba.categories import PRINCIPAL, SPURIOUS, categorise_words
from cfaug.nlp.tokens import has_form, tokenize, word_sequence

#: the share of a triple's content words that must occur in the text it was extracted from
MIN_WORDS_FROM_TEXT = 0.6
#: words a triple may hold that its text does not (a predicate written as "is" where the text says "was")
_FUNCTION_WORDS = frozenset(
    "a an the is are was were be been being am has have had do does did it its this that these those there "
    "of to in on at for with by as and or but so very".split())
_NEGATIONS = frozenset([*NEGATORS, "nt", "none", "nothing", "nobody", "nowhere"])


def content_words(part: str) -> list[str]:
    """The words of a triple part (:func:`~cfaug.nlp.tokens.word_sequence`) other than function words."""
    return [w for w in word_sequence(part) if w not in _FUNCTION_WORDS]


def from_text(triples: Sequence[Sequence[str]], text: str) -> list[tuple[str, ...]]:
    """The triples whose words come from ``text``: at least :data:`MIN_WORDS_FROM_TEXT` of their content
    words (another form of the same stem counts) occur in it, and they have at least one."""
    have = set(word_sequence(text))
    kept = []
    for t in triples:
        words = [w for part in t for w in content_words(part or "")]
        if words and sum(1 for w in words if has_form(w, have)) >= MIN_WORDS_FROM_TEXT * len(words):
            kept.append(tuple(t))
    return kept


def label_words(triples: Sequence[Sequence[str]], votes: Any, extra_spurious: set[str], text: str, source: str,
                lexicon_rule: bool) -> tuple[set[str], list[str]]:
    """(principal words, spurious words) of a text: the ensemble's ``votes``, plus the ``extra_spurious``
    words the text holds; with ``lexicon_rule``, the triples' opinion words of the ``source`` label are
    principal and never spurious (they carry the label)."""
    spurious = list(dict.fromkeys(votes.spurious + sorted(extra_spurious & set(tokenize(text)))))
    principal_words = set(votes.principal)
    if lexicon_rule:  # opinion words of the source label carry it
        from cfaug.editing.lexicon import load_lexicon

        lexicon = load_lexicon()
        opinion = {w for t in triples for part in t for w in tokenize(part) if lexicon.polarity(w) == source.lower()}
        principal_words |= opinion
        spurious = [w for w in spurious if w not in opinion]
    return principal_words, spurious


def categorise(triples: Sequence[Sequence[str]], principal_words: set[str], spurious: Sequence[str],
               edit_mixed: bool) -> tuple[list[str], list[int]]:
    """Each triple's category, and the positions of the triples to edit: the principal ones, and with
    ``edit_mixed`` the spurious ones that also hold a principal word."""
    cats = categorise_words([[w for part in t for w in tokenize(part)] for t in triples], principal_words,
                            set(spurious))
    words = [{w for part in t for w in tokenize(part)} for t in triples]
    principal = [i for i, cat in enumerate(cats) if cat == PRINCIPAL or (
        edit_mixed and cat == SPURIOUS and words[i] & principal_words)]
    return cats, principal


def apply_modified(triples: Sequence[Sequence[str]], principal: Sequence[int], answered: Sequence[Sequence[str]],
                   principal_words: set[str] | None = None) -> tuple[list[tuple[str, ...]], list[int]]:
    """The triples with the modify step's answer in the places of the ``principal`` triples it was asked
    about (in order), and the positions it changed. A triple counts as changed only when :func:`label_edit`
    says so; an answer that changes nothing else is left out (the triple keeps its original parts)."""
    modified = [tuple(t) for t in triples]
    edited = []
    for j, i in enumerate(principal[: len(answered)]):
        if label_edit(triples[i], answered[j], principal_words):
            modified[i] = tuple(answered[j])
            edited.append(i)
    return modified, edited


def triple_key(triple: Sequence[str | None]) -> tuple[str, ...]:
    """A triple as compared for "was it edited": each part's words (case, spacing, punctuation and quote
    style ignored)."""
    return tuple(" ".join(word_sequence(part or "")) for part in triple)


def label_edit(before: Sequence[str | None], after: Sequence[str | None],
               principal_words: set[str] | None = None) -> bool:
    """Whether ``after`` changes a word of ``before`` that carries the label: one of its ``principal_words``
    is gone, or a negation is added or removed. When ``before`` holds no principal word (or none are
    given), any change of words counts."""
    if triple_key(before) == triple_key(after):
        return False
    old = [w for part in before for w in word_sequence(part or "")]
    new = [w for part in after for w in word_sequence(part or "")]
    if sum(w in _NEGATIONS for w in old) != sum(w in _NEGATIONS for w in new):
        return True
    carrying = {w for w in old if w in (principal_words or set())}
    if not carrying:
        return True
    return any(w not in new for w in carrying)


def missing_edits(text: str, triples: Sequence[Sequence[str]], modified: Sequence[Sequence[str]],
                  edited: Sequence[int]) -> list[int]:
    """The edited triples (positions) whose edit ``text`` does not show: it holds none of the content words
    the edit brought in (another form of the same stem counts). An edit that only removed words (a
    negation dropped) is shown when those words are gone from the text."""
    have = set(word_sequence(text))
    missing = []
    for i in edited:
        old = {w for part in triples[i] for w in word_sequence(part or "")}
        new = [w for part in modified[i] for w in word_sequence(part or "")]
        brought = [w for w in new if w not in old and w not in _FUNCTION_WORDS] or [w for w in new if w not in old]
        if brought:
            if not any(has_form(w, have) for w in brought):
                missing.append(i)
        elif any(w in have for w in old - set(new) if w in _NEGATIONS):
            missing.append(i)
    return missing


def swap_parts(triple: Sequence[str], swap_gender: Any, names: bool) -> list[str]:
    return [swap_gender(part, names=names)[0] if part else part for part in triple]


def shown_triples(modified: Sequence[Sequence[str]], order: Sequence[int]) -> list[dict[str, Any]]:
    """The triples in ``order`` as the reconstruct prompt shows them (numbered by their place in the text)."""
    return [{"n": i + 1, "s": modified[i][0], "p": modified[i][1], "o": modified[i][2]} for i in order]


def triples_meta(cats: Sequence[str], triples: Sequence[Sequence[str]],
                 modified: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """Each triple's category, and its parts before and after the edits (``meta.triples``)."""
    return [{"category": cat, "before": list(t), "after": list(m)} for cat, t, m in zip(cats, triples, modified)]


__all__ = ["apply_modified", "categorise", "content_words", "from_text", "label_edit", "label_words",
           "missing_edits", "shown_triples", "swap_parts", "triple_key", "triples_meta"]
