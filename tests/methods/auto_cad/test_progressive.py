"""The seed paper's sequential edits: REP-CT on the text as edited so far, chosen by Eq. 1, and the synonym
step; and Eq. 1's contexts redrawn from a language model."""

from __future__ import annotations

import numpy as np

from cfaug.methods.auto_cad.causal_terms import CausalTerm, resampled_contexts
from cfaug.editing.ngram import BigramModel
from cfaug.methods.auto_cad.progressive import (ContextSampler, EditedText, replace_in_order,
                                                substitute_synonyms)
from cfaug.proposers.replacements import NEUTRAL
from cfaug.editing.text import Edit, tokenize

POSITIVE = {"great", "good", "fine", "movie"}  # "movie" plays a spurious positive word
NEGATIVE = {"awful", "bad", "dull"}


def toy_proba(texts):
    """Columns (negative, positive): each positive word adds 1 to the positive score, each negative 1 to
    the negative score."""
    out = []
    for t in texts:
        words = t.lower().split()
        pos, neg = sum(w in POSITIVE for w in words), sum(w in NEGATIVE for w in words)
        p = 1.0 / (1.0 + np.exp(-(pos - neg)))
        out.append([1.0 - p, p])
    return np.array(out)


class RecordingProposer:
    """Proposes fixed words for every slot and keeps the requests it saw."""

    name = "recording"

    def __init__(self, words):
        self.words, self.requests = words, []

    def propose(self, requests):
        self.requests += list(requests)
        return [[(w, 0.0) for w in self.words[r.target_polarity]] for r in requests]


def doc_of(text):
    return EditedText(text, tokenize(text))


def word_term(tokens, word, importance):
    i = next(j for j, t in enumerate(tokens) if t.lower == word)
    return CausalTerm(head=i, phrase=(i,), kind="word", importance=importance)


def test_rep_ct_edits_each_term_on_the_sentence_as_edited_so_far_and_picks_by_eq1():
    doc = doc_of("A great and good film.")
    terms = [word_term(doc.tokens, "good", 0.9), word_term(doc.tokens, "great", 0.5)]
    proposer = RecordingProposer({"negative": ["fine", "dull"]})  # "fine" is positive: Eq. 1 rejects it
    notes = replace_in_order([doc], [terms], ["negative"], [0], [{}], proposer, toy_proba,
                             ContextSampler("drop", samples=0), [np.random.default_rng(0)],
                             removal=lambda d, t: Edit(0, 0, "", "", "remove"),
                             fit_article=lambda d, h, e: e)
    masked = [r.masked_sentence for r in proposer.requests]
    # "good" first (more important), then "great" masked in the sentence that already has "dull"
    assert masked == ["A great and [MASK] film .", "A [MASK] and dull film ."]
    assert doc.current() == "A dull and dull film."
    assert [n["new"] for n in notes[0]] == ["dull", "dull"] and all(n["eq1"] > 0 for n in notes[0])


def test_rep_ct_leaves_a_term_without_candidates_alone():
    doc = doc_of("A great film.")
    notes = replace_in_order([doc], [[word_term(doc.tokens, "great", 1.0)]], ["negative"], [0], [{}],
                             RecordingProposer({"negative": []}), toy_proba, ContextSampler("drop", 0),
                             [np.random.default_rng(0)], removal=None, fit_article=lambda d, h, e: e)
    assert doc.current() == "A great film." and notes == [[{"term": "great", "candidates": 0}]]


def test_synonyms_replace_words_supporting_the_source_until_the_classifier_flips():
    # after REP-CT ("great" -> "awful") the spurious "movie" x2 still keeps it positive
    doc = doc_of("An awful movie and a movie here")
    proposer = RecordingProposer({NEUTRAL: ["film", "thing"]})
    seen = []

    def similarity(words, cands):
        seen.extend(zip(words, cands))
        return np.array([0.9 if c == "film" else 0.1 for c in cands])

    flipped = lambda row, col: int(np.argmax(row)) == col  # noqa: E731
    added = substitute_synonyms([doc], [1], [0], proposer, toy_proba, similarity,
                                skip=lambda w: w in (POSITIVE | NEGATIVE) - {"movie"}, max_words=5,
                                min_similarity=0.5, flipped=flipped)
    # toy: awful (-1) + movie + movie (+2) -> positive; one synonym makes it a tie (p=0.5, argmax negative)
    assert [e.new for e in added[0]] == ["film"] and doc.current().count("film") == 1
    assert all(r.target_polarity == NEUTRAL for r in proposer.requests)
    assert ("movie", "thing") in seen  # proposed but too far from the word: never used
    assert "thing" not in doc.current()


def test_synonyms_leave_already_flipped_texts_alone():
    doc = doc_of("An awful film.")
    proposer = RecordingProposer({NEUTRAL: ["movie"]})
    added = substitute_synonyms([doc], [1], [0], proposer, toy_proba, lambda a, b: np.ones(len(a)),
                                skip=lambda w: False, max_words=5, min_similarity=0.5,
                                flipped=lambda row, col: int(np.argmax(row)) == col)
    assert added == [[]] and proposer.requests == []


def test_resampled_contexts_redraw_only_the_window_and_keep_the_phrase():
    lm = BigramModel().fit([["the", "cast", "was", "fine"], ["a", "plot", "was", "dull"]])
    words = "w0 w1 w2 w3 good w5 w6 w7".split()
    ctx = resampled_contexts(words, [4], samples=5, window=2, lm=lm, rng=np.random.default_rng(3))
    assert ctx[0] == (" ".join(words), " ".join(words[:4] + words[5:]))
    for with_p, without_p in ctx[1:]:
        w = with_p.split()
        assert len(w) == 8 and w[4] == "good" and w[:2] == ["w0", "w1"] and w[7] == "w7"
        assert set(w[2:4] + w[5:7]) <= set(lm.unigrams) - {"<s>", "</s>"}
        assert without_p.split() == w[:4] + w[5:]
    again = resampled_contexts(words, [4], samples=5, window=2, lm=lm, rng=np.random.default_rng(3))
    assert again == ctx


def test_bigram_sampling_follows_the_counts():
    lm = BigramModel().fit([["a", "b"]] * 9 + [["a", "c"]])
    rng = np.random.default_rng(0)
    draws = [lm.sample("a", rng) for _ in range(2000)]
    assert set(draws) == {"b", "c"} and 0.85 < draws.count("b") / 2000 < 0.95
    assert lm.sample("never-seen", rng) in {"a", "b", "c"}  # unigram fallback, no sentence bounds
