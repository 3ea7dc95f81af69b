import math

import pytest

from cfaug.editing.ngram import BigramModel


def test_bigram_probabilities_by_hand():
    lm = BigramModel(k=0.1).fit([["a", "good", "film"], ["a", "bad", "film"], ["a", "good", "plot"]])
    # unigrams: <s> 3, a 3, good 2, bad 1, film 2, plot 1, </s> 3 -> 7 types, vocab_size 8
    assert lm.vocab_size == 8 and lm.count("good") == 2 and lm.count("awful") == 0
    assert lm.logp("good", "a") == pytest.approx(math.log((2 + 0.1) / (3 + 0.8)))
    assert lm.logp("awful", "a") == pytest.approx(math.log(0.1 / 3.8))
    both = lm.logp("good", "a") + lm.logp("film", "good")
    assert lm.context_logp("good", "a", "film") == pytest.approx(both)
    assert lm.context_logp("good", "a", "film") > lm.context_logp("bad", "a", "film")
