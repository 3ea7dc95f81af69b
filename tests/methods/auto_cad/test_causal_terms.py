"""Candidate causal terms and their importance (Eq. 1) against toy classifiers computed by hand."""

import numpy as np
import pytest

from cfaug.methods.auto_cad.causal_terms import CausalTerm, build_contexts, find_candidates, score_terms
from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.text import tokenize


@pytest.fixture(scope="module")
def lex():
    return load_lexicon()


def described(text, lex, polarity, bare=False):
    toks = tokenize(text)
    return [(t.kind, " ".join(toks[i].text for i in t.phrase), toks[t.head].text)
            for t in find_candidates(toks, lex, polarity, bare_negations=bare)]


def test_opinion_words_of_the_labels_polarity(lex):
    assert described("A great cast, but a boring plot.", lex, "positive") == [("word", "great", "great")]
    assert described("A great cast, but a boring plot.", lex, "negative") == [("word", "boring", "boring")]


def test_a_negated_opposite_word_is_a_negation_phrase(lex):
    # "not boring" carries the positive label; "boring" itself is not a candidate
    assert described("It is not boring at all.", lex, "positive") == [("negation", "not boring", "not")]
    assert described("It isn't good.", lex, "negative") == [("negation", "n't good", "n't")]


def test_a_negated_word_of_the_labels_polarity_is_skipped(lex):
    # in a positive text "not bad" is a candidate, "not good" (a negative phrase) and "good" are not
    assert described("Not good, but not bad either.", lex, "positive") == [("negation", "not bad", "not")]


def test_a_bare_negation_is_a_candidate_only_when_asked(lex):
    # removing "not" from "I have not read the book" changes a fact, not the sentiment
    assert described("I have not read the book.", lex, "negative") == []
    assert described("I never watched the film again.", lex, "negative", bare=True) == [
        ("negation", "never watched the film", "never")]


def test_negation_scope_stops_at_the_sentence_end(lex):
    assert described("We did not. Great fun.", lex, "positive", bare=True) == [
        ("negation", "not", "not"), ("word", "Great", "Great"), ("word", "fun", "fun")]
    assert described("We did not. Great fun.", lex, "positive") == [("word", "Great", "Great"), ("word", "fun", "fun")]


def test_contexts_stay_in_the_terms_sentence_and_always_keep_the_phrase():
    toks = tokenize("Dull start. A great and good film with a fine cast.")
    term = CausalTerm(head=4, phrase=(4,), kind="word")  # "great"
    ctx = build_contexts(toks, term, samples=6, keep=0.5, rng=np.random.default_rng(0))
    assert len(ctx) == 7
    assert ctx[0] == ("A great and good film with a fine cast .", "A and good film with a fine cast .")
    for with_p, without_p in ctx:
        assert "great" in with_p.split() and "Dull" not in with_p
        assert without_p.split() == [w for w in with_p.split() if w != "great"]
    again = build_contexts(toks, term, samples=6, keep=0.5, rng=np.random.default_rng(0))
    assert again == ctx
    assert len({c for c, _ in ctx}) > 1  # sampled contexts differ from one another


def multiplicative(texts):
    """P(positive) = 0.1 * 3^[great] * 2^[good]; removing "great" drops it by 2/3 in any context."""
    out = []
    for t in texts:
        w = t.split()
        p = 0.1 * (3 if "great" in w else 1) * (2 if "good" in w else 1)
        out.append([1 - p, p])
    return np.array(out)


def test_importance_is_the_relative_drop_of_the_label_probability():
    toks = tokenize("A great and good film.")
    terms = [CausalTerm(head=1, phrase=(1,), kind="word"), CausalTerm(head=3, phrase=(3,), kind="word")]
    rng = np.random.default_rng(1)
    for t in terms:
        t.contexts = build_contexts(toks, t, samples=5, keep=0.5, rng=rng)
    score_terms([(toks, terms, 1)], multiplicative)
    assert terms[0].importance == pytest.approx(2 / 3)
    assert terms[1].importance == pytest.approx(1 / 2)
    # for the negative label the same removals raise the probability: negative importance
    # P(neg) full = 1 - 0.6 = 0.4, without great = 1 - 0.2 = 0.8 -> (0.4 - 0.8) / 0.4 = -1
    terms[0].contexts = build_contexts(toks, terms[0], samples=0, keep=1.0, rng=rng)
    score_terms([(toks, terms[:1], 0)], multiplicative)
    assert terms[0].importance == pytest.approx(-1.0)
    assert terms[0].describe(toks) == {"term": "great", "kind": "word", "importance": -1.0}


def test_every_perturbation_of_a_batch_is_scored_in_one_call():
    calls = []

    def counting(texts):
        calls.append(list(texts))
        return multiplicative(texts)

    docs = []
    for text in ("A great film.", "A good and great plot.", "Nothing here."):
        toks = tokenize(text)
        terms = [CausalTerm(head=i, phrase=(i,), kind="word") for i, t in enumerate(toks) if t.lower in ("great", "good")]
        for t in terms:
            t.contexts = build_contexts(toks, t, samples=0, keep=1.0, rng=np.random.default_rng(0))
        docs.append((toks, terms, 1))
    score_terms(docs, counting)
    assert len(calls) == 1 and len(calls[0]) == len(set(calls[0])) == 5
    assert [round(t.importance, 4) for t in docs[1][1]] == [0.5, round(2 / 3, 4)]
    score_terms([(tokenize("x"), [], 1)], counting)
    assert len(calls) == 1  # nothing to score: no call
