"""Causal terms: opinion words and negation phrases whose removal moves the classifier (Eq. 1).

The importance of a phrase ``p`` in sentence ``s`` is the expected relative drop of the classifier's
probability for the document's label when ``p`` is masked out, over sampled contexts ``s_beta``::

    phi(p) = E_beta[(l(s_beta) - l(s_beta \\ p)) / l(s_beta)]

Contexts are the full sentence plus ``samples`` random sub-sequences keeping each other token with
probability ``keep``. All perturbations of a batch of documents are scored in one classifier call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass, field

import numpy as np

from cfaug.methods.auto_cad.lexicon import NEGATORS, Lexicon
from cfaug.methods.auto_cad.text import Token

NEGATION_SCOPE = 3


@dataclass
class CausalTerm:
    """A candidate causal term: the token to edit (``head``) and the phrase masked when scoring it."""

    head: int
    phrase: tuple[int, ...]
    kind: str  # "word", "negation" or "score" (an explicit rating such as "8/10")
    importance: float = 0.0
    contexts: list[tuple[str, str]] = field(default_factory=list, repr=False)

    def describe(self, tokens: Sequence[Token]) -> dict[str, object]:
        return {"term": " ".join(tokens[i].text for i in self.phrase) if self.phrase else self.kind, "kind": self.kind,
                "importance": round(float(self.importance), 4)}


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
                   rng: np.random.Generator) -> list[tuple[str, str]]:
    """(context, context without the phrase) pairs for Eq. 1."""
    sent = tokens[term.head].sentence
    idx = [i for i, t in enumerate(tokens) if t.sentence == sent]
    phrase = set(term.phrase)
    out = []
    for s in range(samples + 1):
        kept = idx if s == 0 else [i for i in idx if i in phrase or rng.random() < keep]
        with_p = " ".join(tokens[i].text for i in kept)
        without_p = " ".join(tokens[i].text for i in kept if i not in phrase)
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
