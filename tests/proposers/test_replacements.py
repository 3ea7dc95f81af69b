"""Replacement proposers: the offline lexicon ranker and a masked LM loaded by local path."""

from collections import Counter

import pytest

from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.proposers.replacements import LexiconProposer, MaskedLMProposer, ReplacementRequest, Weights
from cfaug.editing.text import tokenize


@pytest.fixture(scope="module")
def lex():
    return load_lexicon()


@pytest.fixture(scope="module")
def bigram(sentiment_tsv):
    import csv

    with open(sentiment_tsv, encoding="utf-8", newline="") as fh:
        texts = [r["Text"] for r in csv.DictReader(fh, delimiter="\t")]
    return BigramModel().fit([t.lower for t in tokenize(x) if t.is_word] for x in texts)


def names(cands):
    return [c for c, _ in cands]


def test_without_an_encoder_only_antonyms_and_mined_pairs_are_proposed(lex, bigram):
    p = LexiconProposer(lex, bigram, None, {"dull": Counter({"lively": 1})}, Weights(antonym=1.5, pairs=1.0))
    assert p.priors("good", "negative") == [("bad", 1.5)]
    dull = p.priors("dull", "positive")
    assert set(names(dull[:-1])) == {a for a in lex.antonyms["dull"] if lex.polarity(a) == "positive"}
    assert dull[-1] == ("lively", 1.0)


def test_antonyms_rank_above_words_that_are_only_similar(lex, bigram, sentence_encoder):
    p = LexiconProposer(lex, bigram, sentence_encoder, {}, Weights())
    ranked = names(p.priors("boring", "positive"))
    antonyms = [a for a in lex.antonyms["boring"] if lex.polarity(a) == "positive"]
    assert len(antonyms) >= 3 and set(ranked[:len(antonyms)]) == set(antonyms)
    assert len(ranked) > len(antonyms)  # similar positive words follow
    # only words of the target polarity: not "like", which the lexicon lists but treats as neutral
    assert all(lex.polarity(w) == "positive" for w in ranked) and "boring" not in ranked


def test_mined_pairs_lift_a_word_by_how_often_it_was_seen(lex, bigram, sentence_encoder):
    plain = names(LexiconProposer(lex, bigram, sentence_encoder, {}, Weights()).priors("boring", "positive"))
    mined = Counter({"stunning": 1, "thrilling": 3})
    w = Weights(embedding=1.0, antonym=1.5, pairs=1.0)
    with_pairs = names(LexiconProposer(lex, bigram, sentence_encoder, {"boring": mined}, w).priors("boring", "positive"))
    assert "thrilling" not in plain and "stunning" not in plain  # not in the corpus, not antonyms
    assert with_pairs.index("thrilling") < with_pairs.index("stunning") < 8


def test_context_fit_reorders_candidates(lex):
    corpus = BigramModel().fit([["a", "fascinating", "film"]] * 20)
    p = LexiconProposer(lex, corpus, None, {}, Weights(antonym=1.0, lm=5.0))
    req = ReplacementRequest("boring", "a", "film", "positive")
    (scored,) = p.propose([req])
    by_word = dict(scored)
    assert by_word["fascinating"] == pytest.approx(1.0)  # antonym bonus and the best fit: no penalty
    assert max(scored, key=lambda c: c[1])[0] == "fascinating"
    assert all(s < 1.0 - 1e-6 for w, s in scored if w != "fascinating")
    flat = LexiconProposer(lex, corpus, None, {}, Weights(antonym=1.0, lm=0.0)).propose([req])[0]
    assert {s for _, s in flat} == {1.0}  # without the context model every antonym ties


def test_masked_lm_by_local_path(tiny_mlm_dir, lex):
    p = MaskedLMProposer(tiny_mlm_dir, lex, device="cpu", lm_weight=0.1)
    assert p.name == f"mlm:{tiny_mlm_dir.name}"
    to_neg = ReplacementRequest("great", "a", "film", "negative", "a [MASK] film .")
    to_pos = ReplacementRequest("dull", "a", "film", "positive", "a [MASK] film .")
    own = ReplacementRequest("great", "a", "film", "positive", "a [MASK] film .")
    no_mask = ReplacementRequest("great", "a", "film", "negative", "a film .")
    neg, pos, own_word, none = p.propose([to_neg, to_pos, own, no_mask])
    # the model's top words are great > awful > terrible (output biases 30, 20, 10)
    assert names(neg)[:2] == ["awful", "terrible"] and neg[0][1] == 0.0
    assert neg[1][1] == pytest.approx(-1.0, abs=0.05)  # 0.1 x the log-probability gap of about 10
    assert names(pos)[0] == "great"
    assert "great" not in names(own_word)  # never proposes the word it replaces
    assert none == []
    for cands, pol in ((neg, "negative"), (pos, "positive"), (own_word, "positive")):
        assert all(lex.polarity(w) == pol for w in names(cands))


def test_masked_lm_refuses_hub_names(lex):
    from cfaug.local_models import ModelPathError

    with pytest.raises(ModelPathError, match="'distilroberta-base' is not a local folder"):
        MaskedLMProposer("distilroberta-base", lex)


def test_an_unattested_comparative_is_never_proposed():
    from cfaug.proposers.replacements import fit_word_class

    req = ReplacementRequest(word="worse", left="and", right="and", target_polarity="positive",
                             masked_sentence="", tag="JJR")
    out = fit_word_class([("hilarious", 1.0), ("good", 0.5)], req)
    assert "hilariouser" not in names(out)
    assert out == [("better", 0.5)]


@pytest.mark.parametrize("a,b,expected", [
    ("considerate", "inconsiderate", True),
    ("friendly", "unfriendly", True),
    ("honest", "dishonest", True),
    ("unfriendly", "friendly", True),         # either order
    ("Considerate", "INCONSIDERATE", True),   # any case
    ("functional", "nonfunctional", True),
    ("possible", "impossible", True),
    ("legal", "illegal", True),
    ("in", "inin", False),                    # the stem is under four letters
    ("act", "inact", False),
    ("kind", "king", False),
    ("friendly", "friendly", False),
    ("happy", "unhappily", False),            # a prefix and another suffix
])
def test_prefix_antonyms(a, b, expected):
    from cfaug.proposers.replacements import prefix_antonyms

    assert prefix_antonyms(a, b) is expected


def test_a_prefix_antonym_the_texts_never_used_is_still_proposed(lex):
    # a bigram model of texts that say "unfortunately" and never "fortunately"
    small = BigramModel().fit([["unfortunately", "it", "was", "bad"], ["unfortunately", "it", "was", "bad"]])
    assert small.count("fortunately") == 0 and lex.polarity("fortunately") == "positive"
    p = LexiconProposer(lex, small, None, {}, Weights(antonym=1.5))
    assert ("fortunately", 1.5) in p.priors("unfortunately", "positive")
    assert "unfortunately" not in names(p.priors("fortunately", "positive"))  # only the target polarity
