"""Which words of each text auto-CAD edits: the causal terms of the source label's polarity
(:mod:`~cfaug.methods.auto_cad.causal_terms`) less names and groups of people named by an adjective, plus
the manner adverbs no lexicon lists, each scored by Eq. 1 over its sampled contexts; with
``content_words=important`` the nouns and verbs C does not weigh stay as facts of the text
(:func:`weighed_terms`)."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

import numpy as np

from cfaug.data.records import WorkItem
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import Lexicon
from cfaug.editing.manner import manner_polarity
from cfaug.editing.negation import negated_before
from cfaug.editing.ngram import BigramModel
from cfaug.editing.text import Token, tokenize
from cfaug.editing.word_roles import in_name, nominal_adjective, topical_class
from cfaug.methods.auto_cad.causal_terms import CausalTerm, build_contexts, find_candidates, score_terms
from cfaug.methods.auto_cad.config import AutoCADConfig
from cfaug.nlp.inflect import doc_tags


def tag_texts(tagger: Any, texts: Sequence[str]) -> list[dict[int, str]]:
    """Penn Treebank tag of every token of each text, keyed by its start character (empty without a
    tagger)."""
    if tagger is None:
        return [{} for _ in texts]
    return [doc_tags(doc) for doc in tagger.pipe(texts, batch_size=64)]


def select_terms(items: Sequence[WorkItem], tags: Sequence[dict[int, str]], seeds: Sequence[int], task: Task,
                 clf: Any, config: AutoCADConfig, lexicon: Lexicon, bigram: BigramModel | None, *,
                 manner: bool) -> tuple[list[tuple[list[Token], list[CausalTerm], int]], list[int]]:
    """Every item's (tokens, causal terms scored by ``clf``, column of its label), and how many opinion words
    of each were left alone as topical nouns and verbs. ``tags``: each text's Penn Treebank tags by token
    start; ``seeds``: each item's seed for sampling contexts; ``manner``: whether a tagger reads the manner
    adverbs (which then become terms too)."""
    c = config
    labels = list(clf.labels)
    docs = []
    for item, tag, seed in zip(items, tags, seeds):
        tokens = tokenize(item.record.text())
        src_pol, tgt_pol = task.polarity(item.record.label), task.polarity(item.target)
        terms = (find_candidates(tokens, lexicon, src_pol, bare_negations=c.negations == "all")
                 if src_pol and tgt_pol else [])
        # a name is not an opinion ("Hot Millions", "Great Expectations"), nor a group of people named by an
        # adjective ("a message about the disabled"): neither is edited
        terms = [t for t in terms if t.kind != "word"
                 or not (in_name(tokens, t.head, tag) or nominal_adjective(tokens, t.head, tag))]
        if src_pol and tgt_pol and manner and c.rep_selection == "score":
            terms += _manner_terms(tokens, terms, tag, src_pol, lexicon)
        rng = np.random.default_rng(seed)
        for term in terms:
            term.contexts = build_contexts(tokens, term, c.context_samples, c.context_keep,
                                           rng, lm=bigram if c.contexts == "lm" else None,
                                           window=c.context_window)
        col = labels.index(item.record.label) if item.record.label in labels else 0
        docs.append((tokens, terms, col))
    score_terms(docs, clf.predict_proba)
    topical = [0] * len(items)  # terms left alone as topical nouns and verbs, per item
    if c.content_words == "important":
        for i, ((tokens, terms, _), tag) in enumerate(zip(docs, tags)):
            kept = weighed_terms(tokens, terms, tag, lexicon.antonyms, c.content_min_share)
            topical[i] = len(terms) - len(kept)
            terms[:] = kept
    return docs, topical


def _manner_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                  polarity: str, lexicon: Lexicon) -> list[CausalTerm]:
    """Terms for the manner adverbs of ``polarity`` that no lexicon lists ("well written",
    "superbly-crafted"; see :mod:`~cfaug.editing.manner`), unless negated ("not well written")."""
    taken = {j for t in terms for j in t.phrase}
    return [CausalTerm(head=j, phrase=(j,), kind="word") for j, tok in enumerate(tokens)
            if tok.is_word and j not in taken and not negated_before(tokens, j)
            and manner_polarity(tokens, j, tags, lexicon) == polarity]


def weighed_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                  antonyms: Container[str], min_share: float = 0.0) -> list[CausalTerm]:
    """``content_words=important``: the ``terms`` left after dropping the nouns and verbs (by the Penn
    ``tags``, keyed by token start; :func:`topical_class`) that C does not weigh: those with Eq. 1
    importance at most 0, or under ``min_share`` of the most important term's, unless ``antonyms`` pairs
    them. Other terms (adjectives, adverbs, negations, scores) are all kept."""
    floor = max(0.0, min_share * max((t.importance for t in terms), default=0.0))
    return [t for t in terms if t.kind != "word" or t.importance > floor or tokens[t.head].lower in antonyms
            or not topical_class(tokens[t.head].text, tags.get(tokens[t.head].start, ""))]
