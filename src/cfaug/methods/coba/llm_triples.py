"""CoBA's LLM path between its requests: what it does with the triples the extract step returns. Which
words are principal and spurious (the ensemble's votes, the extra spurious words, and with
``lexicon_principal`` the opinion words of the source label), each triple's category and the triples the
modify step is asked to edit, which of them its answer changed, the gender swap of their parts, and the
triples as the reconstruct step and ``meta`` show them. No request is made here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cfaug.filters.builtin import normalise
from cfaug.methods.coba.categories import PRINCIPAL, SPURIOUS, categorise_words
from cfaug.nlp.tokens import tokenize


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


def apply_modified(triples: Sequence[Sequence[str]], principal: Sequence[int],
                   answered: Sequence[Sequence[str]]) -> tuple[list[tuple[str, ...]], list[int]]:
    """The triples with the modify step's answer in the places of the ``principal`` triples it was asked
    about (in order), and the positions it changed."""
    modified = [tuple(t) for t in triples]
    edited = []
    for j, i in enumerate(principal[: len(answered)]):
        if triple_key(answered[j]) != triple_key(triples[i]):
            modified[i] = tuple(answered[j])
            edited.append(i)
    return modified, edited


def triple_key(triple: Sequence[str | None]) -> tuple[str, ...]:
    """A triple as compared for "was it edited": each part without case or extra whitespace."""
    return tuple(normalise(part or "") for part in triple)


def swap_parts(triple: Sequence[str], swap_gender: Any, names: bool) -> list[str]:
    return [swap_gender(part, names=names)[0] if part else part for part in triple]


def shown_triples(modified: Sequence[Sequence[str]], order: Sequence[int]) -> list[dict[str, Any]]:
    """The triples in ``order`` as the reconstruct prompt shows them (numbered by their place in the text)."""
    return [{"n": i + 1, "s": modified[i][0], "p": modified[i][1], "o": modified[i][2]} for i in order]


def triples_meta(cats: Sequence[str], triples: Sequence[Sequence[str]],
                 modified: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """Each triple's category, and its parts before and after the edits (``meta.triples``)."""
    return [{"category": cat, "before": list(t), "after": list(m)} for cat, t, m in zip(cats, triples, modified)]


__all__ = ["apply_modified", "categorise", "label_words", "shown_triples", "swap_parts", "triple_key",
           "triples_meta"]
