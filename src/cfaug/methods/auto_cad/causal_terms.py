"""Causal terms: opinion words and negation phrases whose removal moves the classifier (Eq. 1).

The importance of a phrase ``p`` in sentence ``s`` is the expected relative drop of the classifier's
probability for the document's label when ``p`` is masked out, over sampled contexts ``s_beta``::

    phi(p) = E_beta[(l(s_beta) - l(s_beta \\ p)) / l(s_beta)]

Contexts are the full sentence plus ``samples`` sampled contexts: random sub-sequences keeping each other
token with probability ``keep`` (:func:`build_contexts`), or, as in sampling-and-occlusion (Jin et al.,
2019), the sentence with the words around the phrase redrawn from a language model of the corpus
(:func:`resampled_contexts`). All perturbations of a batch of documents are scored in one classifier call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass, field

import numpy as np

from cfaug.editing.lexicon import NEGATORS, Lexicon
from cfaug.editing.text import Token

NEGATION_SCOPE = 3


@dataclass
class CausalTerm:
    """A candidate causal term: the token to edit (``head``) and the phrase masked when scoring it."""

    head: int
    phrase: tuple[int, ...]
    kind: str  # "word", "negation", "promise" ("will be back") or "score" (an explicit rating such as "8/10")
    importance: float = 0.0
    contexts: list[tuple[str, str]] = field(default_factory=list, repr=False)
    source: str = "lexicon"  #: what made it a candidate: the lexicon, or C's sensitivity ("classifier")

    def describe(self, tokens: Sequence[Token]) -> dict[str, object]:
        out: dict[str, object] = {"term": " ".join(tokens[i].text for i in self.phrase) if self.phrase else self.kind,
                                  "kind": self.kind, "importance": round(float(self.importance), 4)}
        if self.source != "lexicon":
            out["source"] = self.source
        return out


def find_candidates(tokens: Sequence[Token], lexicon: Lexicon, polarity: str,
                    bare_negations: bool = False) -> list[CausalTerm]:
    """Opinion words of ``polarity`` (the label's) not under a negator, and negation phrases.

    A negation phrase is a negator with up to three following tokens of its sentence; it is a candidate
    when it negates an opinion word of the other polarity (so the phrase carries the label's polarity),
    and with ``bare_negations`` also when it negates no opinion word at all (its importance then decides;
    removing such a negator often changes a fact: "I have not read the book").
    """
    terms: list[CausalTerm] = []
    negated: set[int] = set()
    for i, tok in enumerate(tokens):
        if tok.lower not in NEGATORS:
            continue
        scope = [j for j in range(i + 1, min(len(tokens), i + 1 + NEGATION_SCOPE))
                 if tokens[j].sentence == tok.sentence and tokens[j].is_word]
        opinion = [j for j in scope if lexicon.polarity(tokens[j].text)]
        if opinion:
            negated.update(opinion)
            if lexicon.polarity(tokens[opinion[0]].text) == polarity:
                continue  # "not good" in a positive text: the phrase does not carry the label
            phrase = tuple(range(i, opinion[0] + 1))
        elif bare_negations:
            phrase = (i, *scope)
        else:
            continue
        terms.append(CausalTerm(head=i, phrase=phrase, kind="negation"))
    for i, tok in enumerate(tokens):
        if i in negated or not tok.is_word:
            continue
        if lexicon.polarity(tok.text) == polarity:
            terms.append(CausalTerm(head=i, phrase=(i,), kind="word"))
    return terms


def build_contexts(tokens: Sequence[Token], term: CausalTerm, samples: int, keep: float,
                   rng: np.random.Generator, lm: Any = None, window: int = 10) -> list[tuple[str, str]]:
    """(context, context without the phrase) pairs for Eq. 1 within the term's sentence: dropped words
    (:func:`dropped_contexts`), or with a language model ``lm``, redrawn ones (:func:`resampled_contexts`)."""
    sent = tokens[term.head].sentence
    idx = [i for i, t in enumerate(tokens) if t.sentence == sent]
    words, phrase = [tokens[i].text for i in idx], [k for k, i in enumerate(idx) if i in term.phrase]
    if lm is not None:
        return resampled_contexts(words, phrase, samples, window, lm, rng)
    return dropped_contexts(words, phrase, samples, keep, rng)


def dropped_contexts(words: Sequence[str], phrase: Sequence[int], samples: int, keep: float,
                     rng: np.random.Generator) -> list[tuple[str, str]]:
    """(context, context without the phrase) pairs: the sentence ``words`` as they are, then ``samples``
    sub-sequences keeping each word outside the phrase (positions ``phrase``) with probability ``keep``.
    An empty string in ``words`` is a removed word."""
    phrase_set = set(phrase)
    out = []
    for s in range(samples + 1):
        kept = range(len(words)) if s == 0 else [j for j in range(len(words)) if j in phrase_set or rng.random() < keep]
        with_p = " ".join(words[j] for j in kept if words[j])
        without_p = " ".join(words[j] for j in kept if words[j] and j not in phrase_set)
        out.append((with_p, without_p))
    return out


def resampled_contexts(words: Sequence[str], phrase: Sequence[int], samples: int, window: int, lm: Any,
                       rng: np.random.Generator) -> list[tuple[str, str]]:
    """(context, context without the phrase) pairs for Eq. 1 in which the ``window`` words on each side of
    the phrase are redrawn, left to right, from the bigram model ``lm`` (``lm.sample(prev, rng)``).

    ``words`` are the sentence's words (an empty string for a removed word), ``phrase`` the positions of
    the phrase in it. The first pair is the sentence as it is."""
    phrase_set = set(phrase)
    lo, hi = min(phrase), max(phrase)
    out = []
    for s in range(samples + 1):
        cur = list(words)
        if s > 0:
            prev = "<s>"
            for j in range(len(cur)):
                if j not in phrase_set and lo - window <= j <= hi + window and cur[j] and cur[j][0].isalnum():
                    cur[j] = lm.sample(prev, rng)
                if cur[j]:
                    prev = cur[j].lower()
        with_p = " ".join(w for w in cur if w)
        without_p = " ".join(w for j, w in enumerate(cur) if w and j not in phrase_set)
        out.append((with_p, without_p))
    return out


def score_terms(docs: Sequence[tuple[Sequence[Token], list[CausalTerm], int]],
                prob_of: Callable[[Sequence[str]], np.ndarray], importance: Any = None) -> None:
    """Fill ``importance`` of every term of every document in one batched call.

    ``docs`` holds (tokens, terms, label column) triples with ``term.contexts`` already built;
    ``prob_of(texts)`` returns the classifier's probability matrix; ``importance`` is an importance part
    (default ``occlusion.v1``, Eq. 1).
    """
    from cfaug.importance import Unit, build_importance

    scorer = importance or build_importance("occlusion")
    terms = [t for _, ts, _ in docs for t in ts]
    units = [Unit(t.contexts, col) for _, ts, col in docs for t in ts]
    for term, value in zip(terms, scorer.score(units, prob_of)):
        term.importance = value
